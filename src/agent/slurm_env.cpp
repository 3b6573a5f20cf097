// SPDX-License-Identifier: GPL-2.0-or-later
#include "slurm_env.hpp"

#include <algorithm>
#include <cstdlib>

#include <sstream>

#include "child_process.hpp"
#include "common/invalid_input.hpp"
#include "common/text_number.hpp"

namespace pollux::agent {
namespace {

int gpusPerNode(const GetEnv& getenv) {
  const int on_node = countVariable(getenv, "SLURM_GPUS_ON_NODE", 0, 0);
  if (on_node > 0) return on_node;
  const auto visible = getenv("CUDA_VISIBLE_DEVICES");
  if (visible && !visible->empty())
    return 1 + static_cast<int>(std::count(visible->begin(), visible->end(), ','));
  return 1;
}

}  // namespace

std::optional<std::vector<std::string>> hostnames(const std::string& list) {
  const CommandOutput result = runCommand({"scontrol", "show", "hostnames", list});
  std::vector<std::string> nodes;
  std::istringstream lines(result.output);
  for (std::string line; std::getline(lines, line);) {
    if (!line.empty()) nodes.push_back(line);
  }
  if (result.status != 0 || nodes.empty()) return std::nullopt;
  return nodes;
}

int countVariable(const GetEnv& getenv, const char* name, int fallback, int min) {
  const auto text = getenv(name);
  if (!text || text->empty()) return fallback;
  const auto value = parseInteger(*text, min, 1 << 20);
  if (!value)
    throw InvalidInput(std::string(name) + "='" + *text + "' is not an integer >= " +
                       std::to_string(min));
  return static_cast<int>(*value);
}

StepEnvironment readStepEnvironment(const GetEnv& getenv, int replicas_override) {
  StepEnvironment step;
  const auto job_id = getenv("SLURM_JOB_ID");
  if (!job_id || job_id->empty())
    throw InvalidInput("SLURM_JOB_ID is not set: run pollux-agent inside a Slurm job (srun)");
  step.job_id = *job_id;
  step.rank = countVariable(getenv, "SLURM_PROCID", 0, 0);
  step.node_name = getenv("SLURMD_NODENAME").value_or("");
  const int job_nodes = countVariable(getenv, "SLURM_JOB_NUM_NODES", 1, 1);
  const int nodes = countVariable(getenv, "SLURM_STEP_NUM_NODES", job_nodes, 1);
  const int replicas = replicas_override > 0 ? replicas_override : nodes * gpusPerNode(getenv);
  step.placement = {nodes, std::max(nodes, replicas)};
  step.submit_dir = getenv("SLURM_SUBMIT_DIR").value_or(".");
  step.launched = getenv(kLaunchedVariable).value_or("") == "1";
  step.part_of = getenv(kPartOfVariable).value_or("");
  step.part_leads = !step.part_of.empty() && getenv(kPartLeadsVariable).value_or("") == "1";
  if (!step.part_of.empty() &&
      step.part_of.find_first_not_of("0123456789") != std::string::npos) {
    throw InvalidInput(std::string(kPartOfVariable) + " must be a job id, got '" + step.part_of + "'");
  }
  step.node_list = getenv("SLURM_STEP_NODELIST").value_or(getenv("SLURM_JOB_NODELIST").value_or(""));
  return step;
}

std::optional<std::string> processEnv(const char* name) {
  const char* value = std::getenv(name);
  if (!value) return std::nullopt;
  return std::string(value);
}

}  // namespace pollux::agent
