// SPDX-License-Identifier: GPL-2.0-or-later
// What every simulated scheduling policy does once per round.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "sim_job.hpp"

namespace pollux::sim {

class Scheduler {
 public:
  virtual ~Scheduler() = default;
  // Assignments at `now` for the active jobs (arrived, unfinished), by job name; a job left
  // out holds no GPUs this round. Assignments must fit the cluster together.
  virtual std::map<std::string, Assignment> decide(double now,
                                                   const std::vector<const SimJob*>& active) = 0;
};

}  // namespace pollux::sim
