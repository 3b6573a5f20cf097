// SPDX-License-Identifier: GPL-2.0-or-later
// An emulated training job: what one optimizer step of an application takes and achieves on
// a placement, from its measured profile. Pure logic, no clock and no I/O.
#pragma once

#include <optional>

#include "trace/application.hpp"
#include "common/model/goodput.hpp"

namespace pollux::emulate {

struct BatchConfig {
  int local_bsz;
  int accum_steps;  // micro-batches beyond the first
};

// How far training has come; what a checkpoint keeps.
struct TrainingState {
  double progress = 0;  // efficiency-weighted iterations at the initial batch
  double examples = 0;
  long steps = 0;
  bool done = false;
};

class EmulatedJob {
 public:
  // `speed`: how much faster this GPU type is than the profile's; `target_fraction` of the
  // application's full training ends the job. Throws std::invalid_argument on bad values.
  EmulatedJob(const trace::Application& app, trace::GpusPerNode placement, double speed,
              double target_fraction);

  int replicas() const { return replicas_; }
  model::BatchLimits limits() const;
  // The initial batch split over the replicas, with accumulation if one micro-batch cannot
  // hold its share.
  BatchConfig defaultBatch() const;
  // A decision clamped to the profile's per-GPU batch bounds; a micro-batch above the upper
  // bound becomes several (accumulation), keeping the examples per step.
  BatchConfig clamp(BatchConfig decision) const;
  // What the next step trains with: the agent's latest decision if any, else the default.
  BatchConfig batchFor(const std::optional<BatchConfig>& decision) const;
  long batchSize(const BatchConfig& config) const;

  // Seconds on this GPU type (the profile's over the speed, before time scaling) of one
  // optimizer step and of one micro-batch.
  double stepSeconds(const BatchConfig& config) const;
  double computeSeconds(const BatchConfig& config) const;
  // |g|^2 and tr(Sigma) of one example at the current progress.
  model::GradParams perExampleGrad(const BatchConfig& config) const;

  // One optimizer step: progress grows by the statistical gain of the batch; done at target.
  void step(const BatchConfig& config);
  double target() const { return target_; }
  // The target in examples at the initial batch size (progress x the initial batch): the
  // unit in which the agent counts a declared length.
  double targetExamples() const { return target_ * double(app_.curves.initBatchSize()); }
  // Ends the job at `examples` examples at the initial batch size instead of a fraction of
  // the application's training (--epochs). Throws std::invalid_argument unless finite, > 0.
  void setTargetExamples(double examples);
  const TrainingState& state() const { return state_; }
  void restore(const TrainingState& state) { state_ = state; }

 private:
  // `share` examples per replica in as few micro-batches as the profile's bounds allow.
  BatchConfig split(double share) const;

  const trace::Application& app_;
  const trace::ThroughputProfile& profile_;
  trace::GpusPerNode placement_;
  int replicas_;
  double speed_;
  double target_;
  TrainingState state_;
};

}  // namespace pollux::emulate
