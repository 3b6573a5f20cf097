// SPDX-License-Identifier: GPL-2.0-or-later
#include "applications.hpp"

#include <filesystem>
#include <map>
#include <set>

#include "common/invalid_input.hpp"

namespace pollux::emulate {
namespace {

namespace fs = std::filesystem;

std::string availableApplications(const fs::path& dir) {
  std::error_code error;
  std::set<std::string> names;
  for (fs::directory_iterator entry(dir, error), end; !error && entry != end;
       entry.increment(error))
    if (entry->is_directory()) names.insert(entry->path().filename().string());
  std::string list;
  for (const auto& name : names) list += (list.empty() ? "" : ", ") + name;
  return list.empty() ? "none" : list;
}

}  // namespace

trace::Application loadProfile(const std::string& profiles_dir, const std::string& name) {
  if (name.empty() || name.find('/') != std::string::npos ||
      !fs::is_directory(fs::path(profiles_dir) / name))
    throw InvalidInput("unknown application '" + name + "' (available in " + profiles_dir +
                       ": " + availableApplications(profiles_dir) + ")");
  return trace::loadApplication(profiles_dir, name, {kProfileGpuType});
}

double datasetSize(const trace::Application& app) {
  static const std::map<std::string, double> kPaperDatasets = {
      {"bert", 88641},           // SQuAD v1.1 training features (BERT fine-tuning)
      {"cifar10", 50000},        // CIFAR-10 training images (ResNet-18)
      {"deepspeech2", 7140},     // the speech corpus's training utterances, per the trace
      {"imagenet", 1281167},     // ImageNet-1k training images (ResNet-50)
      {"ncf", 4970845},          // MovieLens-1M ratings left for training x (1 + 4 negatives)
      {"yolov3", 16551}};        // PASCAL VOC 2007+2012 trainval images
  const auto known = kPaperDatasets.find(app.name);
  if (known != kPaperDatasets.end()) return known->second;
  // The traces validate once per epoch, at the initial batch size.
  return app.curves.progressKnots().front() * double(app.curves.initBatchSize());
}

}  // namespace pollux::emulate
