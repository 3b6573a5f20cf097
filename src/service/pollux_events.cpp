// SPDX-License-Identifier: GPL-2.0-or-later
// The event-round functions of pollux_service.h over event_rounds.hpp. Every entry point
// that may throw catches everything: an exception must never unwind into slurmctld.
#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "common/invalid_input.hpp"
#include "common/slurm_text/adaptive_comment.hpp"
#include "event_rounds.hpp"
#include "pollux_service.h"

struct pollux_events {
  pollux::service::RoundMemory memory;
  pollux::service::EventClock clock;
  pollux::service::JobsSeen seen;
  std::optional<pollux::service::NewWork> found;  // by the last look
  bool round_changed = false;  // Slurm took an action of the last round recorded
};

namespace {

using pollux::service::Due;
using pollux::service::EventJob;
using pollux::service::EventJobState;
using pollux::service::EventTiming;
using pollux::service::JobStateBrief;
using pollux::service::NewWork;
using pollux::service::RoundAction;

EventTiming timingOf(const pollux_service_t* service) {
  return {pollux_service_interval(service) * int64_t{1000},
          pollux_service_event_delay(service) * int64_t{1000}};
}

EventJobState stateOf(int state) {
  switch (state) {
    case POLLUX_JOB_PENDING: return EventJobState::kPending;
    case POLLUX_JOB_RUNNING: return EventJobState::kActive;
    default: return EventJobState::kDone;
  }
}

// Whether an adaptive job's comment names it a part of another (a malformed one does not).
bool isPart(const char* comment) {
  try {
    const auto request = pollux::schema::parseAdaptiveComment(comment);
    return request && request->part_of;
  } catch (const pollux::InvalidInput&) {
    return false;
  }
}

std::vector<EventJob> jobsFrom(const pollux_event_job_t* jobs, size_t count) {
  std::vector<EventJob> converted;
  converted.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    const pollux_event_job_t& job = jobs[i];
    const bool adaptive = job.comment && pollux::schema::asksForAdaptive(job.comment);
    converted.push_back({job.job_id, stateOf(job.state), adaptive, job.completing != 0,
                         job.restarts, adaptive && isPart(job.comment)});
  }
  return converted;
}

std::vector<JobStateBrief> statesFrom(const pollux_event_state_t* states, size_t count) {
  std::vector<JobStateBrief> converted;
  converted.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    converted.push_back({states[i].job_id, stateOf(states[i].state), states[i].completing != 0});
  }
  return converted;
}

// 1 with the reason copied when `found`, else 0; kept for pollux_events_checked.
int reported(pollux_events_t* events, std::optional<NewWork> found, char* reason,
             size_t reason_size) {
  events->found = std::move(found);
  if (!events->found) return 0;
  if (reason_size) std::snprintf(reason, reason_size, "%s", events->found->reason.c_str());
  return 1;
}

// Whether Slurm took any action of the plan.
bool changedAny(const pollux_plan_t* plan) {
  for (size_t i = 0; plan && i < plan->action_count; ++i) {
    if (plan->actions[i].error_code == 0) return true;
  }
  return false;
}

// What each action of a carried-out plan did, as Slurm took it.
std::vector<RoundAction> actionsOf(const pollux_plan_t* plan) {
  std::vector<RoundAction> acted;
  if (!plan) return acted;
  for (size_t i = 0; i < plan->action_count; ++i) {
    const pollux_action_t& action = plan->actions[i];
    const bool taken = action.error_code == 0;
    const bool requeued = taken && action.kind == POLLUX_ACTION_REQUEUE;
    acted.push_back({action.job_id, taken && action.kind == POLLUX_ACTION_START, requeued,
                     requeued && action.num_nodes > 0,
                     action.error_code == POLLUX_ACTION_DEFERRED});
  }
  return acted;
}

int dueCode(Due due) {
  switch (due) {
    case Due::kCheck: return POLLUX_DUE_CHECK;
    case Due::kEventRound: return POLLUX_DUE_EVENT_ROUND;
    case Due::kRound: return POLLUX_DUE_ROUND;
    case Due::kNothing: break;
  }
  return POLLUX_DUE_NOTHING;
}

