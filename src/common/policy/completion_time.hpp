// SPDX-License-Identifier: GPL-2.0-or-later
// The completion-time objective (Params::objective == kJct, docs/design.md section 5.4).
//
// Jobs that declared their length are re-decided after the goodput round, in the GPUs the
// goodput round gave them together plus what it left free. For such a job, an option's
// speedup is how much sooner the job completes there than at its baseline (min_gpus on its
// fastest type):
//   remaining_s(option) = remaining declared work (past the declared length, the length
//                         doubled: DeclaredLength::remaining) / goodput at the option (statistical
//                         efficiency included) + the restart cost if the option changes GPUs
//   speedup(option)     = remaining_s(baseline, no restart) / remaining_s(option)
// and its weight is the power-mean utility of that speedup (objective.hpp) times
//   (declaring jobs whose baseline remaining time is at least the job's / declaring jobs)
//   ^ kRankExponent,
// so that among jobs gaining alike, the one closer to completion gets the GPUs: in a
// shortest-remaining-first order, each job that completes sooner hands its GPUs sooner to
// every longer job, so its weight grows with the jobs behind it. By rank, not by size, as in
// heSRPT's optimum for concave speedups. A running job is always offered its current
// configuration, and another one only where it completes sooner, the change's cost and the
// seconds it lost to earlier changes included, or uses fewer GPUs; never, in the round after
// a change, the configuration it left (no allocation flips back). Guard: a job the goodput
// round gave GPUs keeps at least 1/jct_guard of the speedup, before change costs, of the
// configuration that round gave it, and is always allocated.
#pragma once

#include <optional>
#include <vector>

#include "configurations.hpp"
#include "job_goodput.hpp"
#include "objective.hpp"
#include "policy.hpp"

namespace pollux::policy {

// The power of the rank weight: larger values favour jobs closer to completion more strongly,
// at the cost of more restarts of long ones.
inline constexpr double kRankExponent = 1.5;

// Whether the job is re-decided by completion time: adaptive and its length declared.
bool declaresLength(const Job& job);

// Seconds the job needs to complete at `config`, the change's cost (changeCost) included;
// nullopt if the job declared no length or has no goodput at `config`.
std::optional<double> remainingSeconds(const Job& job, JobGoodput& goodput, const Config& config);

struct TimedOption {
  int option = 0;          // index into the job's goodput-round options
  double remaining_s = 0;  // remainingSeconds there
  double restart_factor = 1;  // the goodput round's restart factor of the option
};

struct CompletionOptions {
  std::vector<TimedOption> options;
  double baseline_s = 0;  // remaining seconds at the baseline, restart excluded
  bool guarded = false;   // the goodput round gave the job GPUs: it must get one of `options`
};


// The options of a declaring job for the completion-time pass at `time`. `fair_choice`: the
// index of the option the goodput round chose for it, or -1. None if the job has no goodput
// model.
CompletionOptions completionOptions(const Job& job, const std::vector<JobOption>& options,
                                    JobGoodput& goodput, int fair_choice, const Params& params,
                                    double time);

// MILP weights of each job's options (same order), as the header describes.
std::vector<std::vector<double>> completionWeights(const std::vector<CompletionOptions>& jobs,
                                                   double fairness_p);

}  // namespace pollux::policy
