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

}  // namespace pollux::client
