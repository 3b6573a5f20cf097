// SPDX-License-Identifier: GPL-2.0-or-later
#include "workers.hpp"

#include <sstream>

#include "common/invalid_input.hpp"
#include "common/text_number.hpp"

namespace pollux::agent {
namespace {

constexpr int kFirstMasterPort = 20000;
constexpr int kMasterPorts = 10000;
constexpr int kMaxWorkers = 1024;

std::vector<std::string> splitCommas(const std::string& text) {
  std::vector<std::string> items;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    if (!item.empty()) items.push_back(item);
  }
  return items;
}

}  // namespace

int masterPort(const std::string& job_id) {
  const auto id = parseInteger(job_id, 0, (1L << 32) - 1);
  if (!id) throw InvalidInput("SLURM_JOB_ID='" + job_id + "' is not a job id");
  return kFirstMasterPort + static_cast<int>(*id % kMasterPorts);
}

int firstFreeMasterPort(int derived, const std::function<bool(int)>& is_free) {
  for (int offset = 0; offset < kMasterPorts; ++offset) {
    const int port = kFirstMasterPort + (derived - kFirstMasterPort + offset) % kMasterPorts;
    if (is_free(port)) return port;
  }
  return derived;
}

std::string firstHost(const std::string& host_list) {
  const std::string first = host_list.substr(0, host_list.find_first_of(",["));
  if (first.empty()) throw InvalidInput("empty host list '" + host_list + "'");
  if (first.size() == host_list.size() || host_list[first.size()] == ',') return first;
  // "prefix[07-09,12]": the first number of the range, its zero padding kept.
  const size_t open = first.size();
  const size_t end = host_list.find_first_of("-,]", open + 1);
  const std::string number = host_list.substr(open + 1, end == std::string::npos ? 0 : end - open - 1);
  if (number.empty() || number.find_first_not_of("0123456789") != std::string::npos) {
    throw InvalidInput("malformed host list '" + host_list + "'");
  }
  return first + number;
}

NodeWorkers readNodeWorkers(const GetEnv& getenv, int per_node) {
  NodeWorkers workers;
  const auto visible = getenv("CUDA_VISIBLE_DEVICES");
  if (visible) workers.gpus = splitCommas(*visible);
  const int on_node = countVariable(getenv, "SLURM_GPUS_ON_NODE", 0, 0);
  const int gpus = on_node > 0 ? on_node : static_cast<int>(workers.gpus.size());
  workers.per_node = per_node > 0 ? per_node : std::max(gpus, 1);
  if (workers.per_node > kMaxWorkers) throw InvalidInput("more than 1024 workers on a node");
  if (!workers.gpus.empty() && workers.per_node > static_cast<int>(workers.gpus.size())) {
    throw InvalidInput(std::to_string(workers.per_node) + " workers for the " +
                       std::to_string(workers.gpus.size()) +
                       " GPU(s) of CUDA_VISIBLE_DEVICES: one GPU per worker");
  }
  workers.threads_given = getenv("OMP_NUM_THREADS").has_value();
  workers.node_rank = countVariable(getenv, "SLURM_NODEID", 0, 0);
  const int job_nodes = countVariable(getenv, "SLURM_JOB_NUM_NODES", 1, 1);
  workers.nodes = countVariable(getenv, "SLURM_STEP_NUM_NODES", job_nodes, 1);
  const auto node_list = getenv("SLURM_JOB_NODELIST");
  const auto master_addr = getenv("MASTER_ADDR");
  if (master_addr && !master_addr->empty()) {
    workers.master_addr = *master_addr;  // the job's own choice
  } else {
    workers.master_addr = node_list && !node_list->empty() ? firstHost(*node_list) : "127.0.0.1";
  }
  workers.master_port = countVariable(getenv, "MASTER_PORT", 0, 1);
  if (workers.master_port == 0) {
    workers.master_port = masterPort(getenv("SLURM_JOB_ID").value_or(""));
  }
  if (workers.master_port > 65535) throw InvalidInput("MASTER_PORT is above 65535");
  return workers;
}

std::map<std::string, std::string> workerEnvironment(const NodeWorkers& workers, int local_rank) {
  std::map<std::string, std::string> env{
      {"RANK", std::to_string(workers.node_rank * workers.per_node + local_rank)},
      {"LOCAL_RANK", std::to_string(local_rank)},
      {"WORLD_SIZE", std::to_string(workers.nodes * workers.per_node)},
      {"LOCAL_WORLD_SIZE", std::to_string(workers.per_node)},
      {"GROUP_RANK", std::to_string(workers.node_rank)},
      {"MASTER_ADDR", workers.master_addr},
      {"MASTER_PORT", std::to_string(workers.master_port)}};
  const bool gpu_each = workers.per_node == static_cast<int>(workers.gpus.size());
  if (gpu_each) env["CUDA_VISIBLE_DEVICES"] = workers.gpus.at(local_rank);
  if (workers.per_node > 1 && !workers.threads_given) env["OMP_NUM_THREADS"] = "1";
  return env;
}

}  // namespace pollux::agent
