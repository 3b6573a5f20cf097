// SPDX-License-Identifier: GPL-2.0-or-later
#include "cluster.hpp"

#include <algorithm>
#include <sstream>
#include <stdexcept>

#include "common/text_number.hpp"

namespace pollux::sim {

namespace {

int parseCount(const std::string& text, const std::string& part, int max) {
  const auto value = parseInteger(text, 1, max);
  if (!value) {
    throw std::invalid_argument("bad cluster part '" + part + "': expected TYPE:NODESxGPUS with " +
                                "1-100000 nodes and 1-9 GPUs per node");
  }
  return static_cast<int>(*value);
}

}  // namespace

Cluster Cluster::parse(const std::string& spec) {
  Cluster cluster;
  std::stringstream parts(spec);
  std::string part;
  while (std::getline(parts, part, ',')) {
    const size_t colon = part.find(':');
    const size_t times = part.find('x', colon == std::string::npos ? 0 : colon);
    if (colon == std::string::npos || colon == 0 || times == std::string::npos) {
      throw std::invalid_argument("bad cluster part '" + part + "': expected TYPE:NODESxGPUS");
    }
    const std::string type = part.substr(0, colon);
    const int nodes = parseCount(part.substr(colon + 1, times - colon - 1), part, 100000);
    const int gpus = parseCount(part.substr(times + 1), part, 9);
    if (std::find(cluster.types_.begin(), cluster.types_.end(), type) != cluster.types_.end()) {
      throw std::invalid_argument("GPU type '" + type + "' appears twice in the cluster spec");
    }
    cluster.types_.push_back(type);
    for (int i = 0; i < nodes; ++i) {
      cluster.index_[type + "-" + std::to_string(i)] = cluster.nodes_.size();
      cluster.nodes_.push_back({type + "-" + std::to_string(i), type, gpus});
    }
  }
  if (cluster.nodes_.empty() || spec.back() == ',') {
    throw std::invalid_argument("bad cluster spec '" + spec + "': expected TYPE:NODESxGPUS,...");
  }
  return cluster;
}

const SimNode& Cluster::node(const std::string& name) const { return nodes_.at(index_.at(name)); }

int Cluster::totalGpus() const {
  int total = 0;
  for (const auto& node : nodes_) total += node.gpus;
  return total;
}

int Cluster::gpusOfType(const std::string& gpu_type) const {
  int total = 0;
  for (const auto& node : nodes_) total += node.gpu_type == gpu_type ? node.gpus : 0;
  return total;
}

}  // namespace pollux::sim
