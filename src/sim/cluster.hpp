// SPDX-License-Identifier: GPL-2.0-or-later
// The simulated cluster: nodes of one or more GPU types, from a spec like "t4:16x4,rtx:3x8".
#pragma once

#include <map>
#include <string>
#include <vector>

namespace pollux::sim {

struct SimNode {
  std::string name;  // TYPE-INDEX, e.g. "t4-0"
  std::string gpu_type;
  int gpus;
};

class Cluster {
 public:
  // Parses TYPE:NODESxGPUS[,TYPE:NODESxGPUS...]; throws std::invalid_argument naming the bad
  // part (empty, repeated type, non-positive counts, more than 9 GPUs per node).
  static Cluster parse(const std::string& spec);

  const std::vector<SimNode>& nodes() const { return nodes_; }
  const SimNode& node(const std::string& name) const;  // throws std::out_of_range
  // GPU types in the order of the spec; the first is the default type.
  const std::vector<std::string>& gpuTypes() const { return types_; }
  int totalGpus() const;
  int gpusOfType(const std::string& gpu_type) const;

 private:
  std::vector<SimNode> nodes_;
  std::map<std::string, size_t> index_;
  std::vector<std::string> types_;
};

}  // namespace pollux::sim
