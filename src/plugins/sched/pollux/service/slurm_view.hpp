// What the service knows of Slurm's jobs and nodes in a round, parsed from the shim's views.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "report/adaptive_comment.hpp"

namespace pollux::service {

// GPUs per node of one type, as in a GRES string.
struct GpuGres {
  std::string type;  // empty when untyped
  int count = 0;
};

// Reads "gpu:a100:4", "gpu:a100:4(S:0-1)", "gres:gpu:a100:2", "gres/gpu:a100=2", "gpu:2",
// also inside comma or semicolon separated lists. nullopt when there is no GPU entry.
std::optional<GpuGres> parseGpuGres(const std::string& gres);

struct SlurmNode {
  std::string name;
  GpuGres gpus;
  bool usable = true;  // not down, drained or failing
  int free_cpus = 1;   // CPUs no job holds: with none left the node cannot start another job
};

enum class JobState { kPending, kRunning, kOther };

struct SlurmJob {
  uint32_t id = 0;
  uint32_t uid = 0;
  JobState state = JobState::kOther;
  bool held = false;
  double submit_time = 0;
  double start_time = 0;
  double eligible_time = 0;
  double end_time = 0;                              // finished jobs
  bool failed = false;                              // finished as FAILED or NODE_FAIL
  std::optional<report::AdaptiveRequest> adaptive;  // from the job's comment
  std::string comment_error;                        // set when the comment is malformed
  std::vector<std::string> nodes;                   // allocated nodes (running jobs)
  std::vector<std::string> requested_nodes;         // ReqNodeList
  std::optional<GpuGres> gpus_per_node;             // from tres_per_node
  int num_nodes = 0;

  int totalGpus() const { return gpus_per_node ? gpus_per_node->count * num_nodes : 0; }
};

std::vector<std::string> splitNodeList(const std::string& comma_separated);

// Gives untyped GPU requests of running jobs the GPU type of the nodes they run on.
void resolveGpuTypes(std::vector<SlurmJob>& jobs, const std::vector<SlurmNode>& nodes);

}  // namespace pollux::service
