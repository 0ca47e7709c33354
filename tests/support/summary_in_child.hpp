// One simulation in a forked child process (its own SimGrid engine: one per process), so that one
// TEST can compare several runs. Failures are reported to gtest.
#pragma once

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "sim/process/child_process.hpp"
#include "sim/report/report.hpp"
#include "sim/run/simulation.hpp"
#include "sim/scenario/scenario.hpp"

namespace dnnsim::testing {

// make_summary of run_scenario on the scenario file `path`, simulated in a child process (its own
// SimGrid engine), so that one TEST can compare several runs. Null on failure (reported).
inline nlohmann::ordered_json summary_in_child(const std::string& path) {
  const ChildResult run = ChildProcess::run_function([&] {
                            const Scenario scenario = load_scenario(path);
                            return make_summary(scenario, run_scenario(scenario, {})).dump();
                          }).wait();
  if (run.exit.how != ChildExit::How::exited || run.exit.code != 0) {
    ADD_FAILURE() << "the child simulating " << path << " failed: " << run.output;
    return nullptr;
  }
  return nlohmann::ordered_json::parse(run.output);
}

}  // namespace dnnsim::testing
