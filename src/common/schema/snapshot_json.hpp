// SPDX-License-Identifier: GPL-2.0-or-later
// The policy snapshot and decision JSON documents (docs/design.md section 6.3).
#pragma once

#include <string>

#include <json/json.h>

#include "common/policy/policy.hpp"
#include "json_reader.hpp"

namespace pollux::schema {

// Parses a snapshot document. Throws pollux::InvalidInput naming the offending path
// ("jobs[2].models.a100.gamma: must be ...") on malformed JSON, unknown keys or bad values.
// Optional keys: per job "progress" and "target_progress" (both or neither: the job's
// declared length, policy::Job::length), in params "objective" ("goodput" or "jct") and
// "jct_guard" (>= 1); absent, the job is undeclared and the params keep their defaults.
// Top-level "budgets" {name: units} and per job "budgets" [each of the top-level ones once:
// "name" (1 unit per GPU) or {"name": name, "per_gpu": units, "per_node": units}, each
// absent 0] (policy::Snapshot::budgets, Job::budgets); absent, none.
policy::Snapshot parseSnapshot(const std::string& text);

// The document parseSnapshot reads, every params key written (Params' own fields beyond the
// document's, exact_jobs and partition_jobs, are not part of it).
Json::Value snapshotToJson(const policy::Snapshot& snapshot);

// {"gpu_type": TYPE, "nodes": {name: gpus}}: an allocation in every document that has one.
Json::Value allocationToJson(const policy::Allocation& allocation);
// Reads that form; an optional "gpus" (the total, as the plugin's status shows it) must match.
policy::Allocation parseAllocation(const JsonField& field);

// {"allocations": {jobid: {gpu_type, nodes {name: gpus}, batch_size, local_bsz,
//  accum_steps[, remaining_s][, restarted_for]}}, "stats": {solve_ms, solver_status,
//  kept_current, candidate_configs}}; remaining_s only for jobs the policy estimated
//  (declared lengths), restarted_for only for a live move made by restart (the job id starting
//  on the GPUs it leaves).
Json::Value decisionToJson(const policy::Decision& decision);

}  // namespace pollux::schema
