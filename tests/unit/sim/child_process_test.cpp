// The one child-process helper (sim/process/child_process.hpp): a function's result through a pipe,
// a program's input fed and its output captured or written to files, a failed exec reported, and a
// child never left behind.
#include "sim/process/child_process.hpp"

#include <gtest/gtest.h>
#include <signal.h>

#include <cerrno>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

#include "tests/support/temp_files.hpp"

namespace dnnsim {
namespace {

ChildResult run_shell(const std::string& script, const std::string& input = {}) {
  ProgramCommand command;
  command.argv = {"sh", "-c", script};
  command.search_path = true;
  command.input = input;
  return ChildProcess::start(command).wait();
}

TEST(ChildProcess, FunctionResultComesBackWithExitZero) {
  const ChildResult run = ChildProcess::run_function([] { return std::string("a\0b", 3); }).wait();
  EXPECT_EQ(run.exit.how, ChildExit::How::exited);
  EXPECT_EQ(run.exit.code, 0);
  EXPECT_EQ(run.output, std::string("a\0b", 3));  // bytes, not text
}

TEST(ChildProcess, FunctionThatThrowsExitsWithOneAndItsMessage) {
  const ChildResult run = ChildProcess::run_function([]() -> std::string { throw std::runtime_error("boom"); }).wait();
  EXPECT_EQ(run.exit.code, 1);
  EXPECT_EQ(run.output, "boom");
}

TEST(ChildProcess, InputIsFedAndBothStreamsAreCaptured) {
  // 200 kB of input is more than a pipe or socket buffer holds: feeding and reading must interleave.
  const std::string input(200'000, 'x');
  const ChildResult run = run_shell("wc -c; echo err >&2; exit 3", input);
  EXPECT_EQ(run.exit.how, ChildExit::How::exited);
  EXPECT_EQ(run.exit.code, 3);
  EXPECT_EQ(shell_status(run.exit), 3);
  EXPECT_EQ(run.output, "200000\nerr\n");
  EXPECT_GT(run.peak_rss_kib, 0);
}

TEST(ChildProcess, AChildThatStopsReadingDoesNotKillTheParent) {
  // The shell exits without reading: writing the rest fails with EPIPE, not SIGPIPE.
  const ChildResult run = run_shell("exit 0", std::string(1 << 20, 'y'));
  EXPECT_EQ(run.exit.code, 0);
}

TEST(ChildProcess, SignalAndShellStatus) {
  const ChildResult run = run_shell("kill -TERM $$");
  EXPECT_EQ(run.exit.how, ChildExit::How::killed_by_signal);
  EXPECT_EQ(run.exit.code, SIGTERM);
  EXPECT_EQ(shell_status(run.exit), 128 + SIGTERM);
}

TEST(ChildProcess, FailedExecIsReportedWithItsErrno) {
  ProgramCommand command;
  command.argv = {"dnnsim-no-such-program"};
  command.search_path = true;
  const ChildResult run = ChildProcess::start(command).wait();
  EXPECT_EQ(run.exec_error, ENOENT);
  EXPECT_EQ(run.exit.code, 127);
  EXPECT_EQ(run.output, "error: cannot execute dnnsim-no-such-program\n");
}

TEST(ChildProcess, OnePathForBothStreamsIsOneFile) {
  const std::string log = (testing::test_dir() / "both.log").string();
  ProgramCommand command;
  command.argv = {"/bin/sh", "-c", "echo out; echo err >&2; echo out2"};
  command.stdout_path = log;
  command.stderr_path = log;
  const ChildResult run = ChildProcess::start(command).wait();
  EXPECT_EQ(run.exit.code, 0);
  EXPECT_EQ(run.output, "");
  std::ifstream in(log);
  std::ostringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), "out\nerr\nout2\n");
}

TEST(ChildProcess, DestroyingAChildNotWaitedForKillsIt) {
  pid_t pid = -1;
  {
    ProgramCommand command;
    command.argv = {"/bin/sleep", "100"};
    command.own_process_group = true;
    ChildProcess child = ChildProcess::start(command);
    pid = child.pid();
    EXPECT_FALSE(child.poll().has_value());
  }
  EXPECT_NE(::kill(pid, 0), 0);  // killed and reaped: no such process
  EXPECT_EQ(errno, ESRCH);
}

}  // namespace
}  // namespace dnnsim
