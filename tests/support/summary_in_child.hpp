// One simulation in a forked child process (its own SimGrid engine: one per process), so that one
// TEST can compare several runs. Failures are reported to gtest.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <initializer_list>
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

// A run that mirrors ranks or replicas (`mirrored`) against the run that simulates them all (`full`):
// each of the first `iterations` iteration times to 1e-9 relative, the mean of each of `mean_keys` to
// 1e-6, and every link's bytes to 1e-9: a mirrored node's links report its translate's, which carried
// the same (the sums differ in their order only).
inline void expect_mirrored_run_matches(const nlohmann::ordered_json& mirrored, const nlohmann::ordered_json& full,
                                        std::size_t iterations, std::initializer_list<const char*> mean_keys) {
  for (std::size_t k = 0; k < iterations; ++k)
    EXPECT_NEAR(mirrored["iteration_time_s"][k].get<double>(), full["iteration_time_s"][k].get<double>(),
                1e-9 * full["iteration_time_s"][k].get<double>());
  for (const char* key : mean_keys)
    EXPECT_NEAR(mirrored["mean"][key].get<double>(), full["mean"][key].get<double>(),
                1e-6 * std::abs(full["mean"][key].get<double>()))
        << key;
  EXPECT_EQ(mirrored["links"].size(), full["links"].size());
  for (const auto& [name, link] : full["links"].items())
    EXPECT_NEAR(mirrored["links"][name]["bytes"].get<double>(), link["bytes"].get<double>(),
                1e-9 * link["bytes"].get<double>())
        << name;
}

}  // namespace dnnsim::testing
