// SPDX-License-Identifier: GPL-2.0-or-later
// Everything a run needs, loaded and checked before the simulation starts.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "trace/application.hpp"
#include "cluster.hpp"
#include "sim_job.hpp"
#include "trace/workload.hpp"

namespace pollux::sim {

struct Experiment {
  Cluster cluster;
  std::vector<trace::WorkloadJob> workload;
  std::map<std::string, trace::Application> apps;       // the applications the workload uses
  std::map<std::string, double> restart_cost_s;  // by application
  // Seconds a live change's joiners take to start, by application; else its restart cost.
  std::map<std::string, double> join_startup_s;

  // Fresh jobs of the workload (they refer to `apps`: keep the experiment alive).
  std::vector<SimJob> jobs(Resize resize = Resize::kRestart) const;
};

// Reads the workload and the profiles of its applications for every GPU type of the cluster.
// `restart_overrides` replace the defaults (defaultRestartCosts()); `join_startup` sets the
// joiners' start-up of some applications. Throws std::invalid_argument or trace::TraceError
// with a message for the user on bad input: cluster spec, unknown application (in the
// workload, the overrides or `join_startup`), missing restart cost, malformed files.
Experiment loadExperiment(const std::string& workload_path, const std::string& profiles_dir,
                          const std::string& cluster_spec,
                          const std::map<std::string, double>& restart_overrides,
                          const std::map<std::string, double>& join_startup = {});

}  // namespace pollux::sim
