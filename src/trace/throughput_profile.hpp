// SPDX-License-Identifier: GPL-2.0-or-later
// One application's measured step times on one GPU type, interpolated for any allocation.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "profile.hpp"

namespace pollux::trace {

struct StepTiming {
  double step_time;  // seconds per micro-batch step including gradient synchronisation
  double sync_time;  // seconds of that step spent in the all-reduce
};

// GPUs used on each node of an allocation, e.g. {2, 2} for two nodes with two GPUs each.
using GpusPerNode = std::vector<int>;

// Seconds of one optimizer step with `accum_steps` extra accumulation micro-batches.
double optimizerStepTime(const StepTiming& timing, int accum_steps);

class ThroughputProfile {
 public:
  // Throws std::invalid_argument if `placements` is empty.
  ThroughputProfile(const std::vector<ProfileRow>& placements,
                    const std::vector<ProfileRow>& scalability);

  // The measured placement (its digits rotated to canonical form, then as a sorted multiset)
  // interpolated linearly over local_bsz; otherwise the (nodes, replicas) grid of all rows,
  // interpolated linearly over nodes, then replicas, then local_bsz (clamped at the edges).
  StepTiming timing(const GpusPerNode& placement, int local_bsz) const;

  int minLocalBsz() const { return min_local_bsz_; }
  int maxLocalBsz() const { return max_local_bsz_; }

 private:
  // Timings by local_bsz, sorted, duplicates averaged.
  struct Curve {
    std::vector<double> local_bsz;
    std::vector<StepTiming> timings;
    StepTiming at(double bsz) const;
  };
  using CurvePoints = std::map<int, std::vector<StepTiming>>;
  static Curve makeCurve(const CurvePoints& points);
  StepTiming gridTiming(int num_nodes, int num_replicas, int local_bsz) const;
  StepTiming gridTimingAtNodes(size_t node_index, int num_replicas, int local_bsz) const;

  std::map<std::string, Curve> by_rotation_;
  std::map<std::string, Curve> by_multiset_;
  std::vector<double> grid_nodes_;                  // distinct node counts, ascending
  std::vector<std::vector<double>> grid_replicas_;  // per node count: replica counts, ascending
  std::vector<std::vector<Curve>> grid_curves_;     // per node count and replica count
  int min_local_bsz_;
  int max_local_bsz_;
};

// Digits of a placement rotated to its lexicographically smallest rotation ("212" -> "122").
std::string canonicalRotation(const std::string& digits);

}  // namespace pollux::trace
