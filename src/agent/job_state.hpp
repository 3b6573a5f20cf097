// SPDX-License-Identifier: GPL-2.0-or-later
// What the agent's threads share: the measurements, the GPU type the job runs on and the
// decision to hand to the trainer. Every member is guarded by `mutex`.
#pragma once

#include <condition_variable>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "channel_message.hpp"
#include "common/model/params.hpp"
#include "live_shrink.hpp"
#include "measurements.hpp"

namespace pollux::agent {

struct JobState {
  std::mutex mutex;
  std::condition_variable wake_reporter;  // a report is due early, or the agent is stopping
  Measurements measurements;
  std::string gpu_type;               // empty until known
  std::optional<Decision> decision;   // the latest one that fits the job's current GPUs
  model::Placement placement;         // the step's nodes and workers, as live changes leave it
  bool elastic = false;               // the trainer changes its world size live
  // One of this node's workers is the job's rank 0: this agent reports for the job, keeps its
  // measurements and carries out its live changes. Rank 0 of the job's own step at first;
  // the agent of the worker that becomes rank 0 after a live change that rank 0 left.
  bool leads = false;
  // This run's trainer said hello: until then a report (from the measurements a restarted
  // run restores) could not say what the trainer is, elastic or not.
  bool trainer_said_hello = false;
  std::optional<LiveShrink> live_shrink;  // the lead: the step's in-place shrink
  // The lead: the growths through the job's parts, oldest first (a stack: parts leave newest
  // first). A part that left stays, marked left, so that it is not joined again.
  std::vector<LiveJoin> live_joins;
  // The lead: the step's nodes whose workers left live (the step's shrink in place, or of the
  // part it runs in): the job's workers no longer run there.
  std::set<std::string> step_nodes_left;
  bool report_now = false;
  bool stopping = false;

  // `leads`, read under the mutex by a caller that does not hold it.
  bool leadsNow() {
    std::lock_guard<std::mutex> guard(mutex);
    return leads;
  }
};

}  // namespace pollux::agent
