// Reading AdaptDL application profiles (placements.csv, scalability.csv) from disk.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "model/params.hpp"

namespace pollux::trace {

// A malformed or unreadable trace file; the message names the file and line.
class TraceError : public std::runtime_error {
 public:
  explicit TraceError(const std::string& what) : std::runtime_error(what) {}
};

// One measured step of an application: its placement, per-GPU batch and timings (seconds).
struct ProfileRow {
  model::Placement placement;
  int local_bsz;
  double step_time;
  double sync_time;
};

// "22" -> 2 nodes, 4 replicas: one digit (1-9) per node, each the GPUs used on that node.
model::Placement parsePlacementDigits(const std::string& digits);

// placement,local_bsz,step_time,sync_time
std::vector<ProfileRow> readPlacements(const std::string& path);
// num_nodes,num_replicas,local_bsz,step_time,sync_time
std::vector<ProfileRow> readScalability(const std::string& path);

}  // namespace pollux::trace
