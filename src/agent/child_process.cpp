// SPDX-License-Identifier: GPL-2.0-or-later
#include "child_process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <system_error>

extern char** environ;

namespace pollux::agent {
namespace {

// The agent's environment with `extra` set (replacing existing values).
std::vector<std::string> childEnvironment(const std::map<std::string, std::string>& extra) {
  std::vector<std::string> entries;
  for (char** entry = environ; *entry; ++entry) {
    const char* equals = std::strchr(*entry, '=');
    const std::string name(*entry, equals ? equals - *entry : std::strlen(*entry));
    if (!extra.count(name)) entries.emplace_back(*entry);
  }
  for (const auto& [name, value] : extra) entries.push_back(name + "=" + value);
  return entries;
}

std::vector<char*> pointers(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (std::string& text : strings) out.push_back(text.data());
  out.push_back(nullptr);
  return out;
}

// Starts `command` with `environment`, the default signal mask and dispositions, and its
// stdout on `stdout_fd` (if >= 0).
pid_t spawn(const std::vector<std::string>& command, std::vector<std::string> environment,
            int stdout_fd) {
  std::vector<std::string> arguments = command;
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attributes, &none);
  posix_spawnattr_setsigdefault(&attributes, &all);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  posix_spawn_file_actions_t files;
  posix_spawn_file_actions_init(&files);
  if (stdout_fd >= 0) posix_spawn_file_actions_adddup2(&files, stdout_fd, STDOUT_FILENO);
  pid_t pid = -1;
  const int error = posix_spawnp(&pid, arguments[0].c_str(), &files, &attributes,
                                 pointers(arguments).data(), pointers(environment).data());
  posix_spawn_file_actions_destroy(&files);
  posix_spawnattr_destroy(&attributes);
  if (error != 0)
    throw std::system_error(error, std::generic_category(), "cannot run " + command[0]);
  return pid;
}

int shellStatus(int status) {
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return WEXITSTATUS(status);
}

}  // namespace

std::string CommandOutput::text() const {
  const auto last = output.find_last_not_of(" \t\r\n");
  return last == std::string::npos ? "" : output.substr(0, last + 1);
}

CommandOutput runCommand(const std::vector<std::string>& command) {
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0)
    throw std::system_error(errno, std::generic_category(), "pipe");
  pid_t pid;
  try {
    pid = spawn(command, childEnvironment({}), pipe_fds[1]);
  } catch (...) {
    close(pipe_fds[0]);
    close(pipe_fds[1]);
    throw;
  }
  close(pipe_fds[1]);
  CommandOutput result{0, ""};
  char buffer[4096];
  ssize_t count;
  while ((count = read(pipe_fds[0], buffer, sizeof buffer)) > 0 ||
         (count < 0 && errno == EINTR)) {
    if (count > 0) result.output.append(buffer, static_cast<size_t>(count));
  }
  close(pipe_fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  result.status = shellStatus(status);
  return result;
}

ChildProcess::ChildProcess(const std::vector<std::string>& command,
                           const std::map<std::string, std::string>& extra_env)
    : pid_(spawn(command, childEnvironment(extra_env), -1)) {}

void ChildProcess::signal(int signal_number) const { kill(pid_, signal_number); }

std::optional<int> ChildProcess::poll() {
  int status = 0;
  if (waitpid(pid_, &status, WNOHANG) != pid_) return std::nullopt;
  return shellStatus(status);
}

}  // namespace pollux::agent
