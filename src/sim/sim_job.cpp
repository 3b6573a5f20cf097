// SPDX-License-Identifier: GPL-2.0-or-later
#include "sim_job.hpp"

#include <algorithm>
#include <limits>
#include <sstream>

#include "common/policy/configurations.hpp"
#include "live_resize.hpp"

namespace pollux::sim {

int Assignment::totalGpus() const {
  int total = 0;
  for (const auto& [node, gpus] : gpus_by_node) total += gpus;
  return total;
}

SimJob::SimJob(trace::WorkloadJob spec, const trace::Application& app, double restart_cost_s,
               std::optional<double> live_model_parameters, bool gpus_in_parts,
               std::optional<double> join_startup_s)
    : spec_(std::move(spec)), app_(&app), restart_cost_s_(restart_cost_s),
      join_startup_s_(join_startup_s.value_or(restart_cost_s)),
      live_parameters_(live_model_parameters), gpus_in_parts_(gpus_in_parts) {}

long SimJob::currentBatchSize() const {
  return assignment_ ? assignment_->batchSize() : app_->curves.initBatchSize();
}

namespace {

// As the policy sees it: the assignment's nodes and its GPU type.
policy::Allocation allocationOf(const Assignment& assignment, const Cluster& cluster) {
  policy::Allocation allocation;
  for (const auto& [node, gpus] : assignment.gpus_by_node) {
    allocation.gpu_type = cluster.node(node).gpu_type;
    allocation.nodes[node] = gpus;
  }
  return allocation;
}

// The GPU type(s) of the assignment's nodes, '+'-joined in node order.
std::string typesOf(const Assignment& assignment, const Cluster& cluster) {
  std::vector<std::string> types;
  std::string joined;
  for (const auto& [node, gpus] : assignment.gpus_by_node) {
    const std::string& type = cluster.node(node).gpu_type;
    if (std::find(types.begin(), types.end(), type) != types.end()) continue;
    types.push_back(type);
    joined += (joined.empty() ? "" : "+") + type;
  }
  return joined;
}

}  // namespace

SimJob::Change SimJob::changeTo(const std::optional<Assignment>& next,
                                const Cluster& cluster) const {
  if (assignment_.has_value() == next.has_value() &&
      (!next || assignment_->gpus_by_node == next->gpus_by_node)) {
    return Change::kNone;
  }
  if (!next) return Change::kStop;
  if (!assignment_) return started_ ? Change::kRestart : Change::kStart;
  const std::string next_types = typesOf(*next, cluster);
  if (!live_parameters_ || gpu_type_.find('+') != std::string::npos ||
      next_types.find('+') != std::string::npos) {
    return Change::kRestart;
  }
  const policy::Allocation from = allocationOf(*assignment_, cluster);
  const policy::Allocation to = allocationOf(*next, cluster);
  // A job on another GPU type changes live only by a move (changesInPlace needs one type).
  if (!policy::changesInPlace(from, to, parts_)) {
    return movesLive() && policy::movesBeside(from, to) && !next->restarted ? Change::kLiveMove
                                                                            : Change::kRestart;
  }
  return next->totalGpus() > assignment_->totalGpus() ? Change::kLiveGrowth : Change::kLiveShrink;
}

void SimJob::applyChange(Change change, const Assignment& next) {
  if (change != Change::kLiveGrowth) {
    joining_from_.reset();
    join_left_ = 0;
  }
  double stall = 0;
  switch (change) {
    case Change::kNone:
    case Change::kStop:
      return;
    case Change::kStart:
      started_ = true;
      delay_left_ = restart_cost_s_;
      return;
    case Change::kRestart:
      ++restarts_;
      delay_left_ = restart_cost_s_;
      paused_s_ += restart_cost_s_;
      lost_s_ += restart_cost_s_;
      return;
    case Change::kLiveShrink:
      stall = liveShrinkStall(*live_parameters_);
      delay_left_ = stall;
      break;
    case Change::kLiveMove: {
      const int held = assignment_->totalGpus();
      joining_from_ = Running{*assignment_, timing_};
      join_left_ = join_startup_s_;
      gpu_seconds_ += join_startup_s_ * held;  // it holds its old GPUs too meanwhile
      stall = liveGrowthStall(*live_parameters_, held + next.totalGpus()) +
              liveShrinkStall(*live_parameters_);
      stall_after_join_ = stall;
      lost_s_ += join_startup_s_ * next.totalGpus() / (held + next.totalGpus());
      break;
    }
    case Change::kLiveGrowth: {
      if (!joining_from_) joining_from_ = Running{*assignment_, timing_};
      stall = liveGrowthStall(*live_parameters_, next.totalGpus());
      join_left_ = join_startup_s_;
      stall_after_join_ = stall;
      const double idle_share =
          double(next.totalGpus() - joining_from_->assignment.totalGpus()) / next.totalGpus();
      lost_s_ += join_startup_s_ * idle_share;
      break;
    }
  }
  last_live_stall_s_ = stall;
  paused_s_ += stall;
  lost_s_ += stall;
}

void SimJob::setTiming(const Assignment& next, const Cluster& cluster) {
  gpu_type_ = typesOf(next, cluster);
  trace::GpusPerNode placement;
  for (const auto& [node, gpus] : next.gpus_by_node) placement.push_back(gpus);
  timing_ = {0, 0};
  std::stringstream types(gpu_type_);
  for (std::string type; std::getline(types, type, '+');) {
    const trace::StepTiming timing = app_->on(type).timing(placement, next.local_bsz);
    if (timing.step_time > timing_.step_time) timing_ = timing;
  }
}

void SimJob::followParts(Change change, const std::optional<Assignment>& next,
                         const Cluster& cluster) {
  if (change == Change::kNone) return;
  if (change == Change::kLiveGrowth) {
    parts_.push_back(
        policy::addedTo(allocationOf(*assignment_, cluster), allocationOf(*next, cluster)));
    return;
  }
  std::optional<std::size_t> dropped, shrunk;
  policy::Allocation from, to;
  if (change == Change::kLiveShrink) {
    from = allocationOf(*assignment_, cluster);
    to = allocationOf(*next, cluster);
    dropped = policy::droppedPart(from, to, parts_);
    if (!dropped) shrunk = policy::shrunkPart(from, to, parts_, {});
  }
  if (dropped) {
    parts_.erase(parts_.begin() + static_cast<std::ptrdiff_t>(*dropped));
  } else if (shrunk) {
    parts_[*shrunk] = policy::withoutPart(parts_[*shrunk], policy::addedTo(to, from));
  } else {
    parts_.clear();  // a restart, a stop, or a shrink in place (a job without parts)
    if (gpus_in_parts_ && next) parts_.push_back(allocationOf(*next, cluster));
  }
}

void SimJob::countFlipBack() {
  const std::pair<std::string, int> shape{gpu_type_, assignment_ ? assignment_->totalGpus() : 0};
  if (shape != round_shape_ && shape == last_round_shape_) ++flip_backs_;
  last_round_shape_ = round_shape_;
  round_shape_ = shape;
}

bool SimJob::assign(const std::optional<Assignment>& next, const Cluster& cluster, double now) {
  const Change change = changeTo(next, cluster);
  last_change_ = change;
  if (change != Change::kNone) last_change_time_ = now;
  followParts(change, next, cluster);
  applyChange(change, next.value_or(Assignment{}));
  assignment_ = next;
  gpu_type_.clear();
  if (next) {
    setTiming(*next, cluster);
    max_replicas_seen_ = std::max(max_replicas_seen_, next->totalGpus());
    recordSample();
  }
  countFlipBack();
  return change != Change::kNone;
}

void SimJob::recordSample() {
  const Assignment& a = *assignment_;
  const int nodes = static_cast<int>(a.gpus_by_node.size());
  const int replicas = a.totalGpus();
  model::StepSample sample{nodes, replicas, a.local_bsz, a.accum_steps,
                           trace::optimizerStepTime(timing_, a.accum_steps),
                           std::max(timing_.step_time - timing_.sync_time, 1e-6)};
  samples_[gpu_type_][{nodes, replicas, a.local_bsz, a.accum_steps}] = sample;
}

std::map<std::string, std::vector<model::StepSample>> SimJob::samples() const {
  std::map<std::string, std::vector<model::StepSample>> by_type;
  for (const auto& [type, distinct] : samples_) {
    for (const auto& [key, sample] : distinct) by_type[type].push_back(sample);
  }
  return by_type;
}

const Assignment& SimJob::trainingAssignment() const {
  return joining_from_ ? joining_from_->assignment : *assignment_;
}

const trace::StepTiming& SimJob::trainingTiming() const {
  return joining_from_ ? joining_from_->timing : timing_;
}

double SimJob::progressRate() const {
  const Assignment& training = trainingAssignment();
  return app_->curves.gain(static_cast<double>(training.batchSize()), progress_) /
         trace::optimizerStepTime(trainingTiming(), training.accum_steps);
}

double SimJob::train(double time, double seconds) {
  const auto& knots = app_->curves.progressKnots();
  const double target = app_->curves.targetProgress();
  double left = seconds;
  // Efficiency changes along progress: step from knot to knot of the reference curve.
  while (left > 0 && progress_ < target) {
    const double next_knot = *std::upper_bound(knots.begin(), knots.end() - 1, progress_);
    const double rate = progressRate();
    const double to_knot = (next_knot - progress_) / rate;
    if (to_knot >= left) {
      progress_ += rate * left;
      time += left;
      left = 0;
    } else {
      progress_ = next_knot;
      time += to_knot;
      left -= to_knot;
    }
  }
  if (progress_ >= target) {
    progress_ = target;
    completion_time_ = time;
  }
  return time;
}

void SimJob::advance(double now, double seconds) {
  if (finished() || !assignment_) return;
  gpu_seconds_ += seconds * assignment_->totalGpus();
  const double end = now + seconds;
  const double waited = std::min(delay_left_, seconds);
  delay_left_ -= waited;
  double time = now + waited;
  if (joining_from_) {  // its joiners start (none left to wait for where they take 0 s)
    const double joining = std::min(join_left_, end - time);
    join_left_ -= joining;
    time = train(time, joining);
    if (!finished() && join_left_ <= 0) {  // joined: the new allocation after its stall
      joining_from_.reset();
      delay_left_ = stall_after_join_;
      const double stalled = std::min(delay_left_, end - time);
      delay_left_ -= stalled;
      time += stalled;
    }
  }
  if (!finished()) time = train(time, end - time);
  // GPUs are released on completion.
  if (finished()) gpu_seconds_ -= (end - *completion_time_) * assignment_->totalGpus();
}

std::map<std::string, int> SimJob::leavingGpus() const {
  std::map<std::string, int> leaving;
  if (!joining_from_ || join_left_ <= 0) return leaving;
  for (const auto& [node, gpus] : joining_from_->assignment.gpus_by_node) {
    const auto kept = assignment_->gpus_by_node.find(node);
    const int beyond = gpus - (kept == assignment_->gpus_by_node.end() ? 0 : kept->second);
    if (beyond > 0) leaving[node] = beyond;
  }
  return leaving;
}

void SimJob::waitForGpus(double seconds) {
  switch (last_change_) {
    case Change::kStart: delay_left_ += seconds; return;
    case Change::kRestart:
      delay_left_ += seconds;
      paused_s_ += seconds;
      lost_s_ += seconds;
      return;
    case Change::kLiveGrowth: {  // as applyChange charges the joiners' start-up
      join_left_ += seconds;
      const int from = joining_from_->assignment.totalGpus(), to = assignment_->totalGpus();
      lost_s_ += seconds * (to - from) / to;
      return;
    }
    case Change::kLiveMove: {
      join_left_ += seconds;
      const int from = joining_from_->assignment.totalGpus(), to = assignment_->totalGpus();
      gpu_seconds_ += seconds * from;
      lost_s_ += seconds * to / (from + to);
      return;
    }
    default: return;  // no new GPUs
  }
}

double SimJob::remainingTime() const {
  if (finished()) return 0;
  if (!assignment_) return std::numeric_limits<double>::infinity();
  SimJob copy = *this;
  copy.advance(0, std::numeric_limits<double>::max());
  return *copy.completion_time_;
}

}  // namespace pollux::sim
