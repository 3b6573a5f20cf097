// SPDX-License-Identifier: GPL-2.0-or-later
// pollux-fit: fit the Pollux throughput model to an application profile and show how well
// the model fitted on small placements predicts the large ones.
#include <getopt.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include <json/json.h>

#include "trace/fit_check.hpp"
#include "common/schema/model_json.hpp"
#include "common/text_number.hpp"

namespace {

constexpr const char* kUsage =
    "usage: pollux-fit [--max-gpus N] [--json] PROFILE_DIR...\n"
    "  PROFILE_DIR holds placements.csv and optionally scalability.csv (AdaptDL format).\n"
    "  Fits on rows with at most N GPUs (default 4) and predicts the step time of the rest.\n";

struct Options {
  int max_gpus = 4;
  bool json = false;
  std::vector<std::string> profiles;
};

Options parseArguments(int argc, char** argv) {
  static const option kLong[] = {{"max-gpus", required_argument, nullptr, 'g'},
                                 {"json", no_argument, nullptr, 'j'},
                                 {"help", no_argument, nullptr, 'h'},
                                 {nullptr, 0, nullptr, 0}};
  Options options;
  for (int c; (c = getopt_long(argc, argv, "", kLong, nullptr)) != -1;) {
    if (c == 'g') {
      const auto value = pollux::parseInteger(optarg, 1, 100000);
      if (!value) {
        throw std::invalid_argument("--max-gpus needs a positive integer, got '" +
                                    std::string(optarg) + "'");
      }
      options.max_gpus = static_cast<int>(*value);
    } else if (c == 'j') {
      options.json = true;
    } else if (c == 'h') {
      std::cout << kUsage;
      std::exit(0);
    } else {
      throw std::invalid_argument("unknown option");
    }
  }
  for (int i = optind; i < argc; ++i) options.profiles.emplace_back(argv[i]);
  if (options.profiles.empty()) throw std::invalid_argument("no PROFILE_DIR given");
  return options;
}

std::vector<pollux::trace::ProfileRow> readProfile(const std::string& dir) {
  auto rows = pollux::trace::readPlacements(dir + "/placements.csv");
  const std::string scalability = dir + "/scalability.csv";
  if (std::filesystem::exists(scalability)) {
    const auto large = pollux::trace::readScalability(scalability);
    rows.insert(rows.end(), large.begin(), large.end());
  }
  return rows;
}

Json::Value toJson(const std::string& name, const pollux::trace::FitCheck& check) {
  Json::Value out;
  out["profile"] = name;
  out["fit_samples"] = Json::UInt64(check.fit_samples);
  out["held_out"] = Json::UInt64(check.held_out.size());
  out["median_error"] = check.medianError();
  out["p90_error"] = check.quantileError(0.9);
  out["perf_params"] = pollux::schema::perfParamsToJson(check.params);
  return out;
}

void printTableRow(const std::string& name, const pollux::trace::FitCheck& check) {
  const auto& p = check.params;
  std::printf("%-14s %5zu %6zu %7.1f%% %7.1f%%  alpha_c=%.4g beta_c=%.4g alpha_r=%.4g "
              "beta_r=%.4g alpha_n=%.4g beta_n=%.4g gamma=%.3f\n",
              name.c_str(), check.fit_samples, check.held_out.size(), 100 * check.medianError(),
              100 * check.quantileError(0.9), p.alpha_c, p.beta_c, p.alpha_r, p.beta_r, p.alpha_n,
              p.beta_n, p.gamma);
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Options options = parseArguments(argc, argv);
    // Every profile is checked before anything is printed: a bad one leaves stdout empty.
    std::vector<std::pair<std::string, pollux::trace::FitCheck>> checks;
    for (const auto& dir : options.profiles) {
      std::filesystem::path path(dir);
      if (!path.has_filename()) path = path.parent_path();  // "traces/cifar10/"
      const std::string name = path.filename().string();
      checks.emplace_back(name, pollux::trace::checkFit(readProfile(dir), options.max_gpus));
    }
    if (options.json) {
      Json::Value all(Json::arrayValue);
      for (const auto& [name, check] : checks) all.append(toJson(name, check));
      std::cout << all << "\n";
    } else {
      std::printf("%-14s %5s %6s %8s %8s  fitted parameters (seconds)\n", "profile", "fit",
                  "held", "median", "p90");
      for (const auto& [name, check] : checks) printTableRow(name, check);
    }
    return 0;
  } catch (const std::exception& error) {
    std::cerr << "pollux-fit: " << error.what() << "\n" << kUsage;
    return 2;
  }
}
