// SPDX-License-Identifier: GPL-2.0-or-later
// What the agent's threads share: the measurements, the GPU type the job runs on and the
// decision to hand to the trainer. Every member is guarded by `mutex`.
#pragma once

#include <condition_variable>
#include <mutex>
#include <optional>
#include <string>

#include "channel_message.hpp"
#include "measurements.hpp"

namespace pollux::agent {

struct JobState {
  std::mutex mutex;
  std::condition_variable wake_reporter;  // a report is due early, or the agent is stopping
  Measurements measurements;
  std::string gpu_type;               // empty until known
  std::optional<Decision> decision;   // the latest one that fits the job's current GPUs
  bool report_now = false;
  bool stopping = false;
};

}  // namespace pollux::agent
