// SPDX-License-Identifier: GPL-2.0-or-later
#include "event_rounds.hpp"

#include <algorithm>

namespace pollux::service {

namespace {

// A pending adaptive job that may start now (a requeued one releases its nodes first).
bool waitsToStart(const EventJob& job) {
  return job.adaptive && job.state == EventJobState::kPending && !job.completing;
}

// Rounds for ended jobs that changed nothing double the wait of the next this often.
constexpr int kMostDoublings = 4;

// An event round waits this many times the last round's duration (rounds take at most a
// tenth of the time), but at most this many delays: a round that started hundreds of jobs
// is followed by another soon.
constexpr int64_t kPausePerRoundTime = 9;
constexpr int64_t kMostPauseDelays = 4;

// "1 job", "2 jobs".
std::string counted(size_t count, const char* noun) {
  return std::to_string(count) + " " + noun + (count == 1 ? "" : "s");
}

// The first job of a kind among those loaded, and how many there are.
struct Tally {
  size_t count = 0;
  uint32_t first = 0;
  void add(uint32_t id) {
    if (count++ == 0) first = id;
  }
};

}  // namespace

void RoundMemory::forget() {
  waiting_.clear();
  restarting_.clear();
  holding_.clear();
  starting_parts_.clear();
  deferred_.clear();
}

void RoundMemory::record(const std::vector<EventJob>& jobs, const std::vector<RoundAction>& acted) {
  std::unordered_map<uint32_t, uint32_t> restarts_now;
  std::unordered_set<uint32_t> parts;
  for (const auto& job : jobs) {
    restarts_now[job.id] = job.restarts;
    if (job.part) parts.insert(job.id);
  }
  forget();
  std::unordered_set<uint32_t> acted_on;
  for (const auto& action : acted) {
    acted_on.insert(action.job_id);
    if (action.deferred) {
      deferred_.insert(action.job_id);
    } else if (action.restarts) {
      restarting_.insert(action.job_id);
    } else {
      // The restart count Slurm shows for the job after the round's action on it.
      waiting_[action.job_id] = restarts_now[action.job_id] + (action.requeued ? 1 : 0);
    }
    if (action.started) holding_.insert(action.job_id);
    if (action.started && parts.count(action.job_id)) starting_parts_.insert(action.job_id);
  }
  for (const auto& job : jobs) {
    if (acted_on.count(job.id)) continue;
    if (waitsToStart(job)) {
      waiting_[job.id] = job.restarts;
    } else if (job.state == EventJobState::kActive || job.completing) {
      holding_.insert(job.id);
    }
  }
}

// Not waiting at the last round, or requeued since (by its user or by Slurm).
bool RoundMemory::isNew(const EventJob& job) const {
  const auto seen = waiting_.find(job.id);
  return seen == waiting_.end() || job.restarts > seen->second;
}

std::optional<NewWork> RoundMemory::newWork(const std::vector<EventJob>& jobs_now) const {
  Tally new_jobs, restarting, ended, parts_running, deferred;
  size_t pending_adaptive = 0, still_held = 0;
  bool adaptive_ended = false;
  for (const auto& job : jobs_now) {
    if (deferred_.count(job.id) && job.state != EventJobState::kDone) deferred.add(job.id);
    if (waitsToStart(job)) {
      pending_adaptive++;
      if (restarting_.count(job.id)) {
        restarting.add(job.id);
      } else if (isNew(job)) {
        new_jobs.add(job.id);
      }
    }
    if (starting_parts_.count(job.id) && job.state == EventJobState::kActive) {
      parts_running.add(job.id);
    }
    if (!holding_.count(job.id)) continue;
    // Ended and done completing; a job pending again (requeued) is new work above, if
    // adaptive, once it is done completing.
    if (job.state != EventJobState::kDone || job.completing) {
      still_held++;
    } else {
      ended.add(job.id);
      adaptive_ended |= job.adaptive;
    }
  }
  // Jobs of the last round Slurm no longer has (purged after MinJobAge) ended too.
  const size_t ended_count = std::max(ended.count, holding_.size() - still_held);
  if (deferred.count) {
    return NewWork{"JobId=" + std::to_string(deferred.first) +
                   " placement deferred by the last round (" +
                   counted(deferred.count, "such job") + ")"};
  }
  if (new_jobs.count) {
    return NewWork{"JobId=" + std::to_string(new_jobs.first) +
                   " adaptive, pending since the last round (" +
                   counted(new_jobs.count, "such job") + ")"};
  }
  if (parts_running.count) {
    return NewWork{"JobId=" + std::to_string(parts_running.first) +
                   " part started, its job's workers can join (" +
                   counted(parts_running.count, "such part") + ")"};
  }
  if (restarting.count) {
    return NewWork{"JobId=" + std::to_string(restarting.first) +
                   " requeued to restart, its last run done (" +
                   counted(restarting.count, "such job") + ")"};
  }
  if (ended_count == 0 || (!pending_adaptive && !adaptive_ended)) return std::nullopt;
  const std::string pending = counted(pending_adaptive, "adaptive job") + " pending";
  if (!ended.count) {
    return NewWork{counted(ended_count, "job") + " ended since the last round, " + pending, true};
  }
  return NewWork{"JobId=" + std::to_string(ended.first) + " ended (" +
                     counted(ended_count, "job") + " since the last round), " + pending,
                 true};
}

void JobsSeen::loaded(const std::vector<EventJob>& jobs) {
  jobs_.clear();
  learned(jobs);
}

void JobsSeen::learned(const std::vector<EventJob>& jobs) {
  for (const auto& job : jobs) jobs_[job.id] = job;
}

void JobsSeen::started(uint32_t id) {
  const auto seen = jobs_.find(id);
  if (seen != jobs_.end()) seen->second.state = EventJobState::kActive;
}

std::optional<std::vector<EventJob>> JobsSeen::fromStates(
    const std::vector<JobStateBrief>& states) {
  std::vector<EventJob> jobs;
  jobs.reserve(states.size());
  needed_.clear();
  for (const auto& state : states) {
    const auto seen = jobs_.find(state.id);
    const bool pending_again = seen != jobs_.end() && state.state == EventJobState::kPending &&
                               seen->second.state != EventJobState::kPending;
    if (seen == jobs_.end() || pending_again) {
      needed_.push_back(state.id);
      continue;
    }
    jobs.push_back(seen->second);
    jobs.back().state = state.state;
    jobs.back().completing = state.completing;
  }
  if (!needed_.empty()) return std::nullopt;
  for (const auto& job : jobs) jobs_[job.id] = job;
  return jobs;
}

EventClock::EventClock(int64_t now_ms, const EventTiming& timing)
    : next_round_ms_(now_ms + timing.interval_ms), next_check_ms_(now_ms + timing.delay_ms) {}

// When an event round for work found may run: one delay after the last round (for ended jobs
// alone after such rounds that changed nothing, 2, 4, 8, then 16), and nine times as long as
// the last round took (at most 4 delays), or at once before the first.
int64_t EventClock::eventRoundAllowed(const EventTiming& timing) const {
  if (!last_round_ms_) return 0;
  const int delays = ended_only_ ? 1 << fruitless_rounds_ : 1;
  const int64_t pause =
      std::min(kPausePerRoundTime * last_round_took_ms_, kMostPauseDelays * timing.delay_ms);
  return *last_round_ms_ + std::max(delays * timing.delay_ms, pause);
}

int64_t EventClock::wake(const EventTiming& timing) const {
  if (timing.delay_ms <= 0) return next_round_ms_;
  int64_t event = next_check_ms_;
  if (work_found_) {
    event = ended_only_ ? std::min(eventRoundAllowed(timing), next_check_ms_)
                        : eventRoundAllowed(timing);
  }
  return std::min(event, next_round_ms_);
}

Due EventClock::due(int64_t now_ms, const EventTiming& timing) const {
  if (now_ms >= next_round_ms_) return Due::kRound;
  if (timing.delay_ms <= 0) return Due::kNothing;
  if (work_found_ && now_ms >= eventRoundAllowed(timing)) return Due::kEventRound;
  // While ended jobs alone wait, the looks go on: other new work waits one delay only.
  const bool looking = !work_found_ || ended_only_;
  return looking && now_ms >= next_check_ms_ ? Due::kCheck : Due::kNothing;
}

void EventClock::checked(int64_t now_ms, const EventTiming& timing,
                         const std::optional<NewWork>& found) {
  next_check_ms_ = now_ms + timing.delay_ms;
  work_found_ = found.has_value();
  ended_only_ = found && found->ended_only;
}

void EventClock::ran(int64_t started_ms, int64_t ended_ms, const EventTiming& timing,
                     bool changed) {
  const bool for_ended_jobs = work_found_ && ended_only_;
  if (changed) {
    fruitless_rounds_ = 0;
  } else if (for_ended_jobs) {
    fruitless_rounds_ = std::min(fruitless_rounds_ + 1, kMostDoublings);
  }
  last_round_ms_ = ended_ms;
  last_round_took_ms_ = std::max<int64_t>(0, ended_ms - started_ms);
  next_round_ms_ = ended_ms + timing.interval_ms;
  next_check_ms_ = ended_ms + timing.delay_ms;
  work_found_ = false;
}

}  // namespace pollux::service
