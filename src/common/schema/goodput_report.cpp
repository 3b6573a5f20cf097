// SPDX-License-Identifier: GPL-2.0-or-later
#include "goodput_report.hpp"

#include <algorithm>

#include "common/invalid_input.hpp"
#include "json_reader.hpp"
#include "model_json.hpp"
#include "snapshot_json.hpp"

namespace pollux::schema {

namespace {

constexpr long kMaxGpus = 1L << 20;

model::Placement parsePlacement(const JsonField& root) {
  const model::Placement placement{static_cast<int>(root["num_nodes"].integer(1, kMaxGpus)),
                                   static_cast<int>(root["num_replicas"].integer(1, kMaxGpus))};
  if (placement.num_replicas < placement.num_nodes) {
    throw InvalidInput("num_replicas: must be >= num_nodes (" +
                       std::to_string(placement.num_nodes) + "), got " +
                       std::to_string(placement.num_replicas));
  }
  return placement;
}

TrainingProgress parseProgress(const JsonField& field) {
  field.requireOnlyKeys({"examples", "epochs"});
  return {field["examples"].nonNegativeNumber(), field["epochs"].nonNegativeNumber()};
}

}  // namespace

policy::DeclaredLength parseDeclaredLength(const JsonField& field) {
  field.requireOnlyKeys({"progress", "target_progress"});
  return {field["progress"].nonNegativeNumber(), field["target_progress"].positiveNumber()};
}

Json::Value declaredLengthToJson(const policy::DeclaredLength& length) {
  Json::Value out(Json::objectValue);
  out["progress"] = length.progress;
  out["target_progress"] = length.target;
  return out;
}

GoodputReport parseGoodputReport(const std::string& body) {
  const Json::Value document = JsonField::parseDocument(body);
  const JsonField root(document, "");
  root.requireOnlyKeys({"job_id", "gpu_type", "num_nodes", "num_replicas", "perf_params",
                        "grad_params", "init_batch_size", "max_batch_size", "local_bsz_bounds",
                        "accumulation", "progress", "restart_cost_s", "in_place_resize", "length",
                        "resize_stall_s", "elastic", "join_startup_s", "training_finished"});
  GoodputReport report;
  report.job_id = root["job_id"].idString();
  report.gpu_type = root["gpu_type"].string();
  report.placement = parsePlacement(root);
  report.perf_params = parsePerfParamsByType(root["perf_params"]);
  report.grad = parseGradParams(root["grad_params"]);
  report.limits = parseBatchLimits(root, true);
  report.progress = parseProgress(root["progress"]);
  if (root.has("restart_cost_s")) {
    report.restart_cost_s = root["restart_cost_s"].nonNegativeNumber();
  }
  if (root.has("resize_stall_s")) {
    report.resize_stall_s = root["resize_stall_s"].nonNegativeNumber();
  }
  if (root.has("join_startup_s")) {
    report.join_startup_s = root["join_startup_s"].nonNegativeNumber();
  }
  if (root.has("in_place_resize")) report.in_place_resize = root["in_place_resize"].boolean();
  if (root.has("elastic")) report.elastic = root["elastic"].boolean();
  if (root.has("training_finished")) {
    report.training_finished = root["training_finished"].boolean();
  }
  if (root.has("length")) report.length = parseDeclaredLength(root["length"]);
  return report;
}

Json::Value reportToJson(const GoodputReport& report) {
  Json::Value out(Json::objectValue);
  out["job_id"] = report.job_id;
  out["gpu_type"] = report.gpu_type;
  out["num_nodes"] = report.placement.num_nodes;
  out["num_replicas"] = report.placement.num_replicas;
  out["perf_params"] = Json::Value(Json::objectValue);
  for (const auto& [type, params] : report.perf_params) {
    out["perf_params"][type] = perfParamsToJson(params);
  }
  out["grad_params"] = gradParamsToJson(report.grad);
  writeBatchLimits(report.limits, out);
  out["progress"]["examples"] = report.progress.examples;
  out["progress"]["epochs"] = report.progress.epochs;
  if (report.restart_cost_s) out["restart_cost_s"] = *report.restart_cost_s;
  if (report.resize_stall_s) out["resize_stall_s"] = *report.resize_stall_s;
  if (report.join_startup_s) out["join_startup_s"] = *report.join_startup_s;
  if (report.in_place_resize) out["in_place_resize"] = true;
  if (report.elastic) out["elastic"] = true;
  if (report.training_finished) out["training_finished"] = true;
  if (report.length) out["length"] = declaredLengthToJson(*report.length);
  return out;
}

namespace {

constexpr std::pair<PartStatus::State, const char*> kPartStates[] = {
    {PartStatus::State::kWanted, "wanted"},
    {PartStatus::State::kPending, "pending"},
    {PartStatus::State::kRunning, "running"},
    {PartStatus::State::kLeaving, "leaving"}};

}  // namespace

Json::Value partToJson(const PartStatus& part) {
  Json::Value out(Json::objectValue);
  for (const auto& [state, name] : kPartStates) {
    if (state == part.state) out["state"] = name;
  }
  if (part.job_id) out["job_id"] = part.job_id;
  if (part.state == PartStatus::State::kRunning || part.state == PartStatus::State::kLeaving) {
    out["nodes"] = Json::Value(Json::arrayValue);
    for (const auto& node : part.nodes) out["nodes"].append(node);
    if (part.gpus_per_node > 0) out["gpus_per_node"] = part.gpus_per_node;
    if (!part.gpu_type.empty()) out["gpu_type"] = part.gpu_type;
  }
  if (part.state == PartStatus::State::kLeaving && !part.leaving_nodes.empty()) {
    out["leaving_nodes"] = Json::Value(Json::arrayValue);
    for (const auto& node : part.leaving_nodes) out["leaving_nodes"].append(node);
  }
  return out;
}

namespace {

PartStatus parsePart(const JsonField& field) {
  PartStatus part;
  const std::string state = field["state"].string();
  bool known = false;
  for (const auto& [value, name] : kPartStates) {
    if (state == name) part.state = value, known = true;
  }
  if (!known) {
    throw InvalidInput(field["state"].path() + ": not wanted, pending, running or leaving");
  }
  if (part.state != PartStatus::State::kWanted) {
    part.job_id = static_cast<uint32_t>(field["job_id"].integer(1, 0xFFFFFFFEL));
  }
  if (part.state == PartStatus::State::kRunning || part.state == PartStatus::State::kLeaving) {
    const JsonField nodes = field["nodes"];
    for (Json::ArrayIndex i = 0; i < nodes.arraySize(); ++i) {
      part.nodes.push_back(nodes.at(i).string());
    }
    if (part.nodes.empty()) throw InvalidInput(nodes.path() + ": a running part has nodes");
    if (field.has("gpus_per_node")) {
      part.gpus_per_node = static_cast<int>(field["gpus_per_node"].integer(1, 1L << 20));
    }
    if (field.has("gpu_type")) part.gpu_type = field["gpu_type"].string();
  }
  if (part.state == PartStatus::State::kLeaving && field.has("leaving_nodes")) {
    const JsonField leaving = field["leaving_nodes"];
    for (Json::ArrayIndex i = 0; i < leaving.arraySize(); ++i) {
      const std::string node = leaving.at(i).string();
      if (std::find(part.nodes.begin(), part.nodes.end(), node) == part.nodes.end()) {
        throw InvalidInput(leaving.at(i).path() + ": not one of the part's nodes");
      }
      part.leaving_nodes.push_back(node);
    }
    if (part.leaving_nodes.size() >= part.nodes.size()) {
      throw InvalidInput(leaving.path() + ": some of the part's nodes stay");
    }
  }
  return part;
}

}  // namespace

Json::Value replyToJson(const ReportReply& reply) {
  Json::Value out(Json::objectValue);
  out["batch_size"] = Json::Int64(reply.batch_size);
  out["local_bsz"] = reply.local_bsz;
  out["accum_steps"] = reply.accum_steps;
  out["lr_scale"] = reply.lr_scale;
  out["allocation"] = reply.allocation ? allocationToJson(*reply.allocation) : Json::nullValue;
  if (reply.shrink_in_place) out["shrink_in_place"] = true;
  if (reply.part) out["part"] = partToJson(*reply.part);
  return out;
}

ReportReply parseReportReply(const std::string& body) {
  const Json::Value document = JsonField::parseDocument(body);
  const JsonField root(document, "reply");
  ReportReply reply{root["batch_size"].integer(0, 1L << 40),
                    static_cast<int>(root["local_bsz"].integer(0, 1L << 30)),
                    static_cast<int>(root["accum_steps"].integer(0, 1L << 30)),
                    root["lr_scale"].positiveNumber(), std::nullopt};
  if (root.has("allocation")) reply.allocation = parseAllocation(root["allocation"]);
  if (root.has("shrink_in_place")) reply.shrink_in_place = root["shrink_in_place"].boolean();
  if (root.has("part")) reply.part = parsePart(root["part"]);
  return reply;
}

}  // namespace pollux::schema
