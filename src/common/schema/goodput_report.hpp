// SPDX-License-Identifier: GPL-2.0-or-later
// The goodput report an agent POSTs to /v1/jobs/<jobid>/report, and the plugin's reply
// (docs/design.md section 6.1).
#pragma once

#include <map>
#include <optional>
#include <string>

#include <json/json.h>

#include "common/model/goodput.hpp"
#include "common/model/params.hpp"
#include "common/policy/policy.hpp"
#include "json_reader.hpp"

namespace pollux::schema {

// How far training has come.
struct TrainingProgress {
  double examples;  // examples processed since the job started
  double epochs;
};

struct GoodputReport {
  std::string job_id;
  std::string gpu_type;        // the type the job runs on now
  model::Placement placement;  // num_nodes, num_replicas it runs on now
  // The agent's fitted model per GPU type it has measured. May be empty (nothing fitted yet),
  // and need not contain gpu_type: right after a move to a new type the agent has no fit
  // there yet, and the plugin estimates that type from the others (model/type_models.hpp).
  std::map<std::string, model::PerfParams> perf_params;
  model::GradParams grad;
  model::BatchLimits limits;
  TrainingProgress progress;
  std::optional<double> restart_cost_s;  // absent until the agent has measured a restart
  // The stall of the job's last live change of its world size (pollux.elastic: the last
  // step at the old size to the first at the new, no restart); absent until one was made
  // (and from agents older than the key). Charged for a live shrink instead of a restart.
  std::optional<double> resize_stall_s;
  // The job's steps are started by `pollux-agent --launch`, which restarts them inside the
  // job when sched/pollux shrinks it in place (optional key, false when absent).
  bool in_place_resize = false;
  // The trainer changes its world size live (pollux.elastic): an in-place shrink needs no
  // checkpoint, its leaving workers leave at an agreeing step (optional key, false when
  // absent).
  bool elastic = false;
  // The length the trainer declared and the work done towards it, both in the goodput
  // model's unit (examples at the initial batch size, statistical efficiency applied); absent
  // when the trainer declared none (and from agents older than the key). Key "length":
  // {"progress": P >= 0, "target_progress": T > 0}; P >= T means the declared work is done.
  std::optional<policy::DeclaredLength> length;
  // Seconds the joiners of the job's last live growth took, from its part running to their
  // admission, less the stall: the job trained at its old size meanwhile. Absent until one
  // joined (and from agents older than the key); the plugin then takes the restart cost.
  std::optional<double> join_startup_s;
  // The job's trainer has exited after finishing its training: the job ends once its script
  // does, so nothing is to change it meanwhile (optional key, false when absent).
  bool training_finished = false;
};

// Parses a report body. Every key but restart_cost_s, resize_stall_s, join_startup_s,
// in_place_resize, elastic, training_finished and length (absent or null) is required;
// perf_params may be {}. Throws pollux::InvalidInput naming the path of the offending value
// ("perf_params.a100: ...", "progress.epochs: ...", "length.target_progress: ...") on
// malformed JSON, unknown keys, NaN, infinite or negative numbers, inconsistent batch limits,
// or num_replicas < num_nodes.
// It does not compare job_id with the URL: the REST handler does.
GoodputReport parseGoodputReport(const std::string& body);

// The JSON object parseGoodputReport reads (job_id as a string).
Json::Value reportToJson(const GoodputReport& report);

// {"progress": P, "target_progress": T}: the report's "length" (P >= 0, T > 0; unknown keys
// refused). Throws pollux::InvalidInput naming the offending key.
policy::DeclaredLength parseDeclaredLength(const JsonField& field);
Json::Value declaredLengthToJson(const policy::DeclaredLength& length);

// The plugin's current decision for the job.
// A part of an adaptive job: a job of its user that holds more nodes for it, whose workers
// join it live (sched/pollux's live growth across nodes). kWanted: the plugin would grow the
// job live and asks its launcher to submit one; kPending: submitted, held until placed;
// kRunning: placed on `nodes`, its workers are to be started and joined; kLeaving: the job
// shrinks off it, its workers are to leave at an agreeing step (then it is cancelled).
struct PartStatus {
  enum class State { kWanted, kPending, kRunning, kLeaving };
  State state = State::kWanted;
  uint32_t job_id = 0;             // 0 while wanted
  std::vector<std::string> nodes;  // kRunning, kLeaving: its nodes
  // kLeaving: the nodes whose workers leave where only some do (the part shrinks to the
  // others); empty: all of them (the part ends).
  std::vector<std::string> leaving_nodes = {};
  // kRunning, kLeaving: the GPUs it holds on each node (its workers there), which the part of
  // a live move may hold in another number than the job's other parts; 0: not told (plugins
  // older than the key), as many as the job has on each of its nodes.
  int gpus_per_node = 0;
  // kRunning, kLeaving: the GPU type of its nodes, which a live move's part may hold in
  // another type than the job's other parts; empty: not told (untyped GPUs, older plugins).
  std::string gpu_type = {};
  bool operator==(const PartStatus& other) const {
    return state == other.state && job_id == other.job_id && nodes == other.nodes &&
           leaving_nodes == other.leaving_nodes && gpus_per_node == other.gpus_per_node &&
           gpu_type == other.gpu_type;
  }
};

// {"state": "wanted" | "pending" | "running" | "leaving", "job_id": N (not while wanted),
//  "nodes": [name, ...] (running, leaving), "leaving_nodes": [name, ...] (leaving, only
//  where some of its nodes stay), "gpus_per_node": N, "gpu_type": name (running, leaving;
//  both optional)}
Json::Value partToJson(const PartStatus& part);

struct ReportReply {
  long batch_size;
  int local_bsz;
  int accum_steps;
  double lr_scale;
  std::optional<policy::Allocation> allocation;  // nullopt: the job holds no GPUs
  // The plugin asked the job to shrink in place to `allocation` (pollux-agent --launch).
  bool shrink_in_place = false;
  std::optional<PartStatus> part = std::nullopt;  // the job's part, where it has or wants one
};

// {"batch_size", "local_bsz", "accum_steps", "lr_scale",
//  "allocation": {"gpu_type", "nodes": {name: gpus}} or null, "shrink_in_place": true only
//  while the plugin waits for the job to shrink itself, "part": partToJson() only where
//  the job has or wants a part}
Json::Value replyToJson(const ReportReply& reply);

// Parses what replyToJson writes (the agent reads the plugin's answer with it). Throws
// pollux::InvalidInput naming the offending key; unknown keys are ignored, so the plugin may
// add some.
ReportReply parseReportReply(const std::string& body);

}  // namespace pollux::schema
