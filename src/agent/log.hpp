// SPDX-License-Identifier: GPL-2.0-or-later
// pollux-agent's log: one line per event on stderr (Slurm puts it in the job's output),
// prefixed with the job and task, written with one write(2) so threads do not interleave.
#pragma once

#include <string>

namespace pollux::agent {

void setLogPrefix(const std::string& prefix);
void logLine(const std::string& message);

}  // namespace pollux::agent
