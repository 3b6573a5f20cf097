// SPDX-License-Identifier: GPL-2.0-or-later
// Event rounds (pollux_event_delay): new work starts a round before the next regular one.
//
// New work is an adaptive job pending (and done completing) that the last round did not see
// so, or that has been requeued since (a new submission, a job requeued by a user or by
// Slurm, even one the round had started or was waiting), or a job that held resources at the
// last round (or was started by it) and has ended since, while an adaptive job is pending or
// the ended job was adaptive, or a job whose placement the last round deferred (its time for
// placements spent, POLLUX_ACTION_DEFERRED) while Slurm still has it. What the last round did
// (start, hold, shrink a job, or requeue one to be held) is no new work, so those actions
// never start a round; a job it requeued to restart on new nodes is, once its last run is
// done: Slurm then pushes the job's begin time out by its requeue delay, and a round lets it
// begin. So is a part of an adaptive job (a live
// growth, job_parts.hpp) that the last round started, once it runs: a round tells its job's
// launcher and agent, whose workers then join.
//
// After rounds for ended jobs alone that changed nothing, the next such round waits 2, 4, 8,
// then 16 delays from the last round (new adaptive jobs, requeues and parts still wait one),
// until a round changes something. A cluster full of rigid work whose job ends free nothing
// an adaptive job can take is not planned again every second.
//
// An event round also waits nine times as long as the last round took (at most four delays),
// so that rounds hold the scheduling thread (and slurmctld's attention) at most about a
// tenth of the time: a large, busy cluster, whose rounds take hundreds of milliseconds, has
// fewer, larger rounds while jobs arrive in bursts; a small one, whose rounds take
// milliseconds, is not slowed.
//
// Pure logic on brief job records and a monotonic clock in milliseconds: the plugin (through
// pollux_service.h), pollux-sim and pollux-replay run the same rules.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace pollux::service {

// What a look for new work needs of one job.
enum class EventJobState {
  kPending,
  kActive,  // running or suspended: holds its nodes
  kDone,    // anything else
};
struct EventJob {
  uint32_t id = 0;
  EventJobState state = EventJobState::kDone;
  bool adaptive = false;    // its comment asks for adaptive scheduling
  bool completing = false;  // still releasing its nodes
  uint32_t restarts = 0;    // Slurm's restart count: requeues so far
  bool part = false;        // a part of an adaptive job (comment adaptive:part_of=J)
};

// What a round did to one job.
struct RoundAction {
  uint32_t job_id = 0;
  bool started = false;   // a pending job it placed (Slurm took the update): it will hold nodes
  bool requeued = false;  // a running job it requeued (Slurm took it) ...
  bool restarts = false;  // ... and placed anew to restart (Slurm took both); else it is held
  bool deferred = false;  // a placement the round left for the next round
};

// New work a look found: why (for the log), and whether it is only jobs that ended.
struct NewWork {
  std::string reason;
  bool ended_only = false;
};

// What the last round saw and did. Before any round, every pending adaptive job is new work.
class RoundMemory {
 public:
  // Remembers the jobs a round loaded and those it acted on, replacing what was remembered.
  void record(const std::vector<EventJob>& jobs, const std::vector<RoundAction>& acted);
  void forget();
  // The new work (its reason for the log: "JobId=N ...") that `jobs`, loaded now, show since
  // the recorded round.
  std::optional<NewWork> newWork(const std::vector<EventJob>& jobs) const;

 private:
  bool isNew(const EventJob& job) const;

  // Adaptive jobs pending and done completing, and jobs the round acted on (but those it
  // requeued to restart), with their restart count after the round.
  std::unordered_map<uint32_t, uint32_t> waiting_;
  std::unordered_set<uint32_t> restarting_;  // requeued by the round to restart
  std::unordered_set<uint32_t> starting_parts_;  // parts it started
  std::unordered_set<uint32_t> deferred_;        // placements it left for the next round
  // Jobs active or completing that it did not act on, and those it started.
  std::unordered_set<uint32_t> holding_;
};

// A job as Slurm's query of job states (23.02 on) shows it: no comment, no restart count.
struct JobStateBrief {
  uint32_t id = 0;
  EventJobState state = EventJobState::kDone;
  bool completing = false;
};

// What the last load of every job's record (a round's, or a look for new work's) showed of
// each job, so that a look for new work can go by the jobs' states alone: a cheap query
// where loading every record each second costs slurmctld and the plugin most of their time.
class JobsSeen {
 public:
  // Replaces what is known by the records loaded now.
  void loaded(const std::vector<EventJob>& jobs);
  // A round started the job: until Slurm shows it running, the states cannot tell a start
  // still to come from a failed launch requeued since.
  void started(uint32_t id);
  // Adds or replaces what records loaded one by one (those needed()) show.
  void learned(const std::vector<EventJob>& jobs);
  // The jobs now, from their states and what the loads showed of each; nullopt when the
  // states cannot tell: a job no load showed (its comment is unknown) or one pending again
  // since it was last seen otherwise (requeued: its restart count is unknown). Then load
  // those jobs' records (needed()), or every record. The states seen are kept, so that a
  // requeue between two looks shows.
  std::optional<std::vector<EventJob>> fromStates(const std::vector<JobStateBrief>& states);
  // The jobs whose records the last fromStates() that could not tell needed.
  const std::vector<uint32_t>& needed() const { return needed_; }

 private:
  std::unordered_map<uint32_t, EventJob> jobs_;
  std::vector<uint32_t> needed_;
};

// pollux_interval and pollux_event_delay (0: regular rounds only), in milliseconds.
struct EventTiming {
  int64_t interval_ms = 0;
  int64_t delay_ms = 0;
};

enum class Due {
  kNothing,
  kCheck,       // look for new work, then EventClock::checked()
  kEventRound,  // run a round for the new work found, then EventClock::ran()
  kRound,       // run a regular round, then EventClock::ran()
};

// When to look for new work and when a round is due, on a monotonic clock in milliseconds.
// A regular round is due an interval after the end of the last round of either kind; with a
// delay, a look for new work every delay and an event round when it found some, at most one
// round per delay (counted from the end of the last round), and for ended jobs alone after
// such rounds that changed nothing, at most one per 2, 4, 8, then 16 delays; and never
// sooner than nine times the last round's duration (at most four delays) after its end.
class EventClock {
 public:
  EventClock(int64_t now_ms, const EventTiming& timing);
  // The time at which something becomes due.
  int64_t wake(const EventTiming& timing) const;
  // What is due at `now_ms`; a regular round first.
  Due due(int64_t now_ms, const EventTiming& timing) const;
  // A look at `now_ms` found new work, or none (nullopt).
  void checked(int64_t now_ms, const EventTiming& timing, const std::optional<NewWork>& found);
  // A round of either kind ran from `started_ms` to `ended_ms`: the delay and the interval
  // count from its end. `changed`: it changed some job's resources.
  void ran(int64_t started_ms, int64_t ended_ms, const EventTiming& timing, bool changed);

 private:
  int64_t eventRoundAllowed(const EventTiming& timing) const;

  int64_t next_round_ms_;
  int64_t next_check_ms_;
  std::optional<int64_t> last_round_ms_;  // end of the last round of either kind
  int64_t last_round_took_ms_ = 0;
  bool work_found_ = false;               // found by a check, not yet handled by a round
  bool ended_only_ = false;               // ... and it is only jobs that ended
  int fruitless_rounds_ = 0;  // rounds for ended jobs alone in a row that changed nothing
};

}  // namespace pollux::service
