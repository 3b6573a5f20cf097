// SPDX-License-Identifier: GPL-2.0-or-later
#include "workload.hpp"

#include <algorithm>
#include <set>

#include "common/invalid_input.hpp"

namespace pollux::trace {

std::vector<WorkloadJob> readWorkload(const std::string& path) {
  std::vector<WorkloadJob> jobs;
  std::set<std::string> names;
  forEachCsvRow(path, {"name", "time", "application", "num_replicas", "batch_size"},
                [&](const std::vector<std::string>& f) {
                  const WorkloadJob job{f[0], parseNumber(f[1]), f[2], parseInteger(f[3]),
                                        parseInteger(f[4])};
                  if (job.name.empty() || job.application.empty()) {
                    throw std::invalid_argument("empty name or application");
                  }
                  if (!names.insert(job.name).second) {
                    throw std::invalid_argument("duplicate job name '" + job.name + "'");
                  }
                  requireNonNegative(job.submit_time, "time");
                  if (job.num_replicas < 1) throw std::invalid_argument("num_replicas must be >= 1");
                  if (job.batch_size < 1) throw std::invalid_argument("batch_size must be >= 1");
                  jobs.push_back(job);
                });
  if (jobs.empty()) throw TraceError(path + ": no jobs");
  std::stable_sort(jobs.begin(), jobs.end(), [](const WorkloadJob& a, const WorkloadJob& b) {
    return a.submit_time < b.submit_time;
  });
  return jobs;
}

}  // namespace pollux::trace
