// SPDX-License-Identifier: GPL-2.0-or-later
#include "application.hpp"

#include <algorithm>
#include <filesystem>
#include <regex>

namespace pollux::trace {

namespace fs = std::filesystem;

namespace {

// DIR/STEM-TYPE.csv if present, else DIR/STEM.csv if present, else "".
std::string profileFile(const fs::path& dir, const std::string& stem, const std::string& type) {
  for (const fs::path& candidate : {dir / (stem + "-" + type + ".csv"), dir / (stem + ".csv")}) {
    if (fs::exists(candidate)) return candidate.string();
  }
  return "";
}

std::map<long, std::vector<ValidationRow>> readValidationRuns(const fs::path& dir) {
  static const std::regex kName("validation-([0-9]+)\\.csv");
  std::map<long, std::vector<ValidationRow>> runs;
  for (const auto& entry : fs::directory_iterator(dir)) {
    std::smatch match;
    const std::string file = entry.path().filename().string();
    if (std::regex_match(file, match, kName)) {
      runs[std::stol(match[1])] = readValidation(entry.path().string());
    }
  }
  if (runs.empty()) throw std::invalid_argument(dir.string() + ": no validation-B.csv files");
  return runs;
}

}  // namespace

int Application::commonMaxLocalBsz() const {
  int limit = by_type.begin()->second.maxLocalBsz();
  for (const auto& [type, profile] : by_type) limit = std::min(limit, profile.maxLocalBsz());
  return limit;
}

int Application::minLocalBsz() const {
  int limit = by_type.begin()->second.minLocalBsz();
  for (const auto& [type, profile] : by_type) limit = std::max(limit, profile.minLocalBsz());
  return limit;
}

Application loadApplication(const std::string& profiles_dir, const std::string& name,
                            const std::vector<std::string>& gpu_types) {
  const fs::path dir = fs::path(profiles_dir) / name;
  if (!fs::is_directory(dir)) {
    throw std::invalid_argument("unknown application '" + name + "': no folder " + dir.string());
  }
  std::map<std::string, ThroughputProfile> by_type;
  for (const auto& type : gpu_types) {
    const std::string placements = profileFile(dir, "placements", type);
    if (placements.empty()) {
      throw std::invalid_argument(dir.string() + ": no placements-" + type +
                                  ".csv or placements.csv for GPU type '" + type + "'");
    }
    const std::string scalability = profileFile(dir, "scalability", type);
    by_type.emplace(type, ThroughputProfile(readPlacements(placements),
                                            scalability.empty()
                                                ? std::vector<ProfileRow>{}
                                                : readScalability(scalability)));
  }
  return Application{name, std::move(by_type), ValidationCurves(readValidationRuns(dir))};
}

model::RelativeSpeeds estimateRelativeSpeeds(const std::map<std::string, Application>& apps,
                                             const std::vector<std::string>& gpu_types) {
  model::RelativeSpeeds speeds;
  for (const auto& type : gpu_types) {
    double sum = 0;
    for (const auto& [name, app] : apps) {
      const int bsz = app.minLocalBsz();
      sum += app.on(gpu_types.front()).timing({1}, bsz).step_time / app.on(type).timing({1}, bsz).step_time;
    }
    speeds[type] = apps.empty() ? 1.0 : sum / static_cast<double>(apps.size());
  }
  return speeds;
}

}  // namespace pollux::trace
