// What the agent has measured of its job, kept across restarts: step times by GPU type and
// placement, gradient noise, progress, batch limits and the time restarts take. Pure logic:
// the agent saves toJson() in its state file and reports buildReport().
#pragma once

#include <map>
#include <optional>
#include <string>
#include <tuple>

#include <json/json.h>

#include "channel_message.hpp"
#include "common/model/fit.hpp"
#include "common/schema/goodput_report.hpp"

namespace pollux::agent {

class Measurements {
 public:
  void setLimits(const model::BatchLimits& limits) { limits_ = limits; }

  // Progress and gradient noise of a step, wherever it ran.
  void recordProgress(const StepMessage& step);
  // Its time as a sample of `gpu_type` at `placement`.
  void addSample(const std::string& gpu_type, const model::Placement& placement,
                 const StepMessage& step);
  int distinctSamples() const { return static_cast<int>(samples_.size()); }

  // Seconds from the agent's start to the trainer's first step, and from the checkpoint
  // request to the trainer's exit: together the cost of one restart.
  void recordStartup(double seconds) { startup_s_ = seconds; }
  void recordCheckpoint(double seconds) { checkpoint_s_ = seconds; }
  std::optional<double> restartCost() const;

  // The report for the plugin (perf_params fitted per GPU type with samples); nullopt until
  // the trainer has said hello. Without gradient statistics the report assumes a larger batch
  // brings no statistical progress (var 0), so Pollux never grows the batch on a guess.
  std::optional<schema::GoodputReport> buildReport(const std::string& job_id,
                                                   const std::string& gpu_type,
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

  std::optional<model::BatchLimits> limits_;
  std::map<SampleKey, SampleMean> samples_;
  // Moving average of single-step estimates; each may be negative (unbiased estimators
  // are), the average is clamped at 0 when reported.
  std::optional<model::GradParams> per_example_grad_;
  schema::TrainingProgress progress_{0, 0};
  std::optional<double> startup_s_;
  double checkpoint_s_ = 0;
};

}  // namespace pollux::agent
