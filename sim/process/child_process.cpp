// Child processes (see child_process.hpp).
#include "sim/process/child_process.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <stdexcept>
#include <utility>

namespace dnnsim {
namespace {

// A file descriptor closed when it goes out of scope, so that every early return closes it.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& other) noexcept : fd_(other.release()) {}
  Fd& operator=(Fd&& other) noexcept {
    reset(other.release());
    return *this;
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { reset(); }
  [[nodiscard]] int get() const { return fd_; }
  int release() { return std::exchange(fd_, -1); }
  void reset(int fd = -1) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }

 private:
  int fd_ = -1;
};

// A pipe whose two ends close on exec (the child's copies are dup2'ed onto its standard streams).
std::pair<Fd, Fd> make_pipe(const char* what) {
  int ends[2];
  if (::pipe2(ends, O_CLOEXEC) != 0) throw system_error(fmt::format("cannot create a pipe for {}", what));
  return {Fd(ends[0]), Fd(ends[1])};
}

Fd open_output(const std::string& path) {
  Fd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  if (fd.get() < 0) throw system_error(fmt::format("cannot create {}", path));
  return fd;
}

ChildExit exit_of(int status) {
  return WIFSIGNALED(status) ? ChildExit{ChildExit::How::killed_by_signal, WTERMSIG(status)}
                             : ChildExit{ChildExit::How::exited, WEXITSTATUS(status)};
}

// Writes all of `size` bytes (in the child: only write(2), async-signal-safe). False when it cannot.
bool write_all(int fd, const char* data, std::size_t size) {
  for (std::size_t done = 0; done < size;) {
    const ssize_t n = ::write(fd, data + done, size - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

// What a forked child inherits unflushed would be written twice: once by each process.
void flush_standard_streams() {
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
}

constexpr int kExecFailed = 127;  // what a shell reports for a command it cannot run

}  // namespace

std::runtime_error system_error(const std::string& what) {
  return std::runtime_error(fmt::format("{}: {}", what, std::strerror(errno)));
}

int shell_status(const ChildExit& exit) {
  switch (exit.how) {
    case ChildExit::How::exited:
      return exit.code;
    case ChildExit::How::killed_by_signal:
      return 128 + exit.code;
    case ChildExit::How::timed_out:
      return 128 + SIGKILL;
  }
  return exit.code;
}

ChildProcess ChildProcess::start(const ProgramCommand& command) {
  if (command.argv.empty()) throw std::runtime_error("cannot start a child: no program");
  // Everything the child uses is made here, before fork.
  std::vector<std::string> arguments = command.argv;
  std::vector<char*> argv;
  for (std::string& argument : arguments) argv.push_back(argument.data());
  argv.push_back(nullptr);
  const std::string exec_message = fmt::format("error: cannot execute {}\n", command.argv.front());
  const char* what = command.argv.front().c_str();

  Fd input_parent, input_child;
  if (command.input.empty()) {
    input_child.reset(::open("/dev/null", O_RDONLY | O_CLOEXEC));
    if (input_child.get() < 0) throw system_error("cannot open /dev/null");
  } else {
    int pair[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0)
      throw system_error(fmt::format("cannot create a socket for {}", what));
    input_parent.reset(pair[0]);
    input_child.reset(pair[1]);
  }
  Fd output_parent, output_child;
  if (command.stdout_path.empty() || command.stderr_path.empty())
    std::tie(output_parent, output_child) = make_pipe(what);
  Fd stdout_file, stderr_file;
  if (!command.stdout_path.empty()) stdout_file = open_output(command.stdout_path);
  if (!command.stderr_path.empty() && command.stderr_path != command.stdout_path)
    stderr_file = open_output(command.stderr_path);
  const int stdout_fd = command.stdout_path.empty() ? output_child.get() : stdout_file.get();
  const int stderr_fd = command.stderr_path.empty()                  ? output_child.get()
                        : command.stderr_path == command.stdout_path ? stdout_file.get()
                                                                     : stderr_file.get();
  auto [exec_parent, exec_child] = make_pipe(what);  // closed by a successful exec; else the errno

  const pid_t parent = ::getpid();
  flush_standard_streams();
  const pid_t pid = ::fork();
  if (pid < 0) throw system_error(fmt::format("cannot start {}: fork failed", what));
  if (pid == 0) {  // only async-signal-safe calls until exec
    if (command.own_process_group) ::setpgid(0, 0);
    if (command.die_with_parent) {
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (::getppid() != parent) ::_exit(128 + SIGKILL);  // the parent died before prctl
    }
    ::dup2(input_child.get(), STDIN_FILENO);
    ::dup2(stdout_fd, STDOUT_FILENO);
    ::dup2(stderr_fd, STDERR_FILENO);
    if (command.signal_mask != nullptr) ::sigprocmask(SIG_SETMASK, command.signal_mask, nullptr);
    if (command.search_path) {
      ::execvp(argv[0], argv.data());
    } else {
      ::execv(argv[0], argv.data());
    }
    const int error = errno;
    write_all(exec_child.get(), reinterpret_cast<const char*>(&error), sizeof error);
    write_all(STDERR_FILENO, exec_message.data(), exec_message.size());
    ::_exit(kExecFailed);
  }
  if (command.own_process_group) ::setpgid(pid, pid);  // also here, so that a kill right after fork reaches the group
  ChildProcess child;
  child.pid_ = pid;
  child.group_ = command.own_process_group;
  child.input_fd_ = input_parent.release();
  child.output_fd_ = output_parent.release();
  child.input_ = command.input;
  // Our copies of the child's ends must be closed before the exec pipe can reach end of file.
  input_child.reset();
  output_child.reset();
  stdout_file.reset();
  stderr_file.reset();
  exec_child.reset();
  int error = 0;
  ssize_t got = 0;
  while ((got = ::read(exec_parent.get(), &error, sizeof error)) < 0 && errno == EINTR) {
  }
  if (got == static_cast<ssize_t>(sizeof error)) child.exec_error_ = error;
  return child;
}

ChildProcess ChildProcess::run_function(const std::function<std::string()>& body) {
  auto [read_end, write_end] = make_pipe("a child process");
  flush_standard_streams();
  const pid_t pid = ::fork();
  if (pid < 0) throw system_error("cannot fork");
  if (pid == 0) {
    read_end.reset();
    std::string result;
    int code = 0;
    try {
      result = body();
    } catch (const std::exception& error) {
      result = error.what();
      code = 1;
    }
    ::_exit(write_all(write_end.get(), result.data(), result.size()) ? code : 2);
  }
  ChildProcess child;
  child.pid_ = pid;
  child.output_fd_ = read_end.release();
  return child;
}

ChildProcess::ChildProcess(ChildProcess&& other) noexcept
    : pid_(std::exchange(other.pid_, -1)),
      group_(other.group_),
      input_fd_(std::exchange(other.input_fd_, -1)),
      output_fd_(std::exchange(other.output_fd_, -1)),
      input_(std::move(other.input_)),
      exec_error_(other.exec_error_) {}

ChildProcess& ChildProcess::operator=(ChildProcess&& other) noexcept {
  if (this != &other) {
    if (pid_ > 0) kill();
    close_pipes();
    pid_ = std::exchange(other.pid_, -1);
    group_ = other.group_;
    input_fd_ = std::exchange(other.input_fd_, -1);
    output_fd_ = std::exchange(other.output_fd_, -1);
    input_ = std::move(other.input_);
    exec_error_ = other.exec_error_;
  }
  return *this;
}

ChildProcess::~ChildProcess() {
  if (pid_ > 0) kill();
  close_pipes();
}

void ChildProcess::close_pipes() {
  for (int* fd : {&input_fd_, &output_fd_})
    if (*fd >= 0) ::close(std::exchange(*fd, -1));
}

ChildResult ChildProcess::wait() {
  ChildResult result;
  result.exec_error = exec_error_;
  if (input_fd_ >= 0 && exec_error_ != 0) ::close(std::exchange(input_fd_, -1));
  if (input_fd_ >= 0) ::fcntl(input_fd_, F_SETFL, O_NONBLOCK);
  // Feed the input and collect the output at the same time (either could fill a buffer).
  std::size_t sent = 0;
  while (output_fd_ >= 0 || input_fd_ >= 0) {
    std::array<pollfd, 2> fds{};
    nfds_t count = 0;
    if (output_fd_ >= 0) fds[count++] = pollfd{output_fd_, POLLIN, 0};
    if (input_fd_ >= 0) fds[count++] = pollfd{input_fd_, POLLOUT, 0};
    if (::poll(fds.data(), count, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (nfds_t k = 0; k < count; ++k) {
      if (fds[k].revents == 0) continue;
      if (fds[k].fd == input_fd_) {
        const ssize_t n = ::send(input_fd_, input_.data() + sent, input_.size() - sent, MSG_NOSIGNAL);
        if (n > 0) sent += static_cast<std::size_t>(n);
        if ((n < 0 && errno != EAGAIN && errno != EINTR) || sent == input_.size())
          ::close(std::exchange(input_fd_, -1));  // end of file for the child
      } else {
        std::array<char, 1 << 16> buffer{};
        const ssize_t n = ::read(output_fd_, buffer.data(), buffer.size());
        if (n > 0) {
          result.output.append(buffer.data(), static_cast<std::size_t>(n));
        } else if (n == 0 || errno != EINTR) {
          ::close(std::exchange(output_fd_, -1));
        }
      }
    }
  }
  close_pipes();
  int status = 0;
  rusage usage{};
  while (::wait4(pid_, &status, 0, &usage) < 0 && errno == EINTR) {
  }
  pid_ = -1;
  result.exit = exit_of(status);
  result.peak_rss_kib = usage.ru_maxrss;
  return result;
}

std::optional<ChildExit> ChildProcess::poll() {
  int status = 0;
  if (pid_ <= 0 || ::waitpid(pid_, &status, WNOHANG) != pid_) return std::nullopt;
  pid_ = -1;
  close_pipes();
  return exit_of(status);
}

void ChildProcess::kill() {
  if (pid_ <= 0) return;
  ::kill(group_ ? -pid_ : pid_, SIGKILL);
  while (::waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
  }
  pid_ = -1;
  close_pipes();
}

std::string current_executable() { return std::filesystem::read_symlink("/proc/self/exe").string(); }

}  // namespace dnnsim
