// SPDX-License-Identifier: GPL-2.0-or-later
// pollux-agent's command line.
#pragma once

#include <string>
#include <vector>

namespace pollux::agent {

struct Options {
  std::string rest_url;      // empty: from slurm.conf
  std::string munge_socket;  // empty: AuthInfo's socket= in slurm.conf, else libmunge's default
  std::string ca_file;       // CA bundle for an https endpoint
  double report_interval_s = 30;
  double grace_s = 25;       // after SIGTERM: time the trainer has to checkpoint and exit
  std::string state_file;    // empty: SLURM_SUBMIT_DIR/.pollux-agent-JOBID.json
  std::string gpu_type;      // empty: learned from the plugin's allocation
  int replicas = 0;          // 0: nodes x GPUs per node from Slurm's environment
  int nproc_per_node = 0;    // training processes per node; 0: auto, one per GPU here
  bool verbose = false;
  bool launch = false;       // run from the batch script: start the step with srun (launcher.hpp)
  std::vector<std::string> agent_arguments;  // every option but --launch, for the step's agents
  std::vector<std::string> command;
};

enum class ParseOutcome { kRun, kHelp, kVersion };

// Throws pollux::InvalidInput with a message for the user on a bad command line.
ParseOutcome parseOptions(int argc, char** argv, Options& options);
const char* usage();

}  // namespace pollux::agent
