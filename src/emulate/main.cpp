// SPDX-License-Identifier: GPL-2.0-or-later
// pollux-emulate: an application's measured profile replayed as a training job.
#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "applications.hpp"
#include "checkpoint.hpp"
#include "trace/profiles_dir.hpp"
#include "job_environment.hpp"
#include "options.hpp"
#include "runner.hpp"

namespace {

using namespace pollux::emulate;

// The job's state from its checkpoint, logged; false if training is already done.
bool resume(EmulatedJob& job, const std::string& app, const std::string& checkpoint) {
  const auto saved = loadCheckpoint(checkpoint, app);
  if (!saved) {
    std::fprintf(stderr, "pollux-emulate: starting fresh: %s on %d GPU(s), target progress %.1f\n",
                 app.c_str(), job.replicas(), job.target());
    return true;
  }
  job.restore(*saved);
  std::fprintf(stderr, "pollux-emulate: resumed from %s at progress %.1f of %.1f (%.1f %%)%s\n",
               checkpoint.c_str(), saved->progress, job.target(),
               100 * saved->progress / job.target(), saved->done ? ", already done" : "");
  return !saved->done;
}

int run(const Options& options) {
  const JobEnvironment environment =
      readJobEnvironment(options, [](const char* name) { return std::getenv(name); });
  installStopHandler();
  if (!environment.first_task) return runOtherTask(options.app, environment.checkpoint);
  const pollux::trace::Application app = loadProfile(
      options.profiles.empty() ? pollux::trace::defaultProfilesDir() : options.profiles,
      options.app);
  EmulatedJob job(app, environment.placement, environment.speed, options.target_fraction);
  const double dataset_size = options.dataset_size > 0 ? options.dataset_size : datasetSize(app);
  if (options.epochs > 0) job.setTargetExamples(options.epochs * dataset_size);
  if (!resume(job, options.app, environment.checkpoint)) return 0;
  RunSettings settings{options.app,           environment.checkpoint,
                       options.time_scale,    options.startup_s,
                       options.checkpoint_interval_s, dataset_size};
  settings.declare_epochs = options.epochs;
  settings.declare = options.declare;
  return runFirstTask(job, settings);
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  try {
    if (!parseOptions(argc, argv, options)) {
      std::cout << usage();
      return 0;
    }
    return run(options);
  } catch (const std::invalid_argument& error) {  // bad option, unknown app, corrupt checkpoint
    std::cerr << "pollux-emulate: " << error.what() << "\n";
    return 2;
  } catch (const std::exception& error) {
    std::cerr << "pollux-emulate: " << error.what() << "\n";
    return 1;
  }
}
