// SPDX-License-Identifier: GPL-2.0-or-later
// A simulated training job: its allocation, progress towards its target, and what it measured.
#pragma once

#include <array>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "trace/application.hpp"
#include "cluster.hpp"
#include "common/model/fit.hpp"
#include "trace/workload.hpp"

namespace pollux::sim {

// GPUs on concrete nodes and the batch configuration the job runs with there.
struct Assignment {
  std::map<std::string, int> gpus_by_node;  // node name -> GPUs used (> 0)
  int local_bsz = 1;
  int accum_steps = 0;

  int totalGpus() const;
  long batchSize() const { return static_cast<long>(totalGpus()) * local_bsz * (accum_steps + 1); }
};

class SimJob {
 public:
  SimJob(trace::WorkloadJob spec, const trace::Application& app, double restart_cost_s);

  const trace::WorkloadJob& spec() const { return spec_; }
  const std::string& name() const { return spec_.name; }
  const trace::Application& app() const { return *app_; }
  double restartCost() const { return restart_cost_s_; }

  bool finished() const { return completion_time_.has_value(); }
  std::optional<double> completionTime() const { return completion_time_; }
  double progress() const { return progress_; }
  const std::optional<Assignment>& assignment() const { return assignment_; }
  // The GPU type(s) the job runs on, '+'-joined if an allocation spans types; "" if none.
  const std::string& gpuType() const { return gpu_type_; }
  int restarts() const { return restarts_; }
  double lastChangeTime() const { return last_change_time_; }
  double gpuSeconds() const { return gpu_seconds_; }  // attained service, restart delays included
  int maxReplicasSeen() const { return max_replicas_seen_; }
  // Batch size it trains with now, or the initial batch size when it holds no GPUs.
  long currentBatchSize() const;

  // Applies `next` at `now`: new GPUs cost the restart delay (the first start too, but only
  // later changes count as restarts); a new batch configuration on the same GPUs is free.
  void assign(const std::optional<Assignment>& next, const Cluster& cluster, double now);
  // Trains from `now` for `seconds`; records the completion time when the target is reached.
  void advance(double now, double seconds);
  // Seconds from now until completion if the current assignment were kept (infinite if none).
  double remainingTime() const;

  // Distinct step-time measurements by GPU type, as the job's agent would report them.
  std::map<std::string, std::vector<model::StepSample>> samples() const;

 private:
  double progressRate() const;  // initial-batch iterations per second at the current progress
  void recordSample();

  trace::WorkloadJob spec_;
  const trace::Application* app_;
  double restart_cost_s_;
  std::optional<Assignment> assignment_;
  std::string gpu_type_;
  trace::StepTiming timing_{0, 0};  // of the current assignment, on its slowest GPU type
  double delay_left_ = 0;    // restart delay still to wait before training resumes
  double progress_ = 0;
  std::optional<double> completion_time_;
  bool started_ = false;
  int restarts_ = 0;
  double last_change_time_ = 0;
  double gpu_seconds_ = 0;
  int max_replicas_seen_ = 0;
  // type -> (nodes, replicas, local_bsz, accum_steps) -> sample
  std::map<std::string, std::map<std::array<int, 4>, model::StepSample>> samples_;
};

}  // namespace pollux::sim
