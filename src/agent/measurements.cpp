// SPDX-License-Identifier: GPL-2.0-or-later
#include "measurements.hpp"

#include <algorithm>
#include <vector>

#include "common/invalid_input.hpp"
#include "common/model/efficiency.hpp"
#include "common/model/goodput.hpp"
#include "common/schema/json_reader.hpp"
#include "common/schema/model_json.hpp"

namespace pollux::agent {
namespace {

// Means over at most this many steps, so a placement's time follows slow drifts.
constexpr long kMeanWindow = 100;
// Weight of a new step in the moving average of the gradient statistics.
constexpr double kGradSmoothing = 0.05;

void updateMean(double& mean, long& count, double value) {
  count = std::min(count + 1, kMeanWindow);
  mean += (value - mean) / static_cast<double>(count);
}

}  // namespace

void Measurements::recordProgress(const StepMessage& step, int replicas) {
  if (step.per_example_grad) {
    if (!per_example_grad_) per_example_grad_ = step.per_example_grad;
    per_example_grad_->sqr += kGradSmoothing * (step.per_example_grad->sqr - per_example_grad_->sqr);
    per_example_grad_->var += kGradSmoothing * (step.per_example_grad->var - per_example_grad_->var);
  }
  progress_ = {step.examples, step.epochs};
  length_.recordStep(step.examples, stepEfficiency(step, replicas));
}

std::optional<model::GradParams> Measurements::measuredGrad() const {
  if (!limits_ || !per_example_grad_) return std::nullopt;
  const double sqr = std::max(0.0, per_example_grad_->sqr);
  const double var = std::max(0.0, per_example_grad_->var);
  if (!(sqr > 0)) return std::nullopt;
  return model::GradParams{sqr, var / static_cast<double>(limits_->init_batch_size)};
}

double Measurements::stepEfficiency(const StepMessage& step, int replicas) const {
  const auto grad = measuredGrad();
  if (!grad) return 1.0;
  const double batch = static_cast<double>(std::max(replicas, 1)) * step.local_bsz *
                       (step.accum_steps + 1);
  return model::efficiency(*grad, static_cast<double>(limits_->init_batch_size), batch);
}

void Measurements::addSample(const std::string& gpu_type, const model::Placement& placement,
                             const StepMessage& step) {
  SampleMean& sample = samples_[{gpu_type, placement.num_nodes, placement.num_replicas,
                                 step.local_bsz, step.accum_steps}];
  updateMean(sample.step_time, sample.count, step.step_time);
  if (step.compute_time) updateMean(sample.compute_time, sample.compute_count, *step.compute_time);
}

std::optional<double> Measurements::restartCost() const {
  if (!startup_s_) return std::nullopt;
  return *startup_s_ + checkpoint_s_;
}

std::map<std::string, model::PerfParams> Measurements::fitByType() const {
  std::map<std::string, std::vector<model::StepSample>> by_type;
  for (const auto& [key, mean] : samples_) {
    const auto& [type, nodes, replicas, local_bsz, accum] = key;
    std::optional<double> compute;
    if (mean.compute_count > 0) compute = mean.compute_time;
    by_type[type].push_back({nodes, replicas, local_bsz, accum, mean.step_time, compute});
  }
  std::map<std::string, model::PerfParams> fitted;
  for (const auto& [type, samples] : by_type) fitted[type] = model::fitPerfParams(samples);
  return fitted;
}

std::optional<schema::GoodputReport> Measurements::buildReport(
    const std::string& job_id, const std::string& gpu_type,
    const model::Placement& placement) const {
  if (!limits_) return std::nullopt;
  const model::GradParams grad = measuredGrad().value_or(model::GradParams{1.0, 0.0});
  schema::GoodputReport report;
  report.job_id = job_id;
  report.gpu_type = gpu_type;
  report.placement = placement;
  report.perf_params = fitByType();
  report.grad = grad;
  report.limits = *limits_;
  report.progress = progress_;
  report.restart_cost_s = restartCost();
  report.resize_stall_s = resize_stall_s_;
  report.length = length_.length(progress_);
  report.join_startup_s = join_startup_s_;
  return report;
}

std::optional<Decision> Measurements::bestDecision(const std::string& gpu_type,
                                                   const model::Placement& placement) const {
  if (!limits_) return std::nullopt;
  const auto fits = fitByType();
  const auto fit = fits.find(gpu_type);
  if (fit == fits.end()) return std::nullopt;
  const model::GradParams grad = measuredGrad().value_or(model::GradParams{1.0, 0.0});
  std::optional<model::BatchChoice> choice;
  try {
    choice = model::GoodputModel(fit->second, grad, *limits_).bestBatch(placement);
  } catch (const InvalidInput&) {
    return std::nullopt;  // a fit the model cannot use yet
  }
  if (!choice) return std::nullopt;
  const double lr_scale = model::lrScale(model::LrScaling::kAdaScale, grad,
                                         static_cast<double>(limits_->init_batch_size),
                                         static_cast<double>(choice->batch_size));
  return Decision{choice->batch_size, choice->local_bsz, choice->accum_steps, lr_scale};
}

Json::Value Measurements::toJson() const {
  Json::Value state(Json::objectValue);
  if (limits_) {
    state["limits"]["init_batch_size"] = Json::Int64(limits_->init_batch_size);
    state["limits"]["max_batch_size"] = Json::Int64(limits_->max_batch_size);
    state["limits"]["local_bsz_bounds"].append(limits_->min_local_bsz);
    state["limits"]["local_bsz_bounds"].append(limits_->max_local_bsz);
    state["limits"]["accumulation"] = limits_->accumulation;
  }
  state["samples"] = Json::Value(Json::arrayValue);
  for (const auto& [key, mean] : samples_) {
    Json::Value sample;
    std::tie(sample["gpu_type"], sample["num_nodes"], sample["num_replicas"], sample["local_bsz"],
             sample["accum_steps"]) = key;
    sample["step_time"] = mean.step_time;
    sample["count"] = Json::Int64(mean.count);
    if (mean.compute_count > 0) {
      sample["compute_time"] = mean.compute_time;
      sample["compute_count"] = Json::Int64(mean.compute_count);
    }
    state["samples"].append(sample);
  }
  if (per_example_grad_) {
    state["per_example_grad"]["sqr"] = per_example_grad_->sqr;
    state["per_example_grad"]["var"] = per_example_grad_->var;
  }
  state["progress"]["examples"] = progress_.examples;
  state["progress"]["epochs"] = progress_.epochs;
  if (startup_s_) state["startup_s"] = *startup_s_;
  if (join_startup_s_) state["join_startup_s"] = *join_startup_s_;
  state["checkpoint_s"] = checkpoint_s_;
  state["length"] = length_.toJson();
  return state;
}

Measurements Measurements::fromJson(const Json::Value& document) {
  const schema::JsonField state(document, "state");
  state.requireOnlyKeys({"limits", "samples", "per_example_grad", "progress", "startup_s",
                         "checkpoint_s", "length", "join_startup_s"});
  Measurements out;
  if (state.has("limits")) out.limits_ = schema::parseBatchLimits(state["limits"], true);
  const schema::JsonField samples = state["samples"];
  for (Json::ArrayIndex i = 0; i < samples.arraySize(); ++i) {
    const schema::JsonField sample = samples.at(i);
    SampleKey key{sample["gpu_type"].string(), int(sample["num_nodes"].integer(1, 1L << 20)),
                  int(sample["num_replicas"].integer(1, 1L << 20)),
                  int(sample["local_bsz"].integer(1, 1L << 30)),
                  int(sample["accum_steps"].integer(0, 1L << 20))};
    SampleMean mean;
    mean.step_time = sample["step_time"].positiveNumber();
    mean.count = sample["count"].integer(1, kMeanWindow);
    if (sample.has("compute_time")) {
      mean.compute_time = sample["compute_time"].positiveNumber();
      mean.compute_count = sample["compute_count"].integer(1, kMeanWindow);
    }
    out.samples_[key] = mean;
  }
  if (state.has("per_example_grad")) {
    const schema::JsonField grad = state["per_example_grad"];
    grad.requireOnlyKeys({"sqr", "var"});
    out.per_example_grad_ = model::GradParams{grad["sqr"].number(), grad["var"].number()};
  }
  out.progress_ = {state["progress"]["examples"].nonNegativeNumber(),
                   state["progress"]["epochs"].nonNegativeNumber()};
  if (state.has("startup_s")) out.startup_s_ = state["startup_s"].nonNegativeNumber();
  if (state.has("join_startup_s")) {
    out.join_startup_s_ = state["join_startup_s"].nonNegativeNumber();
  }
  out.checkpoint_s_ = state["checkpoint_s"].nonNegativeNumber();
  // State files of agents before declared lengths have none: the work done is then counted
  // from the trainer's totals at its next step (at the efficiency of that step).
  if (state.has("length")) out.length_ = LengthAccount::fromJson(state["length"]);
  return out;
}

}  // namespace pollux::agent
