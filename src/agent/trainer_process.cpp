#include "trainer_process.hpp"

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

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

}  // namespace

TrainerProcess::TrainerProcess(const std::vector<std::string>& command,
                               const std::map<std::string, std::string>& extra_env) {
  std::vector<std::string> arguments = command;
  std::vector<std::string> environment = childEnvironment(extra_env);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attributes, &none);
  posix_spawnattr_setsigdefault(&attributes, &all);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  const int error = posix_spawnp(&pid_, arguments[0].c_str(), nullptr, &attributes,
                                 pointers(arguments).data(), pointers(environment).data());
  posix_spawnattr_destroy(&attributes);
  if (error != 0)
    throw std::system_error(error, std::generic_category(), "cannot run " + command[0]);
}

void TrainerProcess::signal(int signal_number) const { kill(pid_, signal_number); }

std::optional<int> TrainerProcess::poll() {
  int status = 0;
  if (waitpid(pid_, &status, WNOHANG) != pid_) return std::nullopt;
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return WEXITSTATUS(status);
}

}  // namespace pollux::agent
