#include "simulation.hpp"

#include <algorithm>
#include <chrono>
#include <stdexcept>

#include "rigid.hpp"

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

JobResult resultOf(const SimJob& job, double isolated_s, double fair_share_s) {
  return {job.name(), job.spec().application, job.spec().submit_time, *job.completionTime(),
          job.restarts(), job.gpuSeconds(), isolated_s, fair_share_s};
}

// Active jobs seen by each job, integrated over the time it was active, and that time.
struct Contention {
  double jobs_seen = 0;
  double seconds = 0;
  double mean() const { return seconds <= 0 ? 1.0 : jobs_seen / seconds; }
};

// When the round after the one at `now` runs: round_s later, or event_delay_s after the first
// arrival or completion before that (not sooner than event_delay_s after `now`).
double nextRound(double now, const std::vector<SimJob>& jobs, const std::vector<size_t>& active,
                 size_t arrived, const SimulationOptions& options) {
  const double regular = now + options.round_s;
  if (options.event_delay_s <= 0) return regular;
  double event = regular;
  if (arrived < jobs.size()) event = std::min(event, jobs[arrived].spec().submit_time);
  for (size_t index : active) event = std::min(event, now + jobs[index].remainingTime());
  return std::min(regular, std::max(event, now) + options.event_delay_s);
}

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
    for (size_t index : active) {
      SimJob& job = jobs[index];
      const auto found = decision.find(job.name());
      job.assign(found == decision.end() ? std::nullopt : std::optional(found->second), cluster, now);
    }
    next = nextRound(now, jobs, active, arrived, options);
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
