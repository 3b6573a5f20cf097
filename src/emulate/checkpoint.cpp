// SPDX-License-Identifier: GPL-2.0-or-later
#include "checkpoint.hpp"

#include "common/invalid_input.hpp"
#include "common/schema/json_reader.hpp"
#include "io/state_file.hpp"

namespace pollux::emulate {

void saveCheckpoint(const std::string& path, const std::string& app, const TrainingState& state) {
  Json::Value document;
  document["app"] = app;
  document["progress"] = state.progress;
  document["examples"] = state.examples;
  document["steps"] = Json::Int64(state.steps);
  document["done"] = state.done;
  io::saveState(path, document);
}

std::optional<TrainingState> loadCheckpoint(const std::string& path, const std::string& app) {
  const auto document = io::loadState(path);
  if (!document) return std::nullopt;
  const schema::JsonField root(*document, path);
  root.requireOnlyKeys({"app", "progress", "examples", "steps", "done"});
  if (root["app"].string() != app)
    throw InvalidInput(path + ": a checkpoint of " + root["app"].string() + ", not " + app);
  TrainingState state;
  state.progress = root["progress"].nonNegativeNumber();
  state.examples = root["examples"].nonNegativeNumber();
  state.steps = root["steps"].integer(0, 1L << 50);
  state.done = root["done"].boolean();
  return state;
}

}  // namespace pollux::emulate
