// SPDX-License-Identifier: GPL-2.0-or-later
// Reading application profiles (placements, scalability and validation curves) from disk.
// Columns are found by header name, so both the AdaptDL and the Sia column orders work.
#pragma once

#include <string>
#include <vector>

#include "csv.hpp"
#include "common/model/params.hpp"

namespace pollux::trace {

// One measured step of an application: its placement, per-GPU batch and timings (seconds).
struct ProfileRow {
  model::Placement placement;
  int local_bsz;
  double step_time;
  double sync_time;
  std::string placement_digits;  // GPUs per node as in placements.csv; empty for scalability rows
};

// "22" -> 2 nodes, 4 replicas: one digit (1-9) per node, each the GPUs used on that node.
model::Placement parsePlacementDigits(const std::string& digits);

// Columns placement,local_bsz,step_time,sync_time (any order).
std::vector<ProfileRow> readPlacements(const std::string& path);
// Columns num_nodes,num_replicas,local_bsz,step_time,sync_time (any order).
std::vector<ProfileRow> readScalability(const std::string& path);

// One point of a training run at a fixed total batch size (validation-B.csv).
struct ValidationRow {
  double progress;  // efficiency-weighted iterations at the initial batch size
  double grad_sqr;
  double grad_var;
};

// Columns progress,grad_sqr,grad_var (others ignored); rows must have increasing progress.
std::vector<ValidationRow> readValidation(const std::string& path);

}  // namespace pollux::trace
