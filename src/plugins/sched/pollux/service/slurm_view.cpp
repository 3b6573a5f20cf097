#include "slurm_view.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <sstream>

namespace pollux::service {

namespace {

bool allDigits(const std::string& text) {
  if (text.empty() || text.size() > 6) return false;
  for (char c : text) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::stringstream stream(text);
  std::string part;
  while (std::getline(stream, part, separator)) parts.push_back(part);
  return parts;
}

// Replaces every `from` in `text` by `to`.
std::string replaceAll(std::string text, const std::string& from, const std::string& to) {
  for (auto at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
  return text;
}

// The entries of a GRES list, split at the commas and semicolons outside parentheses (commas
// also separate socket ranges inside "(S:0,1)"). Slurm prints an untyped GPU as "(null)".
std::vector<std::string> entriesOf(const std::string& gres) {
  std::vector<std::string> entries(1);
  int depth = 0;
  for (char c : replaceAll(gres, "(null)", "")) {
    depth += c == '(' ? 1 : c == ')' ? -1 : 0;
    if (depth == 0 && (c == ',' || c == ';')) entries.emplace_back();
    else entries.back() += c;
  }
  return entries;
}

// One entry: "gpu:a100:4(S:0)", "gres/gpu:a100=2", "gpu:2", "gpu:a100(CNT:2)".
std::optional<GpuGres> parseEntry(std::string entry) {
  const auto open = entry.find('(');
  const std::string details = open == std::string::npos ? "" : entry.substr(open + 1);
  entry = entry.substr(0, open);
  for (const char* prefix : {"gres:", "gres/"}) {
    if (entry.rfind(prefix, 0) == 0) entry = entry.substr(5);
  }
  for (char& c : entry) {
    if (c == '=') c = ':';
  }
  const auto fields = split(entry, ':');
  if (fields.empty() || fields[0] != "gpu") return std::nullopt;
  if (details.rfind("CNT:", 0) == 0 && fields.size() <= 2) {
    const std::string count = details.substr(4, details.find(')') - 4);
    if (allDigits(count)) return GpuGres{fields.size() == 2 ? fields[1] : "", std::stoi(count)};
  }
  if (fields.size() == 2 && allDigits(fields[1])) return GpuGres{"", std::stoi(fields[1])};
  if (fields.size() == 3 && allDigits(fields[2])) return GpuGres{fields[1], std::stoi(fields[2])};
  return std::nullopt;
}

}  // namespace

std::optional<GpuGres> parseGpuGres(const std::string& gres) {
  for (const auto& entry : entriesOf(gres)) {
    if (auto gpus = parseEntry(entry)) return gpus;
  }
  return std::nullopt;
}

int countGpus(const std::string& gres) {
  int gpus = 0;
  for (const auto& entry : entriesOf(gres)) gpus += parseEntry(entry).value_or(GpuGres{}).count;
  return gpus;
}

std::string gpuTypeOf(const GpuGres& gpus) { return gpus.type.empty() ? kUntypedGpu : gpus.type; }

GpuGres requestedGpus(const GpuRequest& request) {
  GpuGres total;
  const auto consider = [&total](const std::string& form, int times) {
    const auto gpus = parseGpuGres(form);
    if (gpus && gpus->count * std::max(times, 1) > total.count) {
      total = GpuGres{gpus->type, gpus->count * std::max(times, 1)};
    }
  };
  consider(request.per_node, request.nodes);
  consider(request.per_job, 1);
  consider(request.per_task, request.tasks);
  consider(request.per_socket, request.sockets_per_node * request.nodes);
  return total;
}

policy::NodeDemand nodeDemandOf(const ResourceRequest& request) {
  policy::NodeDemand demand;
  demand.cpus = std::max(1, request.min_cpus_per_node);
  const bool default_cpus = request.cpus_per_tres.empty() && request.cpus_per_task <= 1;
  const int cpus_per_gpu = default_cpus
                               ? request.default_cpus_per_gpu
                               : parseGpuGres(request.cpus_per_tres).value_or(GpuGres{}).count;
  demand.cpus_per_gpu = std::max(cpus_per_gpu, request.ntasks_per_gpu * request.cpus_per_task);
  const std::int64_t memory_per_gpu =
      request.mem_per_tres.empty()
          ? request.default_memory_mb_per_gpu
          : parseGpuGres(request.mem_per_tres).value_or(GpuGres{}).count;
  if (memory_per_gpu > 0 && !request.memory_set) {
    demand.memory_mb_per_gpu = memory_per_gpu;
  } else if (request.memory_mb_per_cpu > 0) {
    demand.memory_mb_per_cpu = request.memory_mb_per_cpu;
  } else if (request.memory_mb_per_node > 0) {
    demand.memory_mb = request.memory_mb_per_node;
  } else {
    demand.whole_node_memory = true;
  }
  return demand;
}

std::vector<std::string> splitNames(const std::string& comma_separated) {
  std::vector<std::string> nodes;
  for (auto& name : split(comma_separated, ',')) {
    if (!name.empty()) nodes.push_back(name);
  }
  return nodes;
}

void resolveGpuTypes(std::vector<SlurmJob>& jobs, const std::vector<SlurmNode>& nodes) {
  std::map<std::string, std::string> node_types;
  for (const auto& node : nodes) node_types[node.name] = gpuTypeOf(node.gpus);
  for (auto& job : jobs) {
    if (!job.gpus_per_node || !job.gpus_per_node->type.empty() || job.nodes.empty()) continue;
    const auto type = node_types.find(job.nodes.front());
    if (type != node_types.end()) job.gpus_per_node->type = type->second;
  }
}

}  // namespace pollux::service
