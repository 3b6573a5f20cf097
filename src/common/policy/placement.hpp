// Turns chosen configurations into GPUs on concrete nodes.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "policy/configurations.hpp"
#include "policy/policy.hpp"

namespace pollux::policy {

struct PlacementRequest {
  Config config;                      // what the MILP chose
  std::optional<Allocation> current;  // where the job runs now
  std::vector<Config> fallbacks;      // smaller configurations to try, best first
};

struct PlacementResult {
  std::vector<std::optional<Allocation>> allocations;  // per request; nullopt: no room
  int fallbacks = 0;  // requests not placed as chosen (moved back, smaller or unplaced)
};

// Places requests on `nodes` after the GPUs in `reserved` (node -> GPUs, e.g. running rigid
// jobs). Unchanged configurations keep their exact nodes; the rest, largest first, prefer
// their current nodes, then the best fit. Single-node configurations stay on one node;
// multi-node ones take whole largest nodes (only the last may be partly used). A request
// that cannot be placed keeps its current allocation if that is still free, else tries its
// fallbacks, else stays unplaced.
PlacementResult place(const std::vector<Node>& nodes, const std::map<std::string, int>& reserved,
                      const std::vector<PlacementRequest>& requests);

}  // namespace pollux::policy
