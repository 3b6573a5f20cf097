// SPDX-License-Identifier: GPL-2.0-or-later
// What the agent has measured of its job, kept across restarts: step times by GPU type and
// placement, gradient noise, progress, batch limits, the time restarts take and the declared
// length with the work done towards it. Pure logic: the agent saves toJson() in its state
// file and reports buildReport().
#pragma once

#include <map>
#include <optional>
#include <string>
#include <tuple>

#include <json/json.h>

#include "channel_message.hpp"
#include "common/model/fit.hpp"
#include "declared_length.hpp"
#include "common/schema/goodput_report.hpp"

namespace pollux::agent {

class Measurements {
 public:
  void setLimits(const model::BatchLimits& limits) { limits_ = limits; }

  // Progress and gradient noise of a step, wherever it ran, with `replicas` replicas (its
  // batch: replicas x local_bsz x (accum_steps + 1)). The step's examples count towards the
  // declared length at the statistical efficiency of that batch (stepEfficiency).
  void recordProgress(const StepMessage& step, int replicas);
  // model::efficiency of the step's batch against the initial one, with the gradient noise
  // as reported (sqr, var / init_batch_size); 1.0 until the noise is measured (and before
  // the trainer's hello).
  double stepEfficiency(const StepMessage& step, int replicas) const;
  // The trainer's `length` message; why it was refused (the job is then undeclared) or
  // nullopt (see LengthAccount::declare).
  std::optional<std::string> declareLength(const LengthMessage& declaration) {
    return length_.declare(declaration, progress_);
  }
  const LengthAccount& length() const { return length_; }
  // The trainer's latest totals (examples and epochs since the job first started).
  const schema::TrainingProgress& totals() const { return progress_; }
  // Its time as a sample of `gpu_type` at `placement`.
  void addSample(const std::string& gpu_type, const model::Placement& placement,
                 const StepMessage& step);
  int distinctSamples() const { return static_cast<int>(samples_.size()); }

  // Seconds from the agent's start to the trainer's first step, and from the checkpoint
  // request to the trainer's exit: together the cost of one restart.
  void recordStartup(double seconds) { startup_s_ = seconds; }
  void recordCheckpoint(double seconds) { checkpoint_s_ = seconds; }
  std::optional<double> restartCost() const;
  // The stall of the trainer's last live change of its world size (reported as
  // resize_stall_s).
  void recordResizeStall(double seconds) { resize_stall_s_ = seconds; }
  std::optional<double> resizeStall() const { return resize_stall_s_; }
  // Seconds the joiners of the job's last live growth took to be admitted (reported as
  // join_startup_s; kept in the state the next lead restores).
  void recordJoinStartup(double seconds) { join_startup_s_ = seconds; }
  std::optional<double> joinStartup() const { return join_startup_s_; }

  // The report for the plugin (perf_params fitted per GPU type with samples); nullopt until
  // the trainer has said hello. Without gradient statistics the report assumes a larger batch
  // brings no statistical progress (var 0), so Pollux never grows the batch on a guess. The
  // report has "length" when the trainer declared one that can be converted (LengthAccount).
  std::optional<schema::GoodputReport> buildReport(const std::string& job_id,
                                                   const std::string& gpu_type,
                                                   const model::Placement& placement) const;

  // The best batch for `placement` on `gpu_type` by the job's own fit, as AdaptDL's trainer
  // chooses its batch itself; nullopt until that type is fitted. For a trainer that runs on
  // other GPUs than the plugin's decision is for (workers lost on a node the job keeps).
  std::optional<Decision> bestDecision(const std::string& gpu_type,
                                       const model::Placement& placement) const;

  Json::Value toJson() const;
  // Throws pollux::InvalidInput naming the offending key.
  static Measurements fromJson(const Json::Value& state);

 private:
  using SampleKey = std::tuple<std::string, int, int, int, int>;  // type, nodes, replicas, bsz, accum
  struct SampleMean {
    double step_time = 0;
    double compute_time = 0;
    long count = 0;
    long compute_count = 0;
  };
  std::map<std::string, model::PerfParams> fitByType() const;
  // The gradient noise at the initial batch size; nullopt until measured (|g|^2 > 0).
  std::optional<model::GradParams> measuredGrad() const;

  std::optional<model::BatchLimits> limits_;
  std::map<SampleKey, SampleMean> samples_;
  // Moving average of single-step estimates; each may be negative (unbiased estimators
  // are), the average is clamped at 0 when reported.
  std::optional<model::GradParams> per_example_grad_;
  schema::TrainingProgress progress_{0, 0};
  std::optional<double> startup_s_;
  std::optional<double> resize_stall_s_;
  std::optional<double> join_startup_s_;
  double checkpoint_s_ = 0;
  LengthAccount length_;
};

}  // namespace pollux::agent
