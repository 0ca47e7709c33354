// A main() for the fuzz targets when they are built without libFuzzer (the g++ dev and release builds).
//   fuzz_TARGET FILE|DIR...                     every file given, or under the folders given, run once
//   fuzz_TARGET --mutate N [--seed S] FILE|DIR...       then N inputs mutated from those files
//   fuzz_TARGET --mutate N [--seed S] --only I FILE|DIR...    mutated input I alone (reproduces it;
//                                                 also written to CRASH_DIR/smoke-input-TARGET-I)
//   --max-seconds T   stop mutating after T s      --timeout T   an input running over T s fails
//   --crash-dir DIR   where a failing mutated input is written (default: the working directory)
// ctest replays the seeds and every past crasher (fuzz.replay.TARGET) and runs the CI smoke
// (fuzz.smoke.TARGET, mutator.hpp) under the dev build's sanitizers (docs/testing.md).
//
// When an input fails (a sanitizer report, an exception other than InputError escaping the target,
// an abort, a time-out), the process dies; before it does, the handlers below write the mutated input
// to CRASH_DIR/smoke-crash-TARGET-I and print the commands that reproduce it. The handlers may run in
// a signal or in a sanitizer's report, so everything they print is prepared before each input runs
// and they use only write(2) and open(2). ASan calls the death callback; g++'s UBSan is a runtime of
// its own that does not, and by default only prints and goes on: ctest runs the targets with
// UBSAN_OPTIONS=halt_on_error=1:abort_on_error=1, which turns its report into an abort (SIGABRT here).
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "tests/fuzz/mutator.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);
// Weak: the release build has no sanitizer runtime, and then this is null.
extern "C" void __sanitizer_set_death_callback(void (*callback)()) __attribute__((weak));

