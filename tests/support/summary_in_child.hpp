// One simulation in a forked child process (its own SimGrid engine: one per process), so that one
// TEST can compare several runs. Failures are reported to gtest.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <nlohmann/json.hpp>
#include <string>

#include "sim/report/report.hpp"
#include "sim/run/simulation.hpp"
#include "sim/scenario/scenario.hpp"

namespace dnnsim::testing {

// make_summary of run_scenario on the scenario file `path`, simulated in a child process (its own
// SimGrid engine), so that one TEST can compare several runs. Null on failure (reported).
inline nlohmann::ordered_json summary_in_child(const std::string& path) {
  int channel[2];
  if (::pipe(channel) != 0) {
    ADD_FAILURE() << "pipe failed";
    return nullptr;
  }
  const pid_t child = ::fork();
  if (child == 0) {
    ::close(channel[0]);
    std::string text;
    int code = 0;
    try {
      const Scenario scenario = load_scenario(path);
      text = make_summary(scenario, run_scenario(scenario, {})).dump();
    } catch (const std::exception& e) {
      text = e.what();
      code = 1;
    }
    for (std::size_t written = 0; written < text.size();) {
      const ssize_t n = ::write(channel[1], text.data() + written, text.size() - written);
      if (n <= 0) ::_exit(2);
      written += static_cast<std::size_t>(n);
    }
    ::_exit(code);  // no atexit handlers, no gtest teardown in the child
  }
  ::close(channel[1]);
  std::string text;
  char buffer[65536];
  for (ssize_t n; (n = ::read(channel[0], buffer, sizeof buffer)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    text.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(channel[0]);
  int status = 0;
  ::waitpid(child, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    ADD_FAILURE() << "the child simulating " << path << " failed: " << text;
    return nullptr;
  }
  return nlohmann::ordered_json::parse(text);
}

}  // namespace dnnsim::testing
