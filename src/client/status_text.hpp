// SPDX-License-Identifier: GPL-2.0-or-later
// How `scontrol show pollux` writes entries of sched/pollux's status JSON as text.
#pragma once

#include <string>

#include <json/json.h>

namespace pollux::client {

// The line for a job's "length" entry: "Progress=P TargetProgress=T (X %)
// Remaining=[D-]HH:MM:SS", Remaining=unknown without an estimate, "Remaining=unknown (target
// reached)" once the progress reached the target; "" for a job without the entry.
std::string lengthText(const Json::Value& job);

// Seconds as Slurm writes durations: [D-]HH:MM:SS (rounded to the second).
std::string durationText(double seconds);

// A time (seconds since the epoch) as scontrol writes one: YYYY-MM-DDTHH:MM:SS, local time.
std::string timeText(double epoch_s);

// One job of the status as `scontrol show pollux` writes it, in scontrol's manner: rounded
// figures, N/A where a value is not known yet (no report), and for a rigid job only what
// Pollux knows of it (its request). Ends with an empty line.
std::string jobText(const Json::Value& job);

// The whole status: the last round, one line per GPU node, then each job (jobText).
std::string statusText(const Json::Value& status);

}  // namespace pollux::client
