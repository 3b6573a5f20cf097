// SPDX-License-Identifier: GPL-2.0-or-later
// Presenting a simulation: summary as text or JSON, the allocation timeline as CSV or a plot.
#pragma once

#include <ostream>
#include <string>

#include <json/json.h>

#include "metrics.hpp"
#include "simulation.hpp"

namespace pollux::sim {

void printSummary(std::ostream& out, const std::string& policy, const Summary& summary);
Json::Value summaryJson(const std::string& policy, const Summary& summary);

// time,job,gpu_type,gpus,batch_size per job and round. Throws std::runtime_error on I/O errors.
void writeTimeline(const std::string& path, const std::vector<TimelineRow>& timeline);

// name,application,submit_s,completion_s,jct_s,restarts,gpu_hours,isolated_s,fair_share_s per
// job, in
// submit order. Throws std::runtime_error on I/O errors.
void writeJobs(const std::string& path, const std::vector<JobResult>& jobs);

// Throws std::runtime_error unless `path` can be written (the file is created if missing), so
// a bad output path is found before a long simulation rather than after it.
void requireWritable(const std::string& path);

// Throws std::runtime_error unless a `gnuplot` executable is on PATH.
void requireGnuplot();
// Draws each job's GPUs over time (one row per job, colour = GPUs) into a PNG with gnuplot.
// Throws std::runtime_error if gnuplot fails.
void plotTimeline(const std::string& png_path, const SimulationResult& result);

}  // namespace pollux::sim
