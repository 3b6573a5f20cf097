// SPDX-License-Identifier: GPL-2.0-or-later
// JSON forms of a round and its plan: what `pollux_dump_rounds` writes and pollux-replay reads.
#pragma once

#include <string>

#include <json/json.h>

#include "round_planner.hpp"

namespace pollux::service {

Json::Value roundToJson(const Round& round);
// Throws pollux::InvalidInput naming the offending value.
Round parseRound(const Json::Value& document);

// Everything planRound() reads: the settings' text, the store and the round.
struct RecordedRound {
  std::string scheduler_parameters;
  std::string pollux_conf;
  bool settling = false;
  Json::Value jobs;  // JobStore::toJson() before the round
  Round round;
};

Json::Value recordedRoundToJson(const RecordedRound& recorded);
// Throws pollux::InvalidInput naming the offending value.
RecordedRound parseRecordedRound(const std::string& text);

// The plan without timings, so that the same round gives the same document.
Json::Value planToJson(const RoundPlan& plan);

}  // namespace pollux::service
