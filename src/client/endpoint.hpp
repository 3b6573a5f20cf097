// SPDX-License-Identifier: GPL-2.0-or-later
// Where sched/pollux listens and which munged socket Slurm uses, read from the same slurm.conf
// (SLURM_CONF honoured) and pollux.conf beside it, so clients need no settings of their own.
#pragma once

#include <string>

namespace pollux::client {

struct SlurmSettings {
  std::string rest_url;      // "http://127.0.0.1:6830" (https when the plugin serves TLS)
  std::string munge_socket;  // AuthInfo's socket=, empty for libmunge's default
};

// Reads $SLURM_CONF (default /etc/slurm/slurm.conf). A missing file gives the defaults;
// malformed pollux settings throw pollux::InvalidInput as the plugin would reject them.
SlurmSettings readSlurmSettings();

// The parts of slurm.conf text this needs (exposed for tests): the last SchedulerParameters=
// and AuthInfo= values, as Slurm takes the last assignment.
std::string schedulerParameters(const std::string& slurm_conf_text);
std::string mungeSocketFromAuthInfo(const std::string& slurm_conf_text);

}  // namespace pollux::client
