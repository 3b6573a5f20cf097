// SPDX-License-Identifier: GPL-2.0-or-later
#include "adaptive_comment.hpp"

#include <cctype>

#include "common/invalid_input.hpp"

namespace pollux::schema {

namespace {

constexpr std::string_view kKeyword = "adaptive";

[[noreturn]] void reject(const std::string& problem) {
  throw InvalidInput("--comment=adaptive: " + problem +
                     " (syntax: adaptive[:min_gpus=N,max_gpus=N,gpu_type=TYPE,resize=live|requeue,"
                     "part_of=JOBID])");
}

int parseGpuCount(std::string_view key, std::string_view text) {
  if (text.empty() || text.size() > 7) reject(std::string(key) + " needs a number");
  int value = 0;
  for (char c : text) {
    if (!std::isdigit(static_cast<unsigned char>(c))) {
      reject(std::string(key) + " needs a number, got '" + std::string(text) + "'");
    }
    value = value * 10 + (c - '0');
  }
  if (value < 1 || value > kMaxRequestGpus) reject(std::string(key) + " must be >= 1");
  return value;
}

std::string parseGpuType(std::string_view text) {
  if (text.empty() || text.size() > 64) reject("gpu_type needs a name of 1-64 characters");
  for (char c : text) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') {
      reject("gpu_type '" + std::string(text) + "' has characters other than [A-Za-z0-9._-]");
    }
  }
  return std::string(text);
}

uint32_t parseJobId(std::string_view text) {
  if (text.empty() || text.size() > 10) reject("part_of needs a job id");
  uint64_t value = 0;
  for (char c : text) {
    if (!std::isdigit(static_cast<unsigned char>(c))) {
      reject("part_of needs a job id, got '" + std::string(text) + "'");
    }
    value = value * 10 + static_cast<uint64_t>(c - '0');
  }
  if (value < 1 || value >= UINT32_MAX) reject("part_of needs a job id, got '" + std::string(text) + "'");
  return static_cast<uint32_t>(value);
}

void applyOption(std::string_view option, AdaptiveRequest& request) {
  const auto equals = option.find('=');
  if (equals == std::string_view::npos) reject("option '" + std::string(option) + "' lacks '='");
  const std::string_view key = option.substr(0, equals);
  const std::string_view value = option.substr(equals + 1);
  if (key == "min_gpus") {
    request.min_gpus = parseGpuCount(key, value);
  } else if (key == "max_gpus") {
    request.max_gpus = parseGpuCount(key, value);
  } else if (key == "gpu_type") {
    request.gpu_type = parseGpuType(value);
  } else if (key == "part_of") {
    request.part_of = parseJobId(value);
  } else if (key == "resize") {
    if (value != "live" && value != "requeue") {
      reject("resize needs live or requeue, got '" + std::string(value) + "'");
    }
    request.gpus_in_parts = value == "live";
  } else {
    reject("unknown option '" + std::string(key) + "'");
  }
}

}  // namespace

bool asksForAdaptive(std::string_view comment) {
  if (comment.substr(0, kKeyword.size()) != kKeyword) return false;
  const std::string_view rest = comment.substr(kKeyword.size());
  return rest.empty() || rest.front() == ':';  // not e.g. "adaptively tuned"
}

std::optional<AdaptiveRequest> parseAdaptiveComment(std::string_view comment) {
  if (!asksForAdaptive(comment)) return std::nullopt;
  std::string_view rest = comment.substr(kKeyword.size());
  AdaptiveRequest request;
  if (rest.empty()) return request;
  rest.remove_prefix(1);
  if (rest.empty()) reject("nothing after ':'");
  while (!rest.empty()) {
    const auto comma = rest.find(',');
    applyOption(rest.substr(0, comma), request);
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
    if (rest.empty()) reject("trailing ','");
  }
  if (request.max_gpus && *request.max_gpus < request.min_gpus) {
    reject("max_gpus is below min_gpus");
  }
  if (request.part_of && request.gpus_in_parts) reject("a part has no parts (resize=live)");
  return request;
}

}  // namespace pollux::schema
