// SPDX-License-Identifier: GPL-2.0-or-later
// Saving a JSON state file atomically and reading it back (sched/pollux under
// StateSaveLocation, pollux-agent beside the job).
#pragma once

#include <optional>
#include <string>

#include <json/json.h>

namespace pollux::io {

// Writes `state` to `path` through a temporary file, fsync and rename, so a crash leaves
// either the old or the new file; returns the file's size in bytes. Throws
// std::runtime_error naming the path on failure.
size_t saveState(const std::string& path, const Json::Value& state);

// As saveState, but leaves the file alone when `state` reads as `last_written` (the text
// this wrote last, kept by the caller and updated here), so that a round that changed nothing
// costs no write and no fsync. Returns the file's size in bytes and whether it was written.
struct SaveResult {
  size_t bytes = 0;
  bool written = false;
};
SaveResult saveStateIfChanged(const std::string& path, const Json::Value& state,
                              std::string& last_written);

// nullopt when the file does not exist. Throws std::runtime_error (unreadable) or
// pollux::InvalidInput (not a JSON object) naming the path.
std::optional<Json::Value> loadState(const std::string& path);

}  // namespace pollux::io
