// SPDX-License-Identifier: GPL-2.0-or-later
#include "model_json.hpp"

#include <limits>

#include "common/invalid_input.hpp"

namespace pollux::schema {

namespace {

constexpr long kMaxBatch = std::numeric_limits<int>::max();

// Runs a model validator, prefixing its message with the path of the object checked.
template <typename Value>
void validateAt(const JsonField& field, const Value& value) {
  try {
    model::validate(value);
  } catch (const InvalidInput& error) {
    throw InvalidInput(field.path().empty() ? error.what() : field.path() + ": " + error.what());
  }
}

}  // namespace

model::PerfParams parsePerfParams(const JsonField& field) {
  field.requireOnlyKeys({"alpha_c", "beta_c", "alpha_n", "beta_n", "alpha_r", "beta_r", "gamma"});
  const model::PerfParams params{field["alpha_c"].number(), field["beta_c"].number(),
                                 field["alpha_n"].number(), field["beta_n"].number(),
                                 field["alpha_r"].number(), field["beta_r"].number(),
                                 field["gamma"].number()};
  validateAt(field, params);
  return params;
}

Json::Value perfParamsToJson(const model::PerfParams& params) {
  Json::Value out;
  out["alpha_c"] = params.alpha_c;
  out["beta_c"] = params.beta_c;
  out["alpha_n"] = params.alpha_n;
  out["beta_n"] = params.beta_n;
  out["alpha_r"] = params.alpha_r;
  out["beta_r"] = params.beta_r;
  out["gamma"] = params.gamma;
  return out;
}

std::map<std::string, model::PerfParams> parsePerfParamsByType(const JsonField& field) {
  std::map<std::string, model::PerfParams> by_type;
  for (const auto& type : field.memberNames()) {
    if (type.empty()) throw InvalidInput(field.path() + ": GPU type names must not be empty");
    by_type[type] = parsePerfParams(field.member(type));
  }
  return by_type;
}

model::GradParams parseGradParams(const JsonField& field) {
  field.requireOnlyKeys({"sqr", "var"});
  return {field["sqr"].nonNegativeNumber(), field["var"].nonNegativeNumber()};
}

Json::Value gradParamsToJson(const model::GradParams& grad) {
  Json::Value out;
  out["sqr"] = grad.sqr;
  out["var"] = grad.var;
  return out;
}

void writeBatchLimits(const model::BatchLimits& limits, Json::Value& holder) {
  holder["init_batch_size"] = Json::Int64(limits.init_batch_size);
  holder["max_batch_size"] = Json::Int64(limits.max_batch_size);
  holder["local_bsz_bounds"] = Json::Value(Json::arrayValue);
  holder["local_bsz_bounds"].append(limits.min_local_bsz);
  holder["local_bsz_bounds"].append(limits.max_local_bsz);
  holder["accumulation"] = limits.accumulation;
}

model::BatchLimits parseBatchLimits(const JsonField& holder, bool accumulation_required) {
  const JsonField bounds = holder["local_bsz_bounds"];
  if (bounds.arraySize() != 2) throw InvalidInput(bounds.path() + ": must be [min, max]");
  const bool accumulation = accumulation_required || holder.has("accumulation")
                                ? holder["accumulation"].boolean()
                                : false;
  const model::BatchLimits limits{holder["init_batch_size"].integer(1, kMaxBatch),
                                  holder["max_batch_size"].integer(1, kMaxBatch),
                                  static_cast<int>(bounds.at(0).integer(1, kMaxBatch)),
                                  static_cast<int>(bounds.at(1).integer(1, kMaxBatch)),
                                  accumulation};
  validateAt(holder, limits);
  return limits;
}

}  // namespace pollux::schema
