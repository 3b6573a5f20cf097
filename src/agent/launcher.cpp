// SPDX-License-Identifier: GPL-2.0-or-later
#include "launcher.hpp"

#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "child_process.hpp"
#include "common/invalid_input.hpp"
#include "common/slurm_text/node_list.hpp"
#include "job_time.hpp"
#include "part_launcher.hpp"
#include "log.hpp"
#include "common/schema/goodput_report.hpp"
#include "common/slurm_text/adaptive_comment.hpp"
#include "slurm_env.hpp"
#include "store_host.hpp"
#include "workers.hpp"
#include "client/status_request.hpp"

namespace pollux::agent {
namespace {

// Agents per node: the job's --ntasks-per-node, else one.
int tasksPerNode() {
  const char* text = std::getenv("SLURM_NTASKS_PER_NODE");
  const int count = text ? std::atoi(text) : 0;
  return count > 0 ? count : 1;
}

// The job's submit directory, which its nodes share ("." where Slurm does not say).
std::string submitDir() {
  const char* dir = std::getenv("SLURM_SUBMIT_DIR");
  return dir && *dir ? dir : ".";
}

// A file for how each step's training ended (POLLUX_STEP_STATUS_FILE), written by the job's
// lead agent, private to the job's user, removed with the launcher. In the job's submit
// directory, which the agents' measurements already take to be shared by the job's nodes: a
// worker that becomes rank 0 may run on any of them. Empty where it cannot be made.
class StatusFile {
 public:
  explicit StatusFile(const std::string& job_id) {
    std::string name = submitDir() + "/.pollux-step-" + job_id + "-XXXXXX";
    const int fd = mkstemp(name.data());
    if (fd < 0) return;
    close(fd);
    path_ = name;
  }
  ~StatusFile() {
    if (!path_.empty()) std::remove(path_.c_str());
  }
  StatusFile(const StatusFile&) = delete;
  StatusFile& operator=(const StatusFile&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Whether a TCP port can be bound on every IPv4 address here, as rank 0's store binds it
// (with SO_REUSEADDR: a port left in TIME_WAIT is free, one listened on is not).
bool tcpPortFree(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return true;  // no socket to tell with: the derived port stands
  const int on = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_ANY);
  address.sin_port = htons(static_cast<uint16_t>(port));
  const bool bound = bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
  close(fd);
  return bound;
}

// Long enough for the interpreter to import PyTorch on a busy node.
constexpr std::chrono::seconds kStoreStartTimeout{60};

}  // namespace

std::optional<std::vector<std::string>> shrinkTarget(
    const std::vector<std::string>& current, const std::optional<policy::Allocation>& decided,
    const std::string& batch_host) {
  if (!decided || decided->nodes.size() >= current.size() ||
      decided->nodes.count(batch_host) == 0) {
    return std::nullopt;
  }
  std::vector<std::string> target;
  for (const auto& [node, gpus] : decided->nodes) {
    if (std::find(current.begin(), current.end(), node) == current.end()) return std::nullopt;
    target.push_back(node);
  }
  return target;
}

std::vector<std::string> stepCommand(const std::string& agent_path, const Options& options,
                                     size_t nodes, int tasks_per_node) {
  std::vector<std::string> command = {
      "srun", "--nodes=" + std::to_string(nodes),
      "--ntasks=" + std::to_string(nodes * static_cast<size_t>(tasks_per_node)),
      "--ntasks-per-node=" + std::to_string(tasks_per_node), "--kill-on-bad-exit=0", "--no-kill",
      agent_path};
  command.insert(command.end(), options.agent_arguments.begin(), options.agent_arguments.end());
  command.push_back("--");
  command.insert(command.end(), options.command.begin(), options.command.end());
  return command;
}

std::string newJoinToken() {
  unsigned char bytes[32];
  std::FILE* random = std::fopen("/dev/urandom", "rb");
  if (!random) return "";
  const size_t got = std::fread(bytes, 1, sizeof bytes, random);
  std::fclose(random);
  if (got != sizeof bytes) return "";
  static const char kHex[] = "0123456789abcdef";
  std::string token;
  for (const unsigned char byte : bytes) {
    token += kHex[byte >> 4];
    token += kHex[byte & 15];
  }
  return token;
}

std::map<std::string, std::string> stepEnvironment(const std::vector<std::string>& nodes,
                                                   int tasks_per_node,
                                                   const StepSettings& settings) {
  const std::string count = std::to_string(nodes.size());
  const std::string tasks = std::to_string(nodes.size() * static_cast<size_t>(tasks_per_node));
  std::map<std::string, std::string> env{
      {"SLURM_JOB_NODELIST", commaJoined(nodes)},
      {"SLURM_NODELIST", commaJoined(nodes)},
      {"SLURM_JOB_NUM_NODES", count},
      {"SLURM_NNODES", count},
      {"SLURM_NTASKS", tasks},
      {"SLURM_NPROCS", tasks},
      {"SLURM_TASKS_PER_NODE", std::to_string(tasks_per_node) + "(x" + count + ")"},
      {kLaunchedVariable, "1"}};
  if (!settings.join_token.empty()) env["POLLUX_JOIN_TOKEN"] = settings.join_token;
  if (settings.min_replicas > 0) env["POLLUX_MIN_REPLICAS"] = std::to_string(settings.min_replicas);
  if (!settings.status_file.empty()) env[kStepStatusVariable] = settings.status_file;
  if (settings.master_port > 0) env["MASTER_PORT"] = std::to_string(settings.master_port);
  if (settings.store_hosted) env["POLLUX_STORE_HOSTED"] = "1";
  return env;
}

std::optional<int> minReplicasOf(const std::string& comment) {
  try {
    const auto request = schema::parseAdaptiveComment(comment);
    if (request) return request->min_gpus;
  } catch (const InvalidInput&) {
  }
  return std::nullopt;
}

bool gpusInPartsOf(const std::string& comment) {
  try {
    const auto request = schema::parseAdaptiveComment(comment);
    return request && request->gpus_in_parts;
  } catch (const InvalidInput&) {
    return false;
  }
}

int stepStatus(int srun_status, std::optional<int> rank0_status) {
  return srun_status != 0 && rank0_status == 0 ? 0 : srun_status;
}

Launcher::Launcher(Options options, std::string job_id, std::string batch_host,
                   ReporterSettings plugin, int signal_fd)
    : options_(std::move(options)), job_id_(std::move(job_id)),
      batch_host_(std::move(batch_host)), plugin_(std::move(plugin)), signal_fd_(signal_fd) {}

int Launcher::run() {
  std::vector<std::string> nodes = jobNodes();
  const char* given = std::getenv("POLLUX_JOIN_TOKEN");
  step_.join_token = given && *given ? given : newJoinToken();
  const std::string comment = jobComment();
  step_.min_replicas = minReplicas(comment);
  step_.master_port = masterPortOnThisHost();
  const StatusFile status_file(job_id_);
  step_.status_file = status_file.path();
  int restarts_left = kRestartsAfterFailedChange;
  const bool in_parts = gpusInPartsOf(comment);
  PartLauncher parts(options_, job_id_, plugin_, step_, in_parts, submitDir());
  if (in_parts) return runInParts(parts);
  for (;;) {
    const int srun_status = runStep(nodes, parts);
    drainSignals();  // a requeue's SIGTERM may not have been read when srun ended
    const Rank0End rank0 = rank0End();
    const int status = stepStatus(srun_status, rank0.status);
    if (status != srun_status) {
      logLine("the step ended with status " + std::to_string(srun_status) +
              " (a node or agent of it was lost) after its rank 0 completed the training");
    }
    if (status == 0 || stopping_) return status;
    const auto target = decidedShrink(nodes);
    if (!target && rank0.resume && restarts_left-- > 0) {
      // A live change failed and the trainer checkpointed: the step goes on from its
      // checkpoint on the job's nodes.
      nodes = currentJobNodes();
      logLine("the step checkpointed for a live change that failed; starting it again on " +
              commaJoined(nodes));
      continue;
    }
    if (!target) return status;
    if (!shrinkJob(*target)) return status;
    logLine("step ended (status " + std::to_string(status) + ") for an in-place shrink; " +
            "starting it again on " + commaJoined(*target));
    nodes = *target;
  }
}

// Starts the job's store on this host in `store`, where the launcher hosts it (hostsStore);
// the steps' rank 0 hosts it otherwise. StepSettings::store_hosted says which to the steps.
void Launcher::startStore(std::optional<StoreHost>& store) {
  if (hostsStore()) {
    store.emplace(options_.command.front(), step_.master_port, kStoreStartTimeout);
    if (!store->ready()) {
      logLine("the job's store did not start on port " + std::to_string(step_.master_port) +
              "; rank 0 hosts it");
      store.reset();
    }
  }
  step_.store_hosted = store.has_value();  // the parts' steps read it too
}

int Launcher::runStep(const std::vector<std::string>& nodes, PartLauncher& parts) {
  const int per_node = tasksPerNode();
  if (!step_.status_file.empty()) std::ofstream(step_.status_file, std::ios::trunc);
  const std::string self = std::filesystem::read_symlink("/proc/self/exe");
  std::optional<StoreHost> store;
  startStore(store);
  ChildProcess srun(stepCommand(self, options_, nodes.size(), per_node),
                    stepEnvironment(nodes, per_node, step_));
  for (;;) {
    if (const auto status = srun.poll()) {
      if (stopping_ || !parts.hasSteps()) return *status;
      // Rank 0's worker completed the training, or every worker stopped at a checkpoint.
      const Rank0End end = rank0End();
      if (end.status == 0 || end.resume) return *status;
      return followParts(*status, nodes, parts);
    }
    parts.poll(nodes);
    pollfd ready{signal_fd_, POLLIN, 0};
    if (poll(&ready, 1, 200) > 0) handleSignal(&srun, nullptr);
  }
}

// A job whose GPUs are all in its parts runs no step of its own: the launcher asks for its
// parts, starts the training in the first that runs (its store hosted here, this host its
// MASTER_ADDR) and the job's workers in each later one, and ends once the steps in its parts
// have, with the status its lead wrote. Where the lead checkpointed at sched/pollux's request
// (a restart in new parts: the launcher itself was not signalled), it cancels the parts and
// starts the training again, from the checkpoint, in the next first part (with a new store:
// the last one holds the stopped training's group).
int Launcher::runInParts(PartLauncher& parts) {
  std::optional<StoreHost> store;
  const std::vector<std::string> home = {batch_host_};
  TimeLimitWatch time_limit(options_.grace_s + kTimeLimitLeadS,
                            [this] { return timeLeftText(job_id_); });
  bool before_time_limit = false;  // its training was asked to checkpoint ahead of the limit
  for (;;) {
    store.reset();
    startStore(store);
    if (!step_.status_file.empty()) std::ofstream(step_.status_file, std::ios::trunc);
    logLine("the job's GPUs are all in its parts (adaptive:resize=live): waiting for the first");
    while (!stopping_ || parts.hasSteps()) {
      if (parts.startedAny() && !parts.hasSteps()) break;
      if (before_time_limit || stopping_) {
        parts.reapSteps();  // no part is added or started once the training checkpoints
      } else {
        parts.poll(home);
      }
      if (!before_time_limit && parts.hasSteps() && time_limit.due()) {
        logLine("the job's time limit is due: its training checkpoints in its parts");
        parts.checkpointSteps();
        before_time_limit = true;
      }
      pollfd ready{signal_fd_, POLLIN, 0};
      if (poll(&ready, 1, 200) > 0) handleSignal(nullptr, &parts);
    }
    if (!parts.startedAny()) return 143;  // stopped before its training started
    const Rank0End end = rank0End();
    logLine("the steps in the job's parts ended; its lead wrote status " +
            (end.status ? std::to_string(*end.status) : std::string("none")));
    if (before_time_limit && !stopping_ && end.status == kExitAfterCheckpoint) {
      return awaitTimeLimit(parts);
    }
    if (stopping_ || end.status != kExitAfterCheckpoint) return end.status.value_or(1);
    logLine("the training checkpointed for a restart in new parts: its parts end");
    parts.endParts();
  }
}

// The training checkpointed ahead of the job's time limit: its parts end (their GPUs free to
// other jobs) and the job waits for the limit to end it, as Slurm ends a job at its limit.
int Launcher::awaitTimeLimit(PartLauncher& parts) {
  logLine(
      "the training checkpointed ahead of the job's time limit: its parts end, and the "
      "job waits for its limit");
  parts.endParts();
  while (!stopping_) {
    pollfd ready{signal_fd_, POLLIN, 0};
    if (poll(&ready, 1, 1000) > 0) handleSignal(nullptr, nullptr);
  }
  return kExitAfterCheckpoint;
}

// The job's own step ended before its training did while workers of the job train on in its
// parts (pollux.elastic went on without those lost; a lead among the lost wrote its worker's
// failure, and the next lead writes the training's end): the step is theirs until they end.
int Launcher::followParts(int srun_status, const std::vector<std::string>& nodes,
                          PartLauncher& parts) {
  logLine("the job's own step ended (status " + std::to_string(srun_status) +
          ") before its training did: the training goes on in the job's parts");
  while (parts.hasSteps()) {
    parts.poll(nodes);
    pollfd ready{signal_fd_, POLLIN, 0};
    if (poll(&ready, 1, 200) > 0) handleSignal(nullptr, &parts);
  }
  return srun_status;
}

void Launcher::drainSignals() {
  pollfd ready{signal_fd_, POLLIN, 0};
  while (poll(&ready, 1, 0) > 0) handleSignal(nullptr, nullptr);
}

// SIGTERM and SIGINT (the job ends or is requeued: Slurm signals the step too) and the
// trainer's own signals go on to srun (while it runs), which passes them to every task. Once
// the job's own step has ended (or where it has none), they go on to the srun of each step
// in its parts. A cancel or requeue of the job has Slurm signal the sruns the launcher
// started too, and srun ends its step on SIGTERM, before any checkpoint; where the parts'
// batch scripts started their steps (PartLauncher::stepsApartFromTheJob), SIGTERM goes to
// them through Slurm instead, and their lead checkpoints (runInParts waits for them; see
// there for the time limit).
void Launcher::handleSignal(ChildProcess* srun, PartLauncher* parts) {
  signalfd_siginfo info;
  if (read(signal_fd_, &info, sizeof info) != sizeof info) return;
  const int number = static_cast<int>(info.ssi_signo);
  if (number == SIGCHLD) return;
  if (number == SIGTERM || number == SIGINT) stopping_ = true;
  if (srun) {
    srun->signal(number);
  } else if (parts && number == SIGTERM && parts->stepsApartFromTheJob() && parts->hasSteps()) {
    logLine("the job is cancelled or requeued: its training checkpoints in its parts");
    parts->checkpointSteps();
  } else if (parts) {
    parts->signalSteps(number);
  }
}

// What sched/pollux decided for the job, if that is an in-place shrink of `nodes`.
std::optional<std::vector<std::string>> Launcher::decidedShrink(
    const std::vector<std::string>& nodes) {
  try {
    client::HttpClient client(10, plugin_.ca_file);
    const client::HttpResponse response =
        client::getStatus(client, plugin_.rest_url, "/v1/jobs/" + job_id_, plugin_.munge_socket);
    if (response.status != 200) {
      logLine("cannot read the job's decision from sched/pollux: HTTP " +
              std::to_string(response.status));
      return std::nullopt;
    }
    const schema::ReportReply reply = schema::parseReportReply(response.body);
    if (!reply.shrink_in_place) return std::nullopt;
    return shrinkTarget(nodes, reply.allocation, batch_host_);
  } catch (const std::exception& error) {
    logLine("cannot read the job's decision from sched/pollux: " + std::string(error.what()));
    return std::nullopt;
  }
}

bool Launcher::shrinkJob(const std::vector<std::string>& nodes) {
  const CommandOutput result =
      runCommand({"scontrol", "update", "JobId=" + job_id_, "NodeList=" + commaJoined(nodes)});
  if (result.status != 0) {
    logLine("scontrol could not shrink the job to " + commaJoined(nodes) + " (status " +
            std::to_string(result.status) + ")");
    return false;
  }
  return true;
}

// The job's comment as Slurm shows it ("" where squeue fails).
std::string Launcher::jobComment() {
  const CommandOutput result = runCommand({"squeue", "-h", "-j", job_id_, "-o", "%k"});
  if (result.status != 0) {
    logLine("cannot read the job's comment (squeue status " + std::to_string(result.status) +
            ")");
    return "";
  }
  return result.text();
}

// POLLUX_MIN_REPLICAS for the step, unless the job sets it: the min_gpus of its comment.
int Launcher::minReplicas(const std::string& comment) {
  if (std::getenv("POLLUX_MIN_REPLICAS")) return 0;
  const auto replicas = minReplicasOf(comment);
  if (!replicas) logLine("cannot read the job's min_gpus; POLLUX_MIN_REPLICAS left unset");
  return replicas.value_or(0);
}

// MASTER_PORT for the job's steps, unless the job sets it: the first port from the job's own
// (masterPort) that nothing listens on here, the batch host, where rank 0 runs.
int Launcher::masterPortOnThisHost() {
  if (std::getenv("MASTER_PORT")) return 0;
  const int derived = masterPort(job_id_);
  const int port = firstFreeMasterPort(derived, tcpPortFree);
  if (port != derived) {
    logLine("port " + std::to_string(derived) + " is in use on this host; MASTER_PORT=" +
            std::to_string(port));
  }
  return port;
}

// The step's store runs apart where the trainer is a Python interpreter (the pollux package's
// pollux.store) and rank 0 would host it on this host: the launcher chose the port, and the
// job's MASTER_ADDR, if any, is a loopback address.
bool Launcher::hostsStore() const {
  const char* address = std::getenv("MASTER_ADDR");
  const bool here = !address || !*address || std::string(address).rfind("127.", 0) == 0;
  return step_.master_port > 0 && here && !options_.command.empty() &&
         isPythonInterpreter(options_.command.front());
}

// What the step's rank 0 wrote to the status file.
Rank0End Launcher::rank0End() {
  std::ifstream file(step_.status_file);
  Rank0End end;
  int status = 0;
  std::string mark;
  if (!(file >> status)) return end;
  end.status = status;
  end.resume = file >> mark && mark == kResumeMark;
  return end;
}

std::vector<std::string> Launcher::hostnamesOf(const std::string& list) {
  auto nodes = hostnames(list);
  if (!nodes) throw std::runtime_error("scontrol show hostnames " + list + " failed");
  return *nodes;
}

// The job's nodes, expanded by Slurm's own `scontrol show hostnames`.
std::vector<std::string> Launcher::jobNodes() {
  const char* list = std::getenv("SLURM_JOB_NODELIST");
  if (!list || !*list) throw InvalidInput("SLURM_JOB_NODELIST is not set: --launch runs in a batch script");
  return hostnamesOf(list);
}

// The nodes Slurm shows the job on now (a live shrink may have taken some).
std::vector<std::string> Launcher::currentJobNodes() {
  const CommandOutput result = runCommand({"squeue", "-h", "-j", job_id_, "-o", "%N"});
  const std::string list = result.text();
  return result.status == 0 && !list.empty() ? hostnamesOf(list) : jobNodes();
}

}  // namespace pollux::agent
