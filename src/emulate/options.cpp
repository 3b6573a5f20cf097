// SPDX-License-Identifier: GPL-2.0-or-later
#include "options.hpp"

#include <getopt.h>

#include <cmath>
#include <limits>

#include "common/invalid_input.hpp"
#include "common/text_number.hpp"

namespace pollux::emulate {
namespace {

[[noreturn]] void reject(const std::string& option, const std::string& text,
                         const char* expected) {
  throw InvalidInput("--" + option + ": '" + text + "' is not " + expected);
}

double number(const std::string& option, const std::string& text) {
  const auto value = parseFiniteNumber(text);
  if (!value) reject(option, text, "a number");
  return *value;
}

double positive(const std::string& option, const std::string& text) {
  const double value = number(option, text);
  if (value <= 0) reject(option, text, "a number > 0");
  return value;
}

double nonNegative(const std::string& option, const std::string& text) {
  const double value = number(option, text);
  if (value < 0) reject(option, text, "a number >= 0");
  return value;
}

int count(const std::string& option, const std::string& text) {
  const double value = number(option, text);
  if (value < 1 || value > std::numeric_limits<int>::max() || value != std::floor(value))
    reject(option, text, "a whole number >= 1");
  return int(value);
}

// --speed TYPE=FACTOR
void addSpeed(Options& options, const std::string& text) {
  const auto equals = text.find('=');
  if (equals == std::string::npos || equals == 0) reject("speed", text, "TYPE=FACTOR");
  options.speeds[text.substr(0, equals)] = positive("speed", text.substr(equals + 1));
}

enum Key { kApp = 1, kProfiles, kTimeScale, kTarget, kStartup, kInterval, kCheckpoint, kSpeed,
           kNodes, kGpusPerNode, kDatasetSize, kEpochs, kDeclare, kHelp };

void apply(Options& options, int key, const std::string& name, const std::string& value) {
  switch (key) {
    case kApp: options.app = value; break;
    case kProfiles: options.profiles = value; break;
    case kTimeScale: options.time_scale = positive(name, value); break;
    case kTarget: options.target_fraction = positive(name, value); break;
    case kStartup: options.startup_s = nonNegative(name, value); break;
    case kInterval: options.checkpoint_interval_s = positive(name, value); break;
    case kCheckpoint: options.checkpoint = value; break;
    case kSpeed: addSpeed(options, value); break;
    case kNodes: options.nodes = count(name, value); break;
    case kGpusPerNode: options.gpus_per_node = count(name, value); break;
    case kDatasetSize: options.dataset_size = positive(name, value); break;
    case kEpochs:
      options.epochs = positive(name, value);
      if (options.epochs > 1e18) reject(name, value, "a number > 0 (at most 1e18)");
      options.declare = true;
      break;
  }
}

void requireConsistent(const Options& options) {
  if (options.app.empty()) throw InvalidInput("--app NAME is required");
  if (options.target_fraction > 1) throw InvalidInput("--target-fraction must be at most 1");
  if (options.epochs > 0 && options.target_fraction != 1)
    throw InvalidInput("--epochs and --target-fraction both set the job's length: give one");
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
      {"epochs", required_argument, nullptr, kEpochs},
      {"declare", no_argument, nullptr, kDeclare},
      {"help", no_argument, nullptr, kHelp},
      {nullptr, 0, nullptr, 0}};
  optind = 1;
  opterr = 0;
  int key, index = 0;
  while ((key = getopt_long(argc, argv, "", kOptions, &index)) != -1) {
    if (key == kHelp) return false;
    if (key == kDeclare) {
      options.declare = true;
      continue;
    }
    if (key == '?')
      throw InvalidInput(std::string("unknown option or missing value: ") + argv[optind - 1]);
    apply(options, key, kOptions[index].name, optarg);
  }
  if (optind < argc) throw InvalidInput(std::string("unexpected argument: ") + argv[optind]);
  requireConsistent(options);
  return true;
}

const char* usage() {
  return "usage: pollux-emulate --app NAME [--time-scale X] [--target-fraction F | --epochs N]\n"
         "         [--declare] [--startup S] [--checkpoint FILE] [--checkpoint-interval S]\n"
         "         [--speed TYPE=FACTOR]... [--profiles DIR] [--nodes N --gpus-per-node G]\n"
         "         [--dataset-size N]\n"
         "Replays application NAME's measured profile as a training job under pollux-agent.\n"
         "See pollux-emulate(1).\n";
}

}  // namespace pollux::emulate
