// Slurm job arrays for sweeps: the generated sbatch script line by line, the array size rule, and
// submission through stand-in `sbatch` programs put first on PATH (no Slurm needed). The real
// cluster is exercised by tests/golden/slurm_test.sh.
#include "sim/sweep/slurm.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/scenario_files.hpp"

namespace dnnsim {
namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

bool has_line(const std::string& text, const std::string& line) {
  for (const std::string& l : lines_of(text))
    if (l == line) return true;
  return false;
}

TEST(JobArrayScript, DirectivesAndCommandWithAbsolutePaths) {
  const std::string script =
      make_job_array_script("/opt/dnnsim/bin/dnnsim", "/home/u/sweeps/bw.yaml", "/scratch/u/bw", 4, "", "dnnsim-bw");
  const std::vector<std::string> lines = lines_of(script);
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines.front(), "#!/bin/bash");
  EXPECT_TRUE(has_line(script, "#SBATCH --job-name=dnnsim-bw")) << script;
  EXPECT_TRUE(has_line(script, "#SBATCH --array=0-3")) << script;  // K = 4 tasks: indices 0..3
  EXPECT_TRUE(has_line(script, "#SBATCH --output=/scratch/u/bw/slurm/%A_%a.out")) << script;
  EXPECT_TRUE(has_line(script, "#SBATCH --cpus-per-task=1")) << script;
  EXPECT_EQ(script.find("--partition"), std::string::npos) << "no partition asked for: the cluster's default";
  EXPECT_EQ(lines.back(),
            "exec /opt/dnnsim/bin/dnnsim sweep /home/u/sweeps/bw.yaml --slice ${SLURM_ARRAY_TASK_ID}/4 "
            "--out /scratch/u/bw --jobs 1");
}

// sbatch stops reading #SBATCH lines at the first command, so every directive precedes every
// non-comment line.
TEST(JobArrayScript, DirectivesComeBeforeAnyCommand) {
  const std::string script = make_job_array_script("/bin/dnnsim", "/s.yaml", "/out", 2, "gpu", "dnnsim-s");
  bool command_seen = false;
  for (const std::string& line : lines_of(script)) {
    if (line.rfind("#SBATCH", 0) == 0) {
      EXPECT_FALSE(command_seen) << "directive after a command: " << line;
    }
    if (!line.empty() && line[0] != '#') command_seen = true;
  }
  EXPECT_TRUE(has_line(script, "#SBATCH --partition=gpu")) << script;
  EXPECT_TRUE(has_line(script, "#SBATCH --array=0-1")) << script;
}

TEST(JobArrayScript, SingleTaskArray) {
  const std::string script = make_job_array_script("/bin/dnnsim", "/s.yaml", "/out", 1, "", "j");
  EXPECT_TRUE(has_line(script, "#SBATCH --array=0-0")) << script;
  EXPECT_NE(script.find("--slice ${SLURM_ARRAY_TASK_ID}/1 "), std::string::npos) << script;
}

// A space is double-quoted for sbatch's own splitting of #SBATCH lines (a backslash does not keep a
// space in a value there) and single-quoted for the shell; a '%' in the folder is doubled so that
// Slurm does not take it for a replacement like %A. Checked against sbatch 22.05 by hand.
TEST(JobArrayScript, AwkwardPathsAreEscaped) {
  const std::string script =
      make_job_array_script("/opt/my tools/dnnsim", "/s/it's.yaml", "/runs/100%/a b", 3, "", "dnnsim-x");
  EXPECT_TRUE(has_line(script, "#SBATCH --output=\"/runs/100%%/a b/slurm/%A_%a.out\"")) << script;
  EXPECT_EQ(lines_of(script).back(),
            "exec '/opt/my tools/dnnsim' sweep '/s/it'\\''s.yaml' --slice ${SLURM_ARRAY_TASK_ID}/3 "
            "--out '/runs/100%/a b' --jobs 1");
}

TEST(ShellQuote, PlainWordsUnchangedOthersSingleQuoted) {
  EXPECT_EQ(shell_quote("/opt/dnnsim/bin/dnnsim"), "/opt/dnnsim/bin/dnnsim");
  EXPECT_EQ(shell_quote("a b"), "'a b'");
  EXPECT_EQ(shell_quote("it's"), "'it'\\''s'");
  EXPECT_EQ(shell_quote("$HOME"), "'$HOME'");
  EXPECT_EQ(shell_quote(""), "''");
}

// Default K = min(points, 100); an explicit K is kept unless it exceeds the points (no empty slices).
TEST(JobArraySize, DefaultAndCap) {
  EXPECT_EQ(job_array_size(4, 0), 4);
  EXPECT_EQ(job_array_size(100, 0), 100);
  EXPECT_EQ(job_array_size(2500, 0), kDefaultMaxArraySize);
  EXPECT_EQ(job_array_size(4, 2), 2);
  EXPECT_EQ(job_array_size(4, 9), 4);
  EXPECT_EQ(job_array_size(2500, 300), 300);
}

// Puts `dir` alone on PATH for the duration of one test.
class PathGuard {
 public:
  explicit PathGuard(const std::string& dir) : saved_(std::getenv("PATH") ? std::getenv("PATH") : "") {
    setenv("PATH", dir.c_str(), 1);
  }
  ~PathGuard() { setenv("PATH", saved_.c_str(), 1); }
  PathGuard(const PathGuard&) = delete;
  PathGuard& operator=(const PathGuard&) = delete;

 private:
  std::string saved_;
};

// A stand-in sbatch: a /bin/sh script in this test's folder.
std::string fake_sbatch(const std::string& body) {
  const std::string path = testing::write_file("sbatch", "#!/bin/sh\n" + body + "\n");
  chmod(path.c_str(), 0755);
  return testing::test_dir().string();
}

TEST(SubmitJobArray, ReturnsTheJobIdOfParsableOutput) {
  // --parsable prints "<id>" or "<id>;<cluster>", possibly after warnings.
  const PathGuard path(fake_sbatch(
      R"(test "$1" = --parsable || exit 9
echo "sbatch: warning: something" >&2
echo "1234;dnnsim")"));
  std::string result;
  EXPECT_EQ(submit_job_array("/tmp/job.sbatch", result), 0) << result;
  EXPECT_EQ(result, "1234");
}

TEST(SubmitJobArray, ReportsSbatchFailureWithItsMessage) {
  const PathGuard path(fake_sbatch(R"(echo "sbatch: error: invalid partition specified: gpu" >&2; exit 1)"));
  std::string result;
  EXPECT_NE(submit_job_array("/tmp/job.sbatch", result), 0);
  EXPECT_EQ(result, "sbatch exited with code 1: sbatch: error: invalid partition specified: gpu");
}

TEST(SubmitJobArray, ReportsMissingSbatch) {
  const PathGuard path(testing::test_dir().string());  // an empty folder: no sbatch anywhere on PATH
  std::string result;
  EXPECT_NE(submit_job_array("/tmp/job.sbatch", result), 0);
  EXPECT_NE(result.find("sbatch not found on PATH"), std::string::npos) << result;
}

}  // namespace
}  // namespace dnnsim
