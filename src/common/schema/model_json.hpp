// SPDX-License-Identifier: GPL-2.0-or-later
// JSON forms of the goodput model's inputs, shared by the snapshot and the goodput report.
#pragma once

#include <map>
#include <string>

#include <json/json.h>

#include "common/model/goodput.hpp"
#include "common/model/params.hpp"
#include "json_reader.hpp"

namespace pollux::schema {

// {alpha_c, beta_c, alpha_n, beta_n, alpha_r, beta_r, gamma}
model::PerfParams parsePerfParams(const JsonField& field);
Json::Value perfParamsToJson(const model::PerfParams& params);
// {TYPE: perf_params, ...}
std::map<std::string, model::PerfParams> parsePerfParamsByType(const JsonField& field);
// {sqr, var}
model::GradParams parseGradParams(const JsonField& field);
Json::Value gradParamsToJson(const model::GradParams& grad);
// init_batch_size, max_batch_size, local_bsz_bounds [min, max] and accumulation, read from
// the object that holds them; `accumulation` defaults to false unless required.
model::BatchLimits parseBatchLimits(const JsonField& holder, bool accumulation_required);
// Writes those keys into `holder`.
void writeBatchLimits(const model::BatchLimits& limits, Json::Value& holder);

}  // namespace pollux::schema
