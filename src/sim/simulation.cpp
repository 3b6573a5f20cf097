// SPDX-License-Identifier: GPL-2.0-or-later
#include "simulation.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <map>
#include <stdexcept>

#include "rigid.hpp"
#include "service/event_rounds.hpp"

namespace pollux::sim {

namespace {

constexpr double kGiveUpAfterS = 365 * 24 * 3600.0;

void checkFits(const Cluster& cluster, const std::map<std::string, Assignment>& decision) {
  FreeGpus free = allFree(cluster);
  for (const auto& [job, assignment] : decision) {
    for (const auto& [node, gpus] : assignment.gpus_by_node) {
      if (gpus <= 0 || !free.count(node) || (free[node] -= gpus) < 0) {
        throw std::logic_error("scheduler over-committed node '" + node + "' (job " + job + ")");
      }
    }
  }
}

std::map<std::string, Assignment> timedDecision(Scheduler& scheduler, double now,
                                                const std::vector<const SimJob*>& active,
                                                std::vector<double>& round_ms) {
  const auto start = std::chrono::steady_clock::now();
  auto decision = scheduler.decide(now, active);
  const std::chrono::duration<double, std::milli> elapsed = std::chrono::steady_clock::now() - start;
  round_ms.push_back(elapsed.count());
  return decision;
}

// Jobs given GPUs that a live move still holds (its old parts, until the target's joiners
// have started) start there once those are free, as Slurm starts them: each job whose GPUs
// grew this round on a node over-committed meanwhile waits for the longest such move there.
void waitForLeavingGpus(const Cluster& cluster, std::vector<SimJob>& jobs,
                        const std::vector<size_t>& active,
                        const std::map<size_t, std::map<std::string, int>>& before) {
  FreeGpus free = allFree(cluster);
  std::map<std::string, double> held_for;  // node -> seconds until its moves' old parts leave
  for (size_t index : active) {
    const SimJob& job = jobs[index];
    if (job.assignment()) take(free, *job.assignment());
    for (const auto& [node, gpus] : job.leavingGpus()) {
      free[node] -= gpus;
      held_for[node] = std::max(held_for[node], job.leavingSeconds());
    }
  }
  for (size_t index : active) {
    SimJob& job = jobs[index];
    if (!job.assignment()) continue;
    const auto& had = before.at(index);
    double wait = 0;
    for (const auto& [node, gpus] : job.assignment()->gpus_by_node) {
      const auto old = had.find(node);
      const bool grew = old == had.end() || old->second < gpus;
      if (grew && free.at(node) < 0 && held_for.count(node)) wait = std::max(wait, held_for[node]);
    }
    if (wait > 0) job.waitForGpus(wait);
  }
}

JobResult resultOf(const SimJob& job, double isolated_s, double fair_share_s) {
  return {job.name(), job.spec().application, job.spec().submit_time, *job.completionTime(),
          job.restarts(), job.pausedSeconds(), job.flipBacks(), job.gpuSeconds(), isolated_s,
          fair_share_s};
}

// Active jobs seen by each job, integrated over the time it was active, and that time.
struct Contention {
  double jobs_seen = 0;
  double seconds = 0;
  double mean() const { return seconds <= 0 ? 1.0 : jobs_seen / seconds; }
};

int64_t toMs(double seconds) { return std::llround(seconds * 1000); }

// When rounds run: sched/pollux's clock and new-work rules (service/event_rounds.hpp), every
// job being the scheduler's to place. Between rounds, a look for new work every
// event_delay_s sees the jobs as they will be then: arrived, running, or done.
class RoundTimer {
 public:
  explicit RoundTimer(const SimulationOptions& options)
      : timing_{toMs(options.round_s), toMs(options.event_delay_s)}, clock_(0, timing_) {}

  // The time of the round after the one at `now`, whose decision the jobs carry; `changed`:
  // that decision changed some job's GPUs.
  double next(double now, const std::vector<SimJob>& jobs, const std::vector<size_t>& active,
              size_t arrived, bool changed) {
    int64_t at = toMs(now);  // the simulated clock, as the plugin's thread wakes
    clock_.ran(at, at, timing_, changed);  // a simulated round takes no time
    std::vector<double> finish;  // of each active job, at its current assignment
    bool recorded = false;
    for (;;) {
      at = std::max(at, clock_.wake(timing_));
      const service::Due due = clock_.due(at, timing_);
      if (due == service::Due::kEventRound || due == service::Due::kRound) return at / 1000.0;
      if (due != service::Due::kCheck) throw std::logic_error("event clock woke for nothing");
      if (!recorded) {  // only with event rounds: remainingTime() is not free
        for (size_t index : active) finish.push_back(now + jobs[index].remainingTime());
        memory_.record(jobsAt(now, jobs, active, finish, arrived), {});
        recorded = true;
      }
      const auto seen = jobsAt(at / 1000.0, jobs, active, finish, arrived);
      clock_.checked(at, timing_, memory_.newWork(seen));
    }
  }

