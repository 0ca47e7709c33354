// Runs a simulation in a forked child and returns the numbers it produced: a test comparing two
// simulations needs two engines, and SimGrid allows one per process (simgrid-recipes.md §4). The
// parent must not have created an engine (a child inherits its clock).
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "sim/process/child_process.hpp"

namespace dnnsim::testing {

inline std::vector<double> in_child(const std::function<std::vector<double>()>& simulation) {
  const ChildResult run =
      ChildProcess::run_function([&] {
        const std::vector<double> numbers = simulation();
        return std::string(reinterpret_cast<const char*>(numbers.data()), numbers.size() * sizeof(double));
      }).wait();
  EXPECT_TRUE(run.exit.how == ChildExit::How::exited && run.exit.code == 0) << "the simulation child failed";
  std::vector<double> numbers(run.output.size() / sizeof(double));
  std::memcpy(numbers.data(), run.output.data(), numbers.size() * sizeof(double));
  return numbers;
}

}  // namespace dnnsim::testing
