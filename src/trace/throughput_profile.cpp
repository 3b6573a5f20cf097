// SPDX-License-Identifier: GPL-2.0-or-later
#include "throughput_profile.hpp"

#include <algorithm>
#include <stdexcept>

#include "interpolate.hpp"

namespace pollux::trace {

namespace {

std::string digitsOf(const GpusPerNode& placement) {
  std::string digits;
  for (int gpus : placement) digits += static_cast<char>('0' + gpus);
  return digits;
}

std::string sortedDigits(std::string digits) {
  std::sort(digits.begin(), digits.end());
  return digits;
}

StepTiming mean(const std::vector<StepTiming>& timings) {
  StepTiming sum{0, 0};
  for (const auto& timing : timings) {
    sum.step_time += timing.step_time;
    sum.sync_time += timing.sync_time;
  }
  const double count = static_cast<double>(timings.size());
  return {sum.step_time / count, sum.sync_time / count};
}

StepTiming blendTimings(const StepTiming& lo, const StepTiming& hi, double weight) {
  return {blend(lo.step_time, hi.step_time, weight), blend(lo.sync_time, hi.sync_time, weight)};
}

}  // namespace

double optimizerStepTime(const StepTiming& timing, int accum_steps) {
  return timing.step_time + accum_steps * (timing.step_time - timing.sync_time);
}

std::string canonicalRotation(const std::string& digits) {
  std::string best = digits;
  for (size_t shift = 1; shift < digits.size(); ++shift) {
    best = std::min(best, digits.substr(shift) + digits.substr(0, shift));
  }
  return best;
}

StepTiming ThroughputProfile::Curve::at(double bsz) const {
  const Bracket b = bracket(local_bsz, bsz);
  return blendTimings(timings[b.lo], timings[b.hi], b.weight);
}

ThroughputProfile::Curve ThroughputProfile::makeCurve(const CurvePoints& points) {
  Curve curve;
  for (const auto& [bsz, timings] : points) {
    curve.local_bsz.push_back(bsz);
    curve.timings.push_back(mean(timings));
  }
  return curve;
}

ThroughputProfile::ThroughputProfile(const std::vector<ProfileRow>& placements,
                                     const std::vector<ProfileRow>& scalability) {
  if (placements.empty()) throw std::invalid_argument("empty placements profile");
  std::map<std::string, CurvePoints> rotation_points;
  std::map<std::string, CurvePoints> multiset_points;
  std::map<std::pair<int, int>, CurvePoints> grid_points;
  min_local_bsz_ = max_local_bsz_ = placements.front().local_bsz;
  for (const auto& row : placements) {
    const StepTiming timing{row.step_time, row.sync_time};
    rotation_points[canonicalRotation(row.placement_digits)][row.local_bsz].push_back(timing);
    multiset_points[sortedDigits(row.placement_digits)][row.local_bsz].push_back(timing);
    grid_points[{row.placement.num_nodes, row.placement.num_replicas}][row.local_bsz].push_back(
        timing);
    min_local_bsz_ = std::min(min_local_bsz_, row.local_bsz);
    max_local_bsz_ = std::max(max_local_bsz_, row.local_bsz);
  }
  for (const auto& row : scalability) {
    grid_points[{row.placement.num_nodes, row.placement.num_replicas}][row.local_bsz].push_back(
        {row.step_time, row.sync_time});
  }
  for (const auto& [digits, points] : rotation_points) by_rotation_[digits] = makeCurve(points);
  for (const auto& [digits, points] : multiset_points) by_multiset_[digits] = makeCurve(points);
  for (const auto& [key, points] : grid_points) {
    const auto [nodes, replicas] = key;
    if (grid_nodes_.empty() || grid_nodes_.back() != nodes) {
      grid_nodes_.push_back(nodes);
      grid_replicas_.emplace_back();
      grid_curves_.emplace_back();
    }
    grid_replicas_.back().push_back(replicas);
    grid_curves_.back().push_back(makeCurve(points));
  }
}

StepTiming ThroughputProfile::timing(const GpusPerNode& placement, int local_bsz) const {
  const std::string digits = digitsOf(placement);
  if (auto found = by_rotation_.find(canonicalRotation(digits)); found != by_rotation_.end()) {
    return found->second.at(local_bsz);
  }
  if (auto found = by_multiset_.find(sortedDigits(digits)); found != by_multiset_.end()) {
    return found->second.at(local_bsz);
  }
  int replicas = 0;
  for (int gpus : placement) replicas += gpus;
  return gridTiming(static_cast<int>(placement.size()), replicas, local_bsz);
}

StepTiming ThroughputProfile::gridTiming(int num_nodes, int num_replicas, int local_bsz) const {
  const Bracket b = bracket(grid_nodes_, num_nodes);
  return blendTimings(gridTimingAtNodes(b.lo, num_replicas, local_bsz),
                      gridTimingAtNodes(b.hi, num_replicas, local_bsz), b.weight);
}

StepTiming ThroughputProfile::gridTimingAtNodes(size_t node_index, int num_replicas,
                                                int local_bsz) const {
  const auto& curves = grid_curves_[node_index];
  const Bracket b = bracket(grid_replicas_[node_index], num_replicas);
  return blendTimings(curves[b.lo].at(local_bsz), curves[b.hi].at(local_bsz), b.weight);
}

}  // namespace pollux::trace
