// SPDX-License-Identifier: GPL-2.0-or-later
// The job's workers in one of its parts: a step that srun runs, started by the launcher
// (SrunStep) or by the part's own batch script (ScriptStep). Slurm's SIGTERM to a cancelled or
// requeued job reaches every process of its batch script, and srun ends its step with SIGKILL
// on SIGTERM: a step started from the part's batch script is out of that reach, so that the
// launcher can have the training checkpoint first (PartLauncher::checkpointSteps).
#pragma once

#include <chrono>
#include <cstdint>
#include <ios>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "child_process.hpp"

namespace pollux::agent {

class PartStep {
 public:
  virtual ~PartStep() = default;
  // Its srun's exit status once the step has ended (as a shell reports it), else nullopt.
  virtual std::optional<int> poll() = 0;
  // Sends `number` to every task of the step.
  virtual void signal(int number) = 0;
};

// srun started by the launcher, to which srun writes the step's output.
class SrunStep : public PartStep {
 public:
  SrunStep(const std::vector<std::string>& command, const std::map<std::string, std::string>& env)
      : srun_(command, env) {}
  std::optional<int> poll() override { return srun_.poll(); }
  void signal(int number) override { srun_.signal(number); }

 private:
  ChildProcess srun_;
};

// The batch script of a part whose step it starts: it waits for the launcher's
// `launch_dir`/PART.run and runs it, then holds the part until it is cancelled, as any part;
// it ends at once where `launch_dir` is gone (the launcher has ended).
std::string partBatchScript(const std::string& launch_dir);

// What PART.run holds: the step's environment exported, then srun, its output to
// `base`.out and its exit status to `base`.status.
std::string stepScript(const std::string& base, const std::vector<std::string>& command,
                       const std::map<std::string, std::string>& env);

// Copies to standard output what the steps started from `launch_dir` wrote (PART.out), each
// under a line naming its part: the directory of an earlier run of the job whose launcher
// ended before it copied all of it (what it copied already comes again).
void relayLeftOutput(const std::string& launch_dir);

// srun started by the part's own batch script (partBatchScript) from `launch_dir`/PART.run,
// which the constructor writes. poll() copies the step's output to the launcher's standard
// output and reads its status once written; a part seen no longer running without one
// (cancelled, its node lost) ended with 143. signal() signals the part's steps through Slurm
// (scancel --signal: its steps, not its batch script).
class ScriptStep : public PartStep {
 public:
  ScriptStep(const std::string& launch_dir, uint32_t part, const std::vector<std::string>& command,
             const std::map<std::string, std::string>& env);
  ~ScriptStep() override;  // removes its files
  ScriptStep(const ScriptStep&) = delete;
  ScriptStep& operator=(const ScriptStep&) = delete;
  std::optional<int> poll() override;
  void signal(int number) override;

 private:
  void relayOutput();
  bool partRuns();

  std::string base_;
  uint32_t part_;
  std::streamoff relayed_ = 0;
  std::chrono::steady_clock::time_point next_check_;
};

}  // namespace pollux::agent
