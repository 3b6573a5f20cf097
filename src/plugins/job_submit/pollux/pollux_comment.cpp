// SPDX-License-Identifier: GPL-2.0-or-later
#include "pollux_comment.h"

#include <cstring>
#include <exception>
#include <string>

#include "common/invalid_input.hpp"
#include "common/slurm_text/adaptive_comment.hpp"
#include "common/slurm_text/gres.hpp"

namespace {

void checkGpuRequest(const char* tres_per_node, const char* tres_per_job) {
  const auto per_node = pollux::schema::parseGpuGres(tres_per_node ? tres_per_node : "");
  if (per_node && !per_node->type.empty()) {
    throw pollux::InvalidInput(
        "adaptive jobs must not request a GPU type with --gres; use "
        "--comment=adaptive:gpu_type=TYPE (Pollux picks the GPUs)");
  }
  if (tres_per_job && std::strstr(tres_per_job, "gpu")) {
    throw pollux::InvalidInput(
        "adaptive jobs must not use --gpus; use --comment=adaptive:min_gpus=N,max_gpus=M");
  }
}

void copyMessage(const char* message, char* error, size_t error_size) {
  if (!error || error_size == 0) return;
  std::strncpy(error, message, error_size - 1);
  error[error_size - 1] = '\0';
}

}  // namespace

extern "C" int pollux_check_adaptive_job(const char* comment, const char* tres_per_node,
                                         const char* tres_per_job, char* error,
                                         size_t error_size) {
  try {
    if (!pollux::schema::parseAdaptiveComment(comment ? comment : "")) return 0;
    checkGpuRequest(tres_per_node, tres_per_job);
    return 1;
  } catch (const std::exception& problem) {
    copyMessage(problem.what(), error, error_size);
  } catch (...) {  // nothing may unwind into slurmctld
    copyMessage("internal error checking the adaptive comment", error, error_size);
  }
  return -1;
}
