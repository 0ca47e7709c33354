#include "sim/report/gnuplot.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "sim/process/child_process.hpp"

namespace dnnsim {

std::string gnuplot_string(std::string_view text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '\\' || c == '"') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out + '"';
}

std::string png_terminal(int width, int height, const std::string& output) {
  return fmt::format(
      "if (strstrt(GPVAL_TERMINALS, \"pngcairo\") > 0) {{\n"
      "  set terminal pngcairo noenhanced size {0},{1} font \"sans,10\"\n"
      "}} else {{\n"
      "  set terminal png noenhanced size {0},{1}\n"
      "}}\n"
      "set output {2}\n",
      width, height, gnuplot_string(output));
}

std::string gnuplot_number(double value) { return fmt::format("{:.12g}", value); }

int render_with_gnuplot(const std::string& script, std::string& error, const std::string& program) {
  error.clear();
  ProgramCommand command;
  command.argv = {program};
  command.search_path = true;
  command.input = script;  // gnuplot prints nothing useful on stdout: both streams are its messages
  ChildResult run;
  try {
    run = ChildProcess::start(command).wait();
  } catch (const std::runtime_error& e) {
    error = e.what();
    return 1;
  }
  if (run.exec_error != 0) {
    error = run.exec_error == ENOENT
                ? fmt::format("'{}' not found: install gnuplot (scripts/install-deps installs gnuplot-nox)", program)
                : fmt::format("cannot run '{}': {}", program, std::strerror(run.exec_error));
    return 127;
  }
  if (run.exit.how == ChildExit::How::exited && run.exit.code == 0) return 0;
  std::string& messages = run.output;
  while (!messages.empty() && (messages.back() == '\n' || messages.back() == ' ')) messages.pop_back();
  constexpr std::size_t kMaxMessage = 2000;  // the end of gnuplot's output says what went wrong
  if (messages.size() > kMaxMessage) messages = "…" + messages.substr(messages.size() - kMaxMessage);
  error = run.exit.how == ChildExit::How::exited ? fmt::format("gnuplot exited with status {}", run.exit.code)
                                                 : fmt::format("gnuplot was killed by signal {}", run.exit.code);
  if (!messages.empty()) error += ":\n" + messages;
  const int code = shell_status(run.exit);
  return code == 0 ? 1 : code;
}

}  // namespace dnnsim
