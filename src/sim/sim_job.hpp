// SPDX-License-Identifier: GPL-2.0-or-later
// A simulated training job: its allocation, progress towards its target, and what it measured.
#pragma once

#include <array>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "trace/application.hpp"
#include "cluster.hpp"
#include "common/model/fit.hpp"
#include "common/policy/policy.hpp"
#include "trace/workload.hpp"

namespace pollux::sim {

// GPUs on concrete nodes and the batch configuration the job runs with there.
struct Assignment {
  std::map<std::string, int> gpus_by_node;  // node name -> GPUs used (> 0)
  int local_bsz = 1;
  int accum_steps = 0;
  // A live move made by restart (policy::JobDecision::restarted_for).
  bool restarted = false;

  int totalGpus() const;
  long batchSize() const { return static_cast<long>(totalGpus()) * local_bsz * (accum_steps + 1); }
};

// How a job changes its GPUs (pollux-sim --resize): by checkpoint-restart; live where it
// can, growing through parts; or, its GPUs all in parts (adaptive:resize=live), moving live
// too.
enum class Resize { kRestart, kLive, kParts };

class SimJob {
 public:
  // With `live_model_parameters` (its model's size) it changes live where Slurm would
  // (policy::changesInPlace): a growth that keeps its GPUs and adds as many on each node it
  // adds to (a part) trains on at its old allocation while the joiners start (its restart
  // cost, or `join_startup_s`), then stalls for the live growth; a shrink to some of its nodes, or
  // one that drops one of its parts or some of a part's nodes, stalls for the live shrink
  // (live_resize.hpp). With `gpus_in_parts` too, its first allocation is a part and it moves live
  // to GPUs of its type on other nodes with as many on each: it trains on at its old allocation
  // while the target's joiners start (holding both), then stalls for their join and for the old
  // parts' leaving (a job placed on the GPUs it leaves waits for them: waitForGpus). Any other
  // change restarts.
  SimJob(trace::WorkloadJob spec, const trace::Application& app, double restart_cost_s,
         std::optional<double> live_model_parameters = std::nullopt, bool gpus_in_parts = false,
         std::optional<double> join_startup_s = std::nullopt);

  const trace::WorkloadJob& spec() const { return spec_; }
  const std::string& name() const { return spec_.name; }
  const trace::Application& app() const { return *app_; }
  double restartCost() const { return restart_cost_s_; }
  double joinStartup() const { return join_startup_s_; }  // its live changes' joiners' start

  bool finished() const { return completion_time_.has_value(); }
  std::optional<double> completionTime() const { return completion_time_; }
  double progress() const { return progress_; }
  const std::optional<Assignment>& assignment() const { return assignment_; }
  // The GPU type(s) the job runs on, '+'-joined if an allocation spans types; "" if none.
  const std::string& gpuType() const { return gpu_type_; }
  int restarts() const { return restarts_; }
  bool growsLive() const { return live_parameters_.has_value(); }
  bool movesLive() const { return growsLive() && gpus_in_parts_; }
  // The stall of its last live change; nullopt before its first.
  std::optional<double> lastLiveStall() const { return last_live_stall_s_; }
  // The GPUs each of its live growths added (its parts on Slurm), oldest first, until it
  // drops them or restarts: it shrinks live meanwhile only by dropping one of them.
  const std::vector<policy::Allocation>& parts() const { return parts_; }
  // Seconds its changes stopped it (restarts and stalls; not its first start).
  double pausedSeconds() const { return paused_s_; }
  // Seconds of work its changes cost it: pauses plus joiners' start-up times the share of
  // GPUs they held idle.
  double lostSeconds() const { return lost_s_; }
  // Rounds whose allocation (type and GPUs) undid the one of the round before.
  int flipBacks() const { return flip_backs_; }
  double lastChangeTime() const { return last_change_time_; }
  double gpuSeconds() const { return gpu_seconds_; }  // attained service, restart delays included
  int maxReplicasSeen() const { return max_replicas_seen_; }
  // Batch size it trains with now, or the initial batch size when it holds no GPUs.
  long currentBatchSize() const;