bool invalidArray(const void* array, size_t count) { return !array && count; }

}  // namespace

extern "C" {

pollux_events_t* pollux_events_create(const pollux_service_t* service, int64_t now_ms) {
  return new (std::nothrow) pollux_events{{}, {now_ms, timingOf(service)}, {}, {}, false};
}

void pollux_events_destroy(pollux_events_t* events) { delete events; }

int64_t pollux_events_wake(const pollux_events_t* events, const pollux_service_t* service) {
  return events ? events->clock.wake(timingOf(service)) : INT64_MAX;
}

int pollux_events_due(const pollux_events_t* events, const pollux_service_t* service,
                      int64_t now_ms) {
  return events ? dueCode(events->clock.due(now_ms, timingOf(service))) : POLLUX_DUE_NOTHING;
}

int pollux_events_new_work(pollux_events_t* events, const pollux_event_job_t* jobs,
                           size_t count, char* reason, size_t reason_size) {
  if (!events || invalidArray(jobs, count) || invalidArray(reason, reason_size)) {
    errno = EINVAL;
    return -1;
  }
  try {
    const auto loaded = jobsFrom(jobs, count);
    events->seen.loaded(loaded);
    return reported(events, events->memory.newWork(loaded), reason, reason_size);
  } catch (...) {  // only std::bad_alloc: nothing else throws
    errno = ENOMEM;
    return -1;
  }
}

int pollux_events_new_work_from_states(pollux_events_t* events,
                                       const pollux_event_state_t* states, size_t count,
                                       char* reason, size_t reason_size) {
  if (!events || invalidArray(states, count) || invalidArray(reason, reason_size)) {
    errno = EINVAL;
    return -1;
  }
  try {
    const auto jobs = events->seen.fromStates(statesFrom(states, count));
    if (!jobs) return 2;
    return reported(events, events->memory.newWork(*jobs), reason, reason_size);
  } catch (...) {  // only std::bad_alloc: nothing else throws
    errno = ENOMEM;
    return -1;
  }
}

size_t pollux_events_records_needed(const pollux_events_t* events, uint32_t* ids,
                                    size_t capacity) {
  if (!events) return 0;
  const auto& needed = events->seen.needed();
  if (ids) std::copy_n(needed.begin(), std::min(capacity, needed.size()), ids);
  return needed.size();
}

int pollux_events_learn(pollux_events_t* events, const pollux_event_job_t* jobs, size_t count) {
  if (!events || invalidArray(jobs, count)) {
    errno = EINVAL;
    return -1;
  }
  try {
    events->seen.learned(jobsFrom(jobs, count));
    return 0;
  } catch (...) {  // only std::bad_alloc: nothing else throws
    errno = ENOMEM;
    return -1;
  }
}

void pollux_events_checked(pollux_events_t* events, const pollux_service_t* service,
                           int64_t now_ms, int found) {
  if (!events) return;
  if (!found) events->found.reset();
  else if (!events->found) events->found = NewWork{};  // found without a look: not ended only
  events->clock.checked(now_ms, timingOf(service), events->found);
}

int pollux_events_record_round(pollux_events_t* events, const pollux_event_job_t* jobs,
                               size_t count, const pollux_plan_t* plan) {
  if (!events || invalidArray(jobs, count) ||
      (plan && invalidArray(plan->actions, plan->action_count))) {
    errno = EINVAL;
    return -1;
  }
  try {
    const auto loaded = jobsFrom(jobs, count);
    const auto acted = actionsOf(plan);
    events->round_changed = changedAny(plan);
    events->seen.loaded(loaded);
    for (const auto& action : acted) {
      if (action.started) events->seen.started(action.job_id);
    }
    events->memory.record(loaded, acted);
    return 0;
  } catch (...) {  // only std::bad_alloc: nothing else throws
    events->memory.forget();
    events->round_changed = false;
    errno = ENOMEM;
    return -1;
  }
}

void pollux_events_ran(pollux_events_t* events, const pollux_service_t* service,
                       int64_t started_ms, int64_t ended_ms) {
  if (events) events->clock.ran(started_ms, ended_ms, timingOf(service), events->round_changed);
}

}  // extern "C"
