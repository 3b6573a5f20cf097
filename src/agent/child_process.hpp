// SPDX-License-Identifier: GPL-2.0-or-later
// A child of the agent (the training command, or srun under --launch): started with extra
// environment variables and the default signal mask, signalled, and reaped.
#pragma once

#include <sys/types.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace pollux::agent {

struct CommandOutput {
  int status;          // as ChildProcess::poll() gives it
  std::string output;  // what it wrote to stdout
  // The output without its trailing blanks and newlines (a one-value squeue or sbatch answer).
  std::string text() const;
};

// Runs `command` (PATH searched) to its end. Throws std::system_error if it cannot start.
CommandOutput runCommand(const std::vector<std::string>& command);

class ChildProcess {
 public:
  // Starts `command` (PATH searched) with `extra_env` added to the agent's environment and
  // the default signal mask and dispositions. Throws std::system_error if it cannot start.
  ChildProcess(const std::vector<std::string>& command,
                 const std::map<std::string, std::string>& extra_env);

  pid_t pid() const { return pid_; }
  void signal(int signal_number) const;
  // Reaps the trainer if it has exited; returns its exit status as a shell reports it
  // (code, or 128 + signal), or nullopt while it runs.
  std::optional<int> poll();

 private:
  pid_t pid_;
};

}  // namespace pollux::agent
