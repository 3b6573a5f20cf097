// SPDX-License-Identifier: GPL-2.0-or-later
#include "status_text.hpp"

#include <algorithm>
#include <cmath>
#include <cctype>
#include <cstdio>
#include <ctime>

namespace pollux::client {

std::string durationText(double seconds) {
  const long long total = std::llround(std::max(0.0, seconds));
  const long long days = total / 86400, hours = total / 3600 % 24, minutes = total / 60 % 60;
  char text[64];
  if (days > 0) {
    std::snprintf(text, sizeof text, "%lld-%02lld:%02lld:%02lld", days, hours, minutes, total % 60);
  } else {
    std::snprintf(text, sizeof text, "%02lld:%02lld:%02lld", hours, minutes, total % 60);
  }
  return text;
}

std::string lengthText(const Json::Value& job) {
  if (!job.isObject() || !job["length"].isObject()) return "";
  const Json::Value& length = job["length"];
  if (!length["progress"].isNumeric() || !length["target_progress"].isNumeric()) return "";
  const double progress = length["progress"].asDouble();
  const double target = length["target_progress"].asDouble();
  char text[160];
  std::snprintf(text, sizeof text, "Progress=%.6g TargetProgress=%.6g (%.1f %%) Remaining=",
                progress, target, target > 0 ? 100 * progress / target : 0.0);
  std::string line = text;
  if (progress >= target) return line + "unknown (target reached)";
  if (!length["remaining_s"].isNumeric()) return line + "unknown";
  return line + durationText(length["remaining_s"].asDouble());
}

namespace {

// "snake_case" -> "SnakeCase", as scontrol names its fields.
std::string fieldName(const std::string& key) {
  std::string name;
  bool upper = true;
  for (char c : key) {
    if (c == '_') {
      upper = true;
      continue;
    }
    name += upper ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
    upper = false;
  }
  return name;
}

// A number with `decimals` places, or as an integer where it is one.
std::string numberText(double value, int decimals) {
  char text[64];
  if (value == std::floor(value) && std::fabs(value) < 1e15) {
    std::snprintf(text, sizeof text, "%.0f", value);
  } else {
    std::snprintf(text, sizeof text, "%.*f", decimals, value);
  }
  return text;
}

// A fitted parameter: four significant digits.
std::string parameterText(double value) {
  char text[64];
  std::snprintf(text, sizeof text, "%.4g", value);
  return text;
}

std::string valueText(const Json::Value& value, int decimals = 2) {
  if (value.isNull()) return "N/A";
  if (value.isBool()) return value.asBool() ? "yes" : "no";
  if (value.isNumeric()) return numberText(value.asDouble(), decimals);
  if (value.isString()) {
    const std::string text = value.asString();
    if (text.empty()) return "(null)";
    return text.find(' ') == std::string::npos ? text : "\"" + text + "\"";
  }
  Json::StreamWriterBuilder writer;
  writer["indentation"] = "";
  return Json::writeString(writer, value);
}

std::string field(const Json::Value& object, const char* key, int decimals = 2) {
  return " " + fieldName(key) + "=" + valueText(object[key], decimals);
}

std::string allocationText(const Json::Value& allocation) {
  if (!allocation.isObject()) return "(none)";
  std::string text = std::to_string(allocation["gpus"].asInt()) + "x" +
                     allocation["gpu_type"].asString() + "(";
  bool first = true;
  for (const auto& node : allocation["nodes"].getMemberNames()) {
    text += (first ? "" : ",") + node + ":" + std::to_string(allocation["nodes"][node].asInt());
    first = false;
  }
  return text + ")";
}

// The fields present of `keys`.
std::string presentFields(const Json::Value& object, std::initializer_list<const char*> keys) {
  std::string text;
  for (const char* key : keys) {
    if (object.isMember(key)) text += field(object, key);
  }
  return text;
}

// Batch size and learning-rate scale: N/A until the job has reported a model.
std::string batchText(const Json::Value& job) {
  std::string text;
  for (const char* key : {"batch_size", "local_bsz", "accum_steps", "lr_scale"}) {
    text += job["reported"].asBool() ? field(job, key) : " " + fieldName(key) + "=N/A";
  }
  return text;
}

std::string modelsText(const Json::Value& job) {
  std::string text;
  for (const auto& type : job["models"].getMemberNames()) {
    const Json::Value& model = job["models"][type];
    text += "   Model[" + type + "]";
    for (const auto& key : model.getMemberNames()) {
      const Json::Value& value = model[key];
      text += " " + fieldName(key) + "=" +
              (value.isDouble() ? parameterText(value.asDouble()) : valueText(value));
    }
    text += "\n";
  }
  return text;
}

std::string roundText(const Json::Value& round) {
  std::string text = "   LastRound";
  for (const auto& key : round.getMemberNames()) {
    if (key != "problems") text += field(round, key.c_str(), 1);
  }
  text += "\n";
  for (const auto& problem : round["problems"]) text += "   Problem=" + valueText(problem) + "\n";
  return text;
}

// The job's part (a live growth onto more nodes): "   Part JobId=12 State=running Nodes=n2".
std::string partText(const Json::Value& part) {
  std::string text = "   Part JobId=" +
                     (part.isMember("job_id") ? valueText(part["job_id"]) : std::string("(none)")) +
                     " State=" + part["state"].asString();
  for (const auto& [key, name] : {std::pair{"nodes", "Nodes"}, {"leaving_nodes", "LeavingNodes"}}) {
    if (!part.isMember(key)) continue;
    std::string nodes;
    for (const auto& node : part[key]) nodes += (nodes.empty() ? "" : ",") + node.asString();
    text += std::string(" ") + name + "=" + nodes;
  }
  return text + "\n";
}

std::string nodeText(const Json::Value& node) {
  return "NodeName=" + node["name"].asString() +
         presentFields(node, {"gpu_type", "gpus", "free_gpus", "usable", "free_cpus"}) +
         (node.isMember("free_memory_mb") ? " FreeMem=" + valueText(node["free_memory_mb"]) : "") +
         "\n";
}

}  // namespace

std::string timeText(double epoch_s) {
  const std::time_t time = static_cast<std::time_t>(epoch_s);
  std::tm local{};
  localtime_r(&time, &local);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", &local);
  return text;
}

std::string jobText(const Json::Value& job) {
  std::string text = "JobId=" + valueText(job["job_id"]) +
                     presentFields(job, {"user_id", "state", "phase", "adaptive", "min_gpus",
                                         "max_gpus", "gpu_type", "comment_error"}) +
                     "\n";
  if (!job["adaptive"].asBool()) return text + "\n";
  text += "   Allocation=" + allocationText(job["allocation"]) + batchText(job) + "\n";
  if (job.isMember("part")) text += partText(job["part"]);
  text += "  " + presentFields(job, {"restarts"}) +
          (job.isMember("restart_cost_s") ? field(job, "restart_cost_s", 1) : "") +
          (job.isMember("resize_stall_s") ? field(job, "resize_stall_s", 2) : "") +
          (job.isMember("join_startup_s") ? field(job, "join_startup_s", 1) : "") +
          presentFields(job, {"reported", "waiting", "status"}) + "\n";
  if (job.isMember("progress")) {
    text += "   Progress Examples=" + valueText(job["progress"]["examples"]) +
            " Epochs=" + valueText(job["progress"]["epochs"]) + "\n";
  }
  if (const std::string length = lengthText(job); !length.empty()) {
    text += "   Length " + length + "\n";
  }
  return text + modelsText(job) + "\n";
}

std::string statusText(const Json::Value& status) {
  std::string text = "Pollux Time=" + timeText(status["time"].asDouble()) +
                     " Interval=" + valueText(status["interval_s"]) + field(status, "rest") + "\n" +
                     roundText(status["last_round"]) + "\n";
  for (const auto& node : status["nodes"]) text += nodeText(node);
  text += "\n";
  for (const auto& job : status["jobs"]) text += jobText(job);
  return text;
}

}  // namespace pollux::client
