// SPDX-License-Identifier: GPL-2.0-or-later
#include "emulated_job.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace pollux::emulate {

EmulatedJob::EmulatedJob(const trace::Application& app, trace::GpusPerNode placement, double speed,
                         double target_fraction)
    : app_(app), profile_(app.by_type.begin()->second), placement_(std::move(placement)),
      replicas_(std::accumulate(placement_.begin(), placement_.end(), 0)), speed_(speed),
      target_(app.curves.targetProgress() * target_fraction) {
  if (placement_.empty() || *std::min_element(placement_.begin(), placement_.end()) < 1)
    throw std::invalid_argument("every node needs at least one GPU");
  if (!(speed > 0) || !std::isfinite(speed)) throw std::invalid_argument("speed must be > 0");
  if (!(target_fraction > 0) || target_fraction > 1)
    throw std::invalid_argument("target fraction must be in (0, 1]");
}

void EmulatedJob::setTargetExamples(double examples) {
  if (!(examples > 0) || !std::isfinite(examples))
    throw std::invalid_argument("the target must be a finite number of examples > 0");
  target_ = examples / double(app_.curves.initBatchSize());
}

model::BatchLimits EmulatedJob::limits() const {
  return {app_.curves.initBatchSize(), app_.curves.maxBatchSize(), app_.minLocalBsz(),
          app_.commonMaxLocalBsz(), true};
}

BatchConfig EmulatedJob::split(double share) const {
  const int accum = std::max(0, int(std::ceil(share / app_.commonMaxLocalBsz())) - 1);
  const int local = int(std::ceil(share / (accum + 1)));
  return {std::clamp(local, app_.minLocalBsz(), app_.commonMaxLocalBsz()), accum};
}

BatchConfig EmulatedJob::defaultBatch() const {
  return split(double(app_.curves.initBatchSize()) / replicas_);
}

BatchConfig EmulatedJob::clamp(BatchConfig decision) const {
  decision.accum_steps = std::max(0, decision.accum_steps);
  if (decision.local_bsz > app_.commonMaxLocalBsz())
    return split(double(decision.local_bsz) * (decision.accum_steps + 1));
  decision.local_bsz = std::max(decision.local_bsz, app_.minLocalBsz());
  return decision;
}

BatchConfig EmulatedJob::batchFor(const std::optional<BatchConfig>& decision) const {
  return decision ? clamp(*decision) : defaultBatch();
}

long EmulatedJob::batchSize(const BatchConfig& config) const {
  return long(replicas_) * config.local_bsz * (config.accum_steps + 1);
}

double EmulatedJob::stepSeconds(const BatchConfig& config) const {
  return trace::optimizerStepTime(profile_.timing(placement_, config.local_bsz), config.accum_steps) /
         speed_;
}

double EmulatedJob::computeSeconds(const BatchConfig& config) const {
  const trace::StepTiming timing = profile_.timing(placement_, config.local_bsz);
  return (timing.step_time - timing.sync_time) / speed_;
}

model::GradParams EmulatedJob::perExampleGrad(const BatchConfig& config) const {
  model::GradParams grad = app_.curves.gradParams(double(batchSize(config)), state_.progress);
  grad.var *= double(app_.curves.initBatchSize());  // the profile's var is at the initial batch
  return grad;
}

void EmulatedJob::step(const BatchConfig& config) {
  if (state_.done) return;
  state_.progress += app_.curves.gain(double(batchSize(config)), state_.progress);
  state_.examples += double(batchSize(config));
  ++state_.steps;
  state_.done = state_.progress >= target_;
}

}  // namespace pollux::emulate
