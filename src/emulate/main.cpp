// pollux-emulate: an application's measured profile replayed as a training job.
#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "checkpoint.hpp"
#include "experiment.hpp"
#include "options.hpp"
#include "runner.hpp"

namespace {

using pollux::emulate::Options;

int environmentNumber(const char* name, int fallback) {
  const char* text = std::getenv(name);
  return text && std::atoi(text) > 0 ? std::atoi(text) : fallback;
}

// GPUs per node of this step: options, else Slurm's environment, else one GPU.
pollux::sim::GpusPerNode placement(const Options& options) {
  const int nodes = options.nodes > 0
                        ? options.nodes
                        : environmentNumber("SLURM_STEP_NUM_NODES",
                                            environmentNumber("SLURM_JOB_NUM_NODES", 1));
  int per_node = options.gpus_per_node > 0 ? options.gpus_per_node
                                           : environmentNumber("SLURM_GPUS_ON_NODE", 0);
  if (per_node == 0) {
    const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
    per_node = 1;
    for (const char* c = visible ? visible : ""; *c; ++c) per_node += *c == ',';
  }
  return pollux::sim::GpusPerNode(nodes, per_node);
}

double speedOfThisGpu(const Options& options) {
  const char* type = std::getenv("POLLUX_GPU_TYPE");
  const auto found = options.speeds.find(type ? type : "");
  return found == options.speeds.end() ? 1.0 : found->second;
}

std::string checkpointPath(const Options& options) {
  if (!options.checkpoint.empty()) return options.checkpoint;
  const char* job = std::getenv("SLURM_JOB_ID");
  return "pollux-emulate-" + options.app + "-" + (job ? job : "local") + ".ckpt";
}

int run(const Options& options) {
  const std::string checkpoint = checkpointPath(options);
  pollux::emulate::installStopHandler();
  if (environmentNumber("SLURM_PROCID", 0) > 0)
    return pollux::emulate::runOtherTask(options.app, checkpoint);
  const std::string profiles =
      options.profiles.empty() ? pollux::sim::defaultProfilesDir() : options.profiles;
  const pollux::sim::Application app = pollux::sim::loadApplication(profiles, options.app, {"profile"});
  pollux::emulate::EmulatedJob job(app, placement(options), speedOfThisGpu(options),
                                   options.target_fraction);
  if (const auto saved = pollux::emulate::loadCheckpoint(checkpoint, options.app)) {
    job.restore(*saved);
    std::fprintf(stderr, "pollux-emulate: resumed from %s at progress %.17g of %g (%.0f %%)\n",
                 checkpoint.c_str(), saved->progress, job.target(),
                 100 * saved->progress / job.target());
    if (saved->done) return 0;
  } else {
    std::cerr << "pollux-emulate: starting fresh (" << options.app << ", " << job.replicas()
              << " GPU(s), target progress " << job.target() << ")\n";
  }
  return pollux::emulate::runFirstTask(job, options, checkpoint);
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  try {
    if (!pollux::emulate::parseOptions(argc, argv, options)) {
      std::cout << pollux::emulate::usage();
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
