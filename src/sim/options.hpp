// pollux-sim's command line.
#pragma once

#include <map>
#include <optional>
#include <string>

namespace pollux::sim {

struct Options {
  std::string workload;
  std::string policy;  // pollux, pollux-unaware, tiresias or fifo
  std::string cluster = "t4:16x4";
  std::string profiles;  // empty: the shipped AdaptDL traces
  bool json = false;
  std::string timeline;
  std::string plot;
  double round_s = 60;
  std::map<std::string, double> restart_cost_s;  // --restart-cost overrides, by application
};

extern const char* const kUsage;

// Throws std::invalid_argument with a message for the user on any bad argument.
Options parseOptions(int argc, char** argv);

// Restart delays Sia measured per application (seconds).
std::map<std::string, double> defaultRestartCosts();

// "cifar10=50,bert=120" -> {cifar10: 50, bert: 120}; throws std::invalid_argument.
std::map<std::string, double> parseRestartCosts(const std::string& text);

}  // namespace pollux::sim