namespace {

// The input being run and what to say if it kills the process.
struct Running {
  const std::string* bytes = nullptr;
  std::string crash_file;  // empty for a replayed file (it is on disk already)
  std::string message;     // which input, and how to reproduce it
} running;

std::atomic<bool> reported{false};

void write_all(int fd, const char* data, std::size_t size) {
  while (size > 0) {
    const ssize_t written = ::write(fd, data, size);
    if (written <= 0) return;
    data += written;
    size -= static_cast<std::size_t>(written);
  }
}
void say(const char* text) { write_all(STDERR_FILENO, text, std::strlen(text)); }

void report(const char* reason, const char* detail = "") {
  if (running.bytes == nullptr || reported.exchange(true)) return;
  say("\nfuzz: ");
  say(reason);
  say(detail);
  if (!running.crash_file.empty()) {
    const int fd = ::open(running.crash_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      write_all(fd, running.bytes->data(), running.bytes->size());
      ::close(fd);
    }
  }
  say(running.message.c_str());
}

void on_sanitizer_death() { report("the sanitizer report above"); }

void on_terminate() {
  if (const std::exception_ptr escaped = std::current_exception()) {
    try {
      std::rethrow_exception(escaped);
    } catch (const std::exception& e) {
      report("an exception escaped the target: ", e.what());
    } catch (...) {
      report("an exception escaped the target");
    }
  }
  report("std::terminate");
  std::abort();
}

void on_signal(int signal) {
  switch (signal) {
    case SIGALRM:
      report("the input ran over --timeout");
      ::_exit(1);
    case SIGABRT:
      report("abort (after the UBSan report above, if there is one)");
      break;
    case SIGSEGV:
      report("SIGSEGV");
      break;
    case SIGBUS:
      report("SIGBUS");
      break;
    case SIGFPE:
      report("SIGFPE");
      break;
    default:
      report("SIGILL");
      break;
  }
  std::raise(signal);  // SA_RESETHAND restored the default action: die of it
}

void install_handlers() {
  std::set_terminate(on_terminate);
  std::vector<int> signals{SIGABRT, SIGALRM};
  if (__sanitizer_set_death_callback != nullptr) {
    __sanitizer_set_death_callback(on_sanitizer_death);
  } else {  // without a sanitizer nobody else reports these
    signals.insert(signals.end(), {SIGSEGV, SIGBUS, SIGFPE, SIGILL});
  }
  struct sigaction action {};
  action.sa_handler = on_signal;
  action.sa_flags = SA_RESETHAND;
  for (const int signal : signals) sigaction(signal, &action, nullptr);
}

void run(const std::string& bytes, unsigned timeout_seconds) {
  running.bytes = &bytes;
  ::alarm(timeout_seconds);
  LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
  ::alarm(0);
  running.bytes = nullptr;  // a report after this one (LeakSanitizer's at exit) is no input's
}

int usage() {
  std::fputs(
      "usage: fuzz_TARGET [--mutate N [--seed S] [--only I] [--max-seconds T]] [--timeout T]\n"
      "                   [--crash-dir DIR] FILE|DIR...\n",
      stderr);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::uint64_t mutations = 0, seed = 1, only = UINT64_MAX;
  double max_seconds = 0;
  unsigned timeout = 0;
  std::string crash_dir = std::filesystem::current_path().string();
  std::vector<std::filesystem::path> files;
  std::string arguments = argv[0];  // the command line again, for the reproduction hint
  for (int i = 1; i < argc; ++i) {
    const int first = i;
    const std::string arg = argv[i];
    const bool option = arg.rfind("--", 0) == 0;
    if (option && i + 1 == argc) return usage();
    try {
      if (arg == "--mutate")
        mutations = std::stoull(argv[++i]);
      else if (arg == "--seed")
        seed = std::stoull(argv[++i]);
      else if (arg == "--only")
        only = std::stoull(argv[++i]);
      else if (arg == "--max-seconds")
        max_seconds = std::stod(argv[++i]);
      else if (arg == "--timeout")
        timeout = static_cast<unsigned>(std::stoul(argv[++i]));
      else if (arg == "--crash-dir")
        crash_dir = std::filesystem::absolute(argv[++i]).string();
      else if (option)
        return usage();
      else if (std::filesystem::is_directory(arg)) {
        for (const auto& entry : std::filesystem::recursive_directory_iterator(arg))
          if (entry.is_regular_file()) files.push_back(entry.path());
      } else {
        files.push_back(arg);
      }
    } catch (const std::logic_error&) {  // std::stoull's invalid_argument and out_of_range
      return usage();
    }
    if (arg != "--only")
      for (int j = first; j <= i; ++j) arguments += " " + std::string(argv[j]);
  }
  if (only != UINT64_MAX && only >= mutations) return usage();
  std::sort(files.begin(), files.end());
  std::vector<std::string> inputs;
  for (const auto& file : files) {
    std::ifstream in(file, std::ios::binary);
    inputs.emplace_back(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  install_handlers();

  if (only == UINT64_MAX) {
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      running.message =
          " while running " + files[i].string() + "\nreproduce: " + argv[0] + " " + files[i].string() + "\n";
      run(inputs[i], timeout);
    }
    std::printf("replayed %zu inputs\n", inputs.size());
  }
  if (mutations == 0) return 0;

  std::string target = std::filesystem::path(argv[0]).filename().string();
  if (target.rfind("fuzz_", 0) == 0) target.erase(0, 5);
  const dnnsim::fuzz::Mutator mutator(inputs, seed);
  using Clock = std::chrono::steady_clock;
  const Clock::time_point start = Clock::now();
  double slowest = 0;
  std::uint64_t slowest_index = 0, done = 0;
  for (std::uint64_t index = only == UINT64_MAX ? 0 : only; index < mutations; ++index) {
    const std::string bytes = mutator.input(index);
    running.crash_file = crash_dir + "/smoke-crash-" + target + "-" + std::to_string(index);
    running.message = " in mutated input " + std::to_string(index) + " (--seed " + std::to_string(seed) +
                      "), written to " + running.crash_file + "\nreproduce: " + argv[0] + " " + running.crash_file +
                      "\n       or: " + arguments + " --only " + std::to_string(index) + "\n";
    if (only != UINT64_MAX) {  // kept to look at, or to check in as a crasher
      const std::string kept = crash_dir + "/smoke-input-" + target + "-" + std::to_string(index);
      std::ofstream(kept, std::ios::binary) << bytes;
      std::printf("input %llu written to %s\n", static_cast<unsigned long long>(index), kept.c_str());
    }
    const Clock::time_point begin = Clock::now();
    run(bytes, timeout);
    const double seconds = std::chrono::duration<double>(Clock::now() - begin).count();
    if (seconds > slowest) slowest = seconds, slowest_index = index;
    ++done;
    if (only != UINT64_MAX) break;
    if (max_seconds > 0 && std::chrono::duration<double>(Clock::now() - start).count() > max_seconds) break;
  }
  const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  std::printf("mutated %llu of %llu inputs (--seed %llu) in %.1f s, %.0f/s; slowest: input %llu, %.3f s\n",
              static_cast<unsigned long long>(done), static_cast<unsigned long long>(mutations),
              static_cast<unsigned long long>(seed), elapsed, elapsed > 0 ? static_cast<double>(done) / elapsed : 0.0,
              static_cast<unsigned long long>(slowest_index), slowest);
  return 0;
}
