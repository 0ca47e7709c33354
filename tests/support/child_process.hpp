// Runs a simulation in a forked child and returns the numbers it produced: a test comparing two
// simulations needs two engines, and SimGrid allows one per process (simgrid-recipes.md §4). The
// parent must not have created an engine (a child inherits its clock).
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <functional>
#include <stdexcept>
#include <vector>

namespace dnnsim::testing {

inline std::vector<double> in_child(const std::function<std::vector<double>()>& simulation) {
  int fds[2];
  if (::pipe(fds) != 0) throw std::runtime_error("pipe failed");
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    const std::vector<double> numbers = simulation();
    const auto bytes = static_cast<ssize_t>(numbers.size() * sizeof(double));
    const int status = ::write(fds[1], numbers.data(), static_cast<std::size_t>(bytes)) == bytes ? 0 : 1;
    ::close(fds[1]);
    ::_exit(status);
  }
  ::close(fds[1]);
  std::vector<double> numbers;
  double value = 0;
  while (::read(fds[0], &value, sizeof value) == static_cast<ssize_t>(sizeof value)) numbers.push_back(value);
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the simulation child failed";
  return numbers;
}

}  // namespace dnnsim::testing
