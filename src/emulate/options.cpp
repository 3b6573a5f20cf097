#include "options.hpp"

#include <getopt.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "invalid_input.hpp"

namespace pollux::emulate {
namespace {

double number(const char* option, const std::string& text, double min) {
  char* end = nullptr;
  errno = 0;
  const double value = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || errno == ERANGE || !std::isfinite(value) || value < min)
    throw InvalidInput(std::string("--") + option + ": '" + text + "' is not a number >= " +
                       std::to_string(min).substr(0, 3));
  return value;
}

// --speed TYPE=FACTOR
void addSpeed(Options& options, const std::string& text) {
  const auto equals = text.find('=');
  if (equals == std::string::npos || equals == 0)
    throw InvalidInput("--speed: '" + text + "' is not TYPE=FACTOR");
  const double factor = number("speed", text.substr(equals + 1), 0);
  if (factor <= 0) throw InvalidInput("--speed: the factor must be above 0");
  options.speeds[text.substr(0, equals)] = factor;
}

enum Key { kApp = 1, kProfiles, kTimeScale, kTarget, kStartup, kInterval, kCheckpoint, kSpeed,
           kNodes, kGpusPerNode, kDatasetSize, kHelp };

void apply(Options& options, int key, const char* name, const std::string& value) {
  switch (key) {
    case kApp: options.app = value; break;
    case kProfiles: options.profiles = value; break;
    case kTimeScale: options.time_scale = number(name, value, 1e-3); break;
    case kTarget: options.target_fraction = number(name, value, 1e-9); break;
    case kStartup: options.startup_s = number(name, value, 0); break;
    case kInterval: options.checkpoint_interval_s = number(name, value, 0.01); break;
    case kCheckpoint: options.checkpoint = value; break;
    case kSpeed: addSpeed(options, value); break;
    case kNodes: options.nodes = int(number(name, value, 1)); break;
    case kGpusPerNode: options.gpus_per_node = int(number(name, value, 1)); break;
    case kDatasetSize: options.dataset_size = number(name, value, 1); break;
  }
}

}  // namespace

bool parseOptions(int argc, char** argv, Options& options) {
  static const option kOptions[] = {
      {"app", required_argument, nullptr, kApp},
      {"profiles", required_argument, nullptr, kProfiles},
      {"time-scale", required_argument, nullptr, kTimeScale},
      {"target-fraction", required_argument, nullptr, kTarget},
      {"startup", required_argument, nullptr, kStartup},
      {"checkpoint-interval", required_argument, nullptr, kInterval},
      {"checkpoint", required_argument, nullptr, kCheckpoint},
      {"speed", required_argument, nullptr, kSpeed},
      {"nodes", required_argument, nullptr, kNodes},
      {"gpus-per-node", required_argument, nullptr, kGpusPerNode},
      {"dataset-size", required_argument, nullptr, kDatasetSize},
      {"help", no_argument, nullptr, kHelp},
      {nullptr, 0, nullptr, 0}};
  optind = 1;
  opterr = 0;
  int key, index = 0;
  while ((key = getopt_long(argc, argv, "", kOptions, &index)) != -1) {
    if (key == kHelp) return false;
    if (key == '?') throw InvalidInput(std::string("unknown option or missing value: ") + argv[optind - 1]);
    apply(options, key, kOptions[index].name, optarg);
  }
  if (optind < argc) throw InvalidInput(std::string("unexpected argument ") + argv[optind]);
  if (options.app.empty()) throw InvalidInput("--app NAME is required");
  if (options.target_fraction > 1) throw InvalidInput("--target-fraction must be at most 1");
  return true;
}

const char* usage() {
  return "usage: pollux-emulate --app NAME [--time-scale X] [--target-fraction F] [--startup S]\n"
         "         [--checkpoint FILE] [--checkpoint-interval S] [--speed TYPE=FACTOR]...\n"
         "         [--profiles DIR] [--nodes N --gpus-per-node G] [--dataset-size N]\n"
         "Replays application NAME's measured profile as a training job under pollux-agent.\n"
         "See pollux-emulate(1).\n";
}

}  // namespace pollux::emulate
