// The policy snapshot and decision JSON documents of DESIGN.md section 5.
#pragma once

#include <string>

#include <json/json.h>

#include "common/policy/policy.hpp"
#include "json_reader.hpp"

namespace pollux::schema {

// Parses a snapshot document. Throws pollux::InvalidInput naming the offending path
// ("jobs[2].models.a100.gamma: must be ...") on malformed JSON, unknown keys or bad values.
policy::Snapshot parseSnapshot(const std::string& text);

// {"gpu_type": TYPE, "nodes": {name: gpus}}: an allocation in every document that has one.
Json::Value allocationToJson(const policy::Allocation& allocation);
// Reads that form; an optional "gpus" (the total, as the plugin's status shows it) must match.
policy::Allocation parseAllocation(const JsonField& field);

// {"allocations": {jobid: {gpu_type, nodes {name: gpus}, batch_size, local_bsz,
//  accum_steps}}, "stats": {solve_ms, solver_status, kept_current, candidate_configs}}
Json::Value decisionToJson(const policy::Decision& decision);

}  // namespace pollux::schema
