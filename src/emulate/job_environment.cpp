// SPDX-License-Identifier: GPL-2.0-or-later
#include "job_environment.hpp"

#include <cstdlib>

#include "common/invalid_input.hpp"
#include "common/text_number.hpp"

namespace pollux::emulate {
namespace {

// The variable's value; 0 if unset or empty.
long wholeNumber(const Getenv& getenv, const char* name) {
  const char* text = getenv(name);
  if (text == nullptr || *text == '\0') return 0;
  const auto value = parseInteger(text, 0, 1 << 20);
  if (!value) throw InvalidInput(std::string(name) + "='" + text + "' is not a whole number");
  return *value;
}

int firstPositive(std::initializer_list<long> candidates) {
  for (const long candidate : candidates)
    if (candidate > 0) return int(candidate);
  return 1;
}

long visibleDevices(const Getenv& getenv) {
  const char* list = getenv("CUDA_VISIBLE_DEVICES");
  if (list == nullptr || *list == '\0') return 0;
  long entries = 1;
  for (const char* c = list; *c; ++c) entries += *c == ',';
  return entries;
}

double speedOfThisGpu(const Options& options, const Getenv& getenv) {
  const char* type = getenv("POLLUX_GPU_TYPE");
  const auto found = options.speeds.find(type ? type : "");
  return found == options.speeds.end() ? 1.0 : found->second;
}

std::string checkpointPath(const Options& options, const Getenv& getenv) {
  if (!options.checkpoint.empty()) return options.checkpoint;
  const char* job = getenv("SLURM_JOB_ID");
  return "pollux-emulate-" + options.app + "-" + (job && *job ? job : "local") + ".ckpt";
}

}  // namespace

JobEnvironment readJobEnvironment(const Options& options, const Getenv& getenv) {
  const int nodes = firstPositive({options.nodes, wholeNumber(getenv, "SLURM_STEP_NUM_NODES"),
                                   wholeNumber(getenv, "SLURM_JOB_NUM_NODES")});
  const int gpus = firstPositive({options.gpus_per_node, wholeNumber(getenv, "SLURM_GPUS_ON_NODE"),
                                  visibleDevices(getenv)});
  return {trace::GpusPerNode(size_t(nodes), gpus), speedOfThisGpu(options, getenv),
          checkpointPath(options, getenv), wholeNumber(getenv, "SLURM_PROCID") == 0};
}

}  // namespace pollux::emulate
