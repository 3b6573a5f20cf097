// SPDX-License-Identifier: GPL-2.0-or-later
// Candidate configurations (GPU type, GPU count, node count) per job, Sia-style.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "policy.hpp"

namespace pollux::policy {

// The nodes of one GPU type.
struct TypeShape {
  int total_gpus = 0;
  int largest_node = 0;   // GPUs of the largest node
  int largest_nodes = 0;  // how many nodes have that many GPUs
};

using ClusterShape = std::map<std::string, TypeShape>;  // GPU type -> its nodes

ClusterShape shapeOf(const std::vector<Node>& nodes);

struct Config {
  std::string gpu_type;
  int gpus = 0;
  int nodes = 1;  // 1: inside one node; more: spread over whole nodes (the last may be partial)
  bool operator==(const Config& other) const;
  bool operator!=(const Config& other) const { return !(*this == other); }
};

// Shape of an existing allocation.
Config configOf(const Allocation& allocation);

// The GPUs on each node of an allocation that has as many on every node (one node: all of
// them); 0 if its nodes differ.
int uniformPerNode(const Allocation& allocation);

// Whether Slurm moves a job from `from` to `to` without a requeue: the same GPU type, as many
// GPUs on each of `from`'s nodes, and either `to` adds a part with as many GPUs on each of
// its nodes (a job of their own, as Slurm's GRES are per node: on new nodes, or on each of
// `from`'s nodes, doubling them), or `to` drops one of `parts` (the running parts, oldest
// first; droppedPart) or some of one part's nodes (shrunkPart, `batch_hosts` as there), or,
// without parts, keeps some of `from`'s nodes (a shrink in place).
bool changesInPlace(const Allocation& from, const Allocation& to,
                    const std::vector<Allocation>& parts = {},
                    const std::set<std::string>& batch_hosts = {});

// Whether `to` is a live move's target for a job whose GPUs are all in parts: as many GPUs
// on each of its nodes (one part), none of them a node of `from` (the job holds both until
// the target's part has joined), of `from`'s GPU type or another.
bool movesBeside(const Allocation& from, const Allocation& to);

// The index in `parts` of the part whose workers leave when the job moves from `from` to
// `to`: `to` is `from` without exactly what it holds (the newest such); nullopt if none is.
std::optional<std::size_t> droppedPart(const Allocation& from, const Allocation& to,
                                       const std::vector<Allocation>& parts);

// The node of `part` that runs its batch script, which Slurm never takes from it: the one
// of `batch_hosts` among its nodes, else its first node by name.
std::string batchHostOf(const Allocation& part, const std::set<std::string>& batch_hosts);

// The index in `parts` of the part that `to` shrinks to some of its nodes: `to` is `from`
// without that part's GPUs on some, not all, of its nodes, its batch host (batchHostOf)
// kept; the newest such; nullopt if none is.
std::optional<std::size_t> shrunkPart(const Allocation& from, const Allocation& to,
                                      const std::vector<Allocation>& parts,
                                      const std::set<std::string>& batch_hosts);

// The shrinks of `from` to some of `part`'s nodes (shrunkPart), one per number of its nodes
// dropped, fewest first: its nodes last by name leave first, its batch host never.
std::vector<Allocation> partShrinks(const Allocation& from, const Allocation& part,
                                    const std::set<std::string>& batch_hosts);

// What `larger` holds beyond `smaller`, node by node (nodes where it holds no more left out).
Allocation addedTo(const Allocation& smaller, const Allocation& larger);

// `from` without its part's GPUs.
Allocation withoutPart(const Allocation& from, const Allocation& part);

// `gpus` GPUs of `gpu_type`: inside one node if they fit, else over as few largest nodes as
// possible. Nodes = 0 if the type's nodes cannot hold them at all.
Config layout(const std::string& gpu_type, int gpus, const TypeShape& shape);

// Adaptive jobs: 1, 2, 4, ... GPUs inside one node, the whole largest node, then 2, 4, 8, ...
// whole nodes, plus min_gpus itself; all within [min_gpus, max_gpus]. Rigid jobs: exactly
// min_gpus. On every type unless the job is pinned; never more than the type can hold.
std::vector<Config> candidateConfigs(const Job& job, const ClusterShape& cluster);

}  // namespace pollux::policy
