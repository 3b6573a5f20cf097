// SPDX-License-Identifier: GPL-2.0-or-later
// Reading a workload: which jobs arrive when, running which application profile.
#pragma once

#include <string>
#include <vector>

#include "csv.hpp"

namespace pollux::trace {

struct WorkloadJob {
  std::string name;
  double submit_time;  // seconds from the start of the trace
  std::string application;
  int num_replicas;  // GPUs a user would request (rigid baselines)
  long batch_size;   // total batch a user would request (rigid baselines)
};

// Columns name,time,application,num_replicas,batch_size (any order); sorted by submit time.
// Throws TraceError (file:line) on malformed rows, duplicate names or an empty workload.
std::vector<WorkloadJob> readWorkload(const std::string& path);

}  // namespace pollux::trace