 private:
  static std::vector<service::EventJob> jobsAt(double time, const std::vector<SimJob>& jobs,
                                               const std::vector<size_t>& active,
                                               const std::vector<double>& finish,
                                               size_t arrived) {
    using service::EventJobState;
    std::vector<service::EventJob> seen;
    for (size_t i = 0; i < active.size(); ++i) {
      const SimJob& job = jobs[active[i]];
      const EventJobState state = finish[i] <= time ? EventJobState::kDone
                                  : job.assignment() ? EventJobState::kActive
                                                     : EventJobState::kPending;
      seen.push_back({static_cast<uint32_t>(active[i]), state, true, false, 0});
    }
    for (size_t index = arrived; index < jobs.size() && jobs[index].spec().submit_time <= time;
         ++index) {
      seen.push_back({static_cast<uint32_t>(index), EventJobState::kPending, true, false, 0});
    }
    return seen;
  }

  const service::EventTiming timing_;
  service::EventClock clock_;
  service::RoundMemory memory_;
};

}  // namespace

SimulationResult simulate(const Cluster& cluster, std::vector<SimJob> jobs, Scheduler& scheduler,
                          const SimulationOptions& options) {
  SimulationResult result;
  if (jobs.empty()) return result;
  std::vector<double> isolated;
  for (const auto& job : jobs) isolated.push_back(isolatedRunTime(job, cluster));
  std::vector<Contention> contention(jobs.size());
  std::vector<size_t> active;  // indices into jobs, in submit order
  size_t arrived = 0, completed = 0;
  RoundTimer timer(options);
  const double give_up = jobs.back().spec().submit_time + kGiveUpAfterS;
  for (double now = 0, next = 0; completed < jobs.size(); now = next) {
    if (now > give_up) throw std::runtime_error("jobs still unfinished a year after the last arrival");
    if (active.empty() && arrived < jobs.size() && jobs[arrived].spec().submit_time > now) {
      now = jobs[arrived].spec().submit_time;  // idle cluster: skip ahead to the next arrival
    }
    for (; arrived < jobs.size() && jobs[arrived].spec().submit_time <= now; ++arrived) {
      active.push_back(arrived);
    }
    std::vector<const SimJob*> view;
    for (size_t index : active) view.push_back(&jobs[index]);
    const auto decision = timedDecision(scheduler, now, view, result.round_ms);
    checkFits(cluster, decision);
    bool changed = false;
    std::map<size_t, std::map<std::string, int>> before;  // each job's GPUs before the round
    for (size_t index : active) {
      SimJob& job = jobs[index];
      before[index] =
          job.assignment() ? job.assignment()->gpus_by_node : std::map<std::string, int>{};
      const auto found = decision.find(job.name());
      changed |= job.assign(found == decision.end() ? std::nullopt : std::optional(found->second),
                            cluster, now);
    }
    waitForLeavingGpus(cluster, jobs, active, before);
    next = timer.next(now, jobs, active, arrived, changed);
    for (size_t index : active) {
      SimJob& job = jobs[index];
      contention[index].jobs_seen += static_cast<double>(active.size()) * (next - now);
      contention[index].seconds += next - now;
      if (options.record_timeline && job.assignment()) {
        result.timeline.push_back({now, next - now, job.name(), job.gpuType(),
                                   job.assignment()->totalGpus(), job.assignment()->batchSize()});
      }
      job.advance(now, next - now);
    }
    std::vector<size_t> still_active;
    for (size_t index : active) {
      if (jobs[index].finished()) {
        ++completed;
      } else {
        still_active.push_back(index);
      }
    }
    active = std::move(still_active);
    if (options.on_round) options.on_round(next, completed, jobs.size());
  }
  for (size_t i = 0; i < jobs.size(); ++i) {
    const double share = cluster.totalGpus() / contention[i].mean();
    result.jobs.push_back(resultOf(jobs[i], isolated[i], fairShareRunTime(jobs[i], cluster, share)));
  }
  return result;
}

}  // namespace pollux::sim
