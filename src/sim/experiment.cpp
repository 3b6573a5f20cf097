// SPDX-License-Identifier: GPL-2.0-or-later
#include "experiment.hpp"

#include <cstdlib>
#include <filesystem>

#include "live_resize.hpp"
#include "options.hpp"


namespace pollux::sim {

namespace fs = std::filesystem;

std::vector<SimJob> Experiment::jobs(Resize resize) const {
  std::vector<SimJob> jobs;
  for (const auto& spec : workload) {
    const bool live = resize == Resize::kLive || resize == Resize::kParts;
    const auto join = join_startup_s.find(spec.application);
    jobs.emplace_back(
        spec, apps.at(spec.application), restart_cost_s.at(spec.application),
        live ? modelParameters(spec.application) : std::nullopt, resize == Resize::kParts,
        join == join_startup_s.end() ? std::nullopt : std::optional<double>(join->second));
  }
  return jobs;
}

Experiment loadExperiment(const std::string& workload_path, const std::string& profiles_dir,
                          const std::string& cluster_spec,
                          const std::map<std::string, double>& restart_overrides,
                          const std::map<std::string, double>& join_startup) {
  Experiment experiment{
      Cluster::parse(cluster_spec), trace::readWorkload(workload_path), {}, {}, join_startup};
  if (!fs::is_directory(profiles_dir)) {
    throw std::invalid_argument("profiles directory " + profiles_dir + " does not exist");
  }
  const auto require_known = [&](const std::map<std::string, double>& by_app,
                                 const std::string& option) {
    for (const auto& [app, seconds] : by_app) {
      if (!fs::is_directory(fs::path(profiles_dir) / app)) {
        throw std::invalid_argument(option + " names unknown application '" + app + "'");
      }
    }
  };
  require_known(restart_overrides, "--restart-cost");
  require_known(join_startup, "--join-startup");
  experiment.restart_cost_s = defaultRestartCosts();
  for (const auto& [app, cost] : restart_overrides) experiment.restart_cost_s[app] = cost;
  for (const auto& job : experiment.workload) {
    if (experiment.apps.count(job.application)) continue;
    experiment.apps.emplace(job.application,
                            trace::loadApplication(profiles_dir, job.application,
                                            experiment.cluster.gpuTypes()));
    if (!experiment.restart_cost_s.count(job.application)) {
      throw std::invalid_argument("no restart cost for application '" + job.application +
                                  "': pass --restart-cost " + job.application + "=SECONDS");
    }
  }
  return experiment;
}

}  // namespace pollux::sim