  // Applies `next`, this round's decision, at `now`: new GPUs cost the restart delay (the
  // first start too, but only later changes count as restarts) or, live, as the class says; a
  // new batch configuration on the same GPUs is free. Returns whether its GPUs changed.
  bool assign(const std::optional<Assignment>& next, const Cluster& cluster, double now);
  // Trains from `now` for `seconds`; records the completion time when the target is reached.
  void advance(double now, double seconds);
  // Seconds from now until completion if the current assignment were kept (infinite if none).
  double remainingTime() const;

  // GPUs it holds beyond its assignment (a live move's old parts, until the target's joiners
  // have started) and for how many seconds more; empty where none.
  std::map<std::string, int> leavingGpus() const;
  double leavingSeconds() const { return join_left_; }
  // Its GPUs of this round's change are held by a live move for `seconds` more: a start or
  // restart begins that much later, the joiners of a live change start that much later
  // (Slurm starts the job or part once they are free).
  void waitForGpus(double seconds);

  // Distinct step-time measurements by GPU type, as the job's agent would report them.
  std::map<std::string, std::vector<model::StepSample>> samples() const;

 private:
  struct Running {
    Assignment assignment;
    trace::StepTiming timing;
  };
  enum class Change { kNone, kStop, kStart, kRestart, kLiveGrowth, kLiveShrink, kLiveMove };

  Change changeTo(const std::optional<Assignment>& next, const Cluster& cluster) const;
  void applyChange(Change change, const Assignment& next);
  // Its parts as the change moves them: a live growth adds one, a live shrink drops the one
  // it drops or shrinks it to its kept nodes; any other change ends them all (a job whose GPUs are
  // all in parts then holds one: its new allocation).
  void followParts(Change change, const std::optional<Assignment>& next, const Cluster& cluster);
  void countFlipBack();
  void setTiming(const Assignment& next, const Cluster& cluster);
  // What it trains on: the old allocation while joiners start, else the one it holds.
  const Assignment& trainingAssignment() const;
  const trace::StepTiming& trainingTiming() const;
  double progressRate() const;  // initial-batch iterations per second at the current progress
  // Trains from `time` for `seconds` at training(); returns the time it stopped (completion).
  double train(double time, double seconds);
  void recordSample();

  trace::WorkloadJob spec_;
  const trace::Application* app_;
  double restart_cost_s_;
  double join_startup_s_;
  std::optional<Assignment> assignment_;
  std::string gpu_type_;
  trace::StepTiming timing_{0, 0};  // of the current assignment, on its slowest GPU type
  double delay_left_ = 0;    // restart delay or stall still to wait before training resumes
  std::optional<double> live_parameters_;  // its model's size, if it changes live
  bool gpus_in_parts_ = false;
  std::optional<Running> joining_from_;    // what it trains on while joiners start
  double join_left_ = 0;                   // until the joiners have started
  double stall_after_join_ = 0;
  std::optional<double> last_live_stall_s_;
  std::vector<policy::Allocation> parts_;
  double paused_s_ = 0;
  double lost_s_ = 0;
  std::pair<std::string, int> round_shape_{"", 0};        // type and GPUs this round ...
  std::pair<std::string, int> last_round_shape_{"", 0};  // ... and the round before
  int flip_backs_ = 0;
  double progress_ = 0;
  std::optional<double> completion_time_;
  bool started_ = false;
  int restarts_ = 0;
  double last_change_time_ = 0;
  Change last_change_ = Change::kNone;  // this round's
  double gpu_seconds_ = 0;
  int max_replicas_seen_ = 0;
  // type -> (nodes, replicas, local_bsz, accum_steps) -> sample
  std::map<std::string, std::map<std::array<int, 4>, model::StepSample>> samples_;
};

}  // namespace pollux::sim
