// SPDX-License-Identifier: GPL-2.0-or-later
// pollux-sim: replay a workload on a simulated GPU cluster under a scheduling policy.
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <memory>

#include "trace/application.hpp"
#include "trace/profiles_dir.hpp"
#include "experiment.hpp"
#include "fifo.hpp"
#include "metrics.hpp"
#include "options.hpp"
#include "pollux_scheduler.hpp"
#include "report.hpp"
#include "simulation.hpp"
#include "tiresias.hpp"

namespace {

using namespace pollux::sim;

std::unique_ptr<Scheduler> makeScheduler(const Options& options, const Experiment& experiment) {
  const std::string& policy = options.policy;
  const Cluster& cluster = experiment.cluster;
  if (policy == "fifo") return std::make_unique<FifoScheduler>(cluster);
  if (policy == "tiresias") return std::make_unique<TiresiasScheduler>(cluster);
  // pollux-goodput is today's objective; pollux-unaware, Sia's Pollux baseline, too.
  pollux::policy::Params params = options.params;
  if (policy != "pollux") params.objective = pollux::policy::Objective::kGoodput;
  const Declarations declarations{options.declare_factor,
                                  undeclaredJobs(experiment.workload, options.undeclared_share)};
  return std::make_unique<PolluxScheduler>(
      cluster, policy != "pollux-unaware",
      pollux::trace::estimateRelativeSpeeds(experiment.apps, cluster.gpuTypes()), params,
      declarations);
}

// Live resizes are the pollux policy's (the jct objective's) on Slurm; the others keep
// checkpoint-restarts, as they would there.
Resize resizeOf(const Options& options) {
  return options.policy == "pollux" ? options.resize : Resize::kRestart;
}

void showProgress(double now, size_t completed, size_t total) {
  std::fprintf(stderr, "\rpollux-sim: %.1f h simulated, %zu/%zu jobs done ", now / 3600,
               completed, total);
  if (completed == total) std::fputc('\n', stderr);
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  Experiment experiment;
  try {
    options = parseOptions(argc, argv);
    const std::string profiles =
        options.profiles.empty() ? pollux::trace::defaultProfilesDir() : options.profiles;
    experiment = loadExperiment(options.workload, profiles, options.cluster, options.restart_cost_s,
                                options.join_startup_s);
    if (!options.plot.empty()) requireGnuplot();
    for (const std::string* output : {&options.timeline, &options.plot, &options.jobs}) {
      if (!output->empty()) requireWritable(*output);
    }
  } catch (const std::exception& error) {
    std::cerr << "pollux-sim: " << error.what() << "\n" << kUsage;
    return 2;
  }
  try {
    const auto scheduler = makeScheduler(options, experiment);
    SimulationOptions sim_options;
    sim_options.round_s = options.round_s;
    sim_options.event_delay_s = options.event_delay_s;
    sim_options.record_timeline = !options.timeline.empty() || !options.plot.empty();
    if (isatty(STDERR_FILENO)) sim_options.on_round = showProgress;
    const SimulationResult result =
        simulate(experiment.cluster, experiment.jobs(resizeOf(options)), *scheduler, sim_options);
    if (!options.timeline.empty()) writeTimeline(options.timeline, result.timeline);
    if (!options.plot.empty()) plotTimeline(options.plot, result);
    if (!options.jobs.empty()) writeJobs(options.jobs, result.jobs);
    const Summary summary = summarize(result);
    if (options.json) {
      std::cout << summaryJson(options.policy, summary) << "\n";
    } else {
      printSummary(std::cout, options.policy, summary);
    }
    return 0;
  } catch (const std::exception& error) {
    std::cerr << "pollux-sim: " << error.what() << "\n";
    return 1;
  }
}
