// SPDX-License-Identifier: GPL-2.0-or-later
// The job comment that marks a Slurm job as adaptive (sbatch --comment=...).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace pollux::schema {

// Syntax: "adaptive" or "adaptive:KEY=VALUE[,KEY=VALUE...]" with keys
//   min_gpus=N   fewest GPUs the job runs on (default 1)
//   max_gpus=N   most GPUs it may be given (default: the cluster's largest configuration)
//   gpu_type=T   only this GPU type
//   part_of=J    a part of adaptive job J: more nodes for J's workers, which join J live
//                (submitted by J's `pollux-agent --launch`, placed by sched/pollux)
//   resize=live  every GPU of the job in its parts: the job itself holds one CPU, where its
//                `pollux-agent --launch` runs, so that every resize on a GPU type is live
//                (resize=requeue, the default: the job holds its first GPUs itself)
// e.g. "adaptive:min_gpus=2,max_gpus=16,gpu_type=a100".
struct AdaptiveRequest {
  int min_gpus = 1;
  std::optional<int> max_gpus;
  std::optional<std::string> gpu_type;
  std::optional<uint32_t> part_of = std::nullopt;
  bool gpus_in_parts = false;  // resize=live
};

inline constexpr int kMaxRequestGpus = 1 << 20;

// Whether the comment asks for adaptive scheduling: "adaptive" alone or followed by ':'
// (its options are parseAdaptiveComment()'s to judge).
bool asksForAdaptive(std::string_view comment);

// nullopt when the comment does not ask for adaptive scheduling (asksForAdaptive).
// Throws pollux::InvalidInput with a message for the user when it does but is malformed.
std::optional<AdaptiveRequest> parseAdaptiveComment(std::string_view comment);

}  // namespace pollux::schema
