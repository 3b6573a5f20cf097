// SPDX-License-Identifier: GPL-2.0-or-later
#include "part_launcher.hpp"

#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <system_error>
#include <thread>

#include "client/status_request.hpp"
#include "common/slurm_text/node_list.hpp"
#include "job_time.hpp"
#include "log.hpp"
#include "workers.hpp"

namespace pollux::agent {
namespace {

// How often the plugin is asked about the job's part.
constexpr auto kPollInterval = std::chrono::seconds(2);
// A part submitted this recently is not submitted again while the plugin has not seen it yet.
constexpr auto kResubmitAfter = std::chrono::seconds(60);
// How long the part's srun has to end once its part is cancelled.
constexpr auto kStepEndWait = std::chrono::seconds(10);

// Relays the output left in the launch directories of earlier runs of the job in `parent`
// (their names start with `prefix`), then removes them: a launcher that ended with its node
// could not. The plugin places a requeued job again only once the parts of its earlier run
// have ended, so no step still runs from them.
void removeEarlierRuns(const std::string& parent, const std::string& prefix) {
  std::vector<std::string> earlier;
  try {
    for (const auto& entry : std::filesystem::directory_iterator(parent)) {
      if (entry.path().filename().string().rfind(prefix, 0) == 0 && entry.is_directory() &&
          !entry.is_symlink()) {
        earlier.push_back(entry.path().string());
      }
    }
  } catch (const std::filesystem::filesystem_error& failure) {
    logLine(std::string("cannot look for earlier runs' directories: ") + failure.what());
  }
  for (const auto& dir : earlier) {
    logLine(dir +
            " was left by an earlier run of the job: its parts' output follows, then it "
            "is removed");
    try {
      relayLeftOutput(dir);
    } catch (const std::filesystem::filesystem_error& failure) {
      logLine(std::string("cannot read all of it: ") + failure.what());
    }
    std::error_code error;
    std::filesystem::remove_all(dir, error);
    if (error) logLine("cannot remove " + dir + ": " + error.message());
  }
}

}  // namespace

std::vector<std::string> partSubmitCommand(const std::string& job_id, const GetEnv& getenv,
                                           const std::string& time_left,
                                           const std::string& launch_dir) {
  const auto from = [&](const char* name) { return getenv(name).value_or(""); };
  std::vector<std::string> command = {"sbatch", "--parsable",
                                      "--comment=adaptive:part_of=" + job_id,
                                      "--job-name=" + (from("SLURM_JOB_NAME").empty()
                                                           ? "part-of-" + job_id
                                                           : from("SLURM_JOB_NAME"))};
  if (!from("SLURM_JOB_PARTITION").empty()) {
    command.push_back("--partition=" + from("SLURM_JOB_PARTITION"));
  }
  if (!from("SLURM_JOB_ACCOUNT").empty()) command.push_back("--account=" + from("SLURM_JOB_ACCOUNT"));
  if (!from("SLURM_JOB_QOS").empty()) command.push_back("--qos=" + from("SLURM_JOB_QOS"));
  if (!time_left.empty()) command.push_back("--time=" + time_left);
  const int tasks = countVariable(getenv, "SLURM_NTASKS_PER_NODE", 1, 1);
  const int gpus = countVariable(getenv, "SLURM_GPUS_ON_NODE", 1, 1);
  command.insert(
      command.end(),
      {"--nodes=1", "--ntasks-per-node=" + std::to_string(tasks),
       "--gres=gpu:" + std::to_string(gpus), "--no-requeue", "--output=/dev/null",
       "--wrap=" + (launch_dir.empty() ? "exec sleep infinity" : partBatchScript(launch_dir))});
  return command;
}

std::vector<std::string> partStepCommand(const std::string& agent_path, const Options& options,
                                         uint32_t part, size_t nodes, int tasks_per_node) {
  std::vector<std::string> command = stepCommand(agent_path, options, nodes, tasks_per_node);
  command.insert(command.begin() + 1, "--jobid=" + std::to_string(part));
  return command;
}

std::map<std::string, std::string> partStepEnvironment(
    const std::string& job_id, uint32_t part, const std::vector<std::string>& part_nodes,
    int tasks_per_node, const std::vector<std::string>& job_nodes, const StepSettings& settings,
    const GetEnv& getenv, bool leads) {
  // The status file too: a joiner's agent writes it once it leads the job (its worker is the
  // job's rank 0).
  auto env = stepEnvironment(part_nodes, tasks_per_node, settings);
  env["SLURM_JOB_ID"] = env["SLURM_JOBID"] = std::to_string(part);
  env["MASTER_ADDR"] = getenv("MASTER_ADDR").value_or(job_nodes.empty() ? "" : job_nodes.front());
  if (settings.master_port == 0) {
    env["MASTER_PORT"] = getenv("MASTER_PORT").value_or(std::to_string(masterPort(job_id)));
  }
  env[leads ? kPartLeadsVariable : "POLLUX_JOIN"] = "1";
  env[kPartOfVariable] = job_id;
  return env;
}

PartLauncher::PartLauncher(Options options, std::string job_id, ReporterSettings plugin,
                           const StepSettings& step, bool gpus_in_parts,
                           const std::string& launch_parent)
    : options_(std::move(options)), job_id_(std::move(job_id)), plugin_(std::move(plugin)),
      step_(step), gpus_in_parts_(gpus_in_parts) {
  if (!gpus_in_parts_) return;
  const std::string prefix = ".pollux-parts-" + job_id_ + "-";
  removeEarlierRuns(launch_parent, prefix);
  std::string dir = launch_parent + "/" + prefix + "XXXXXX";
  if (mkdtemp(dir.data())) {
    launch_dir_ = std::filesystem::absolute(dir).string();
  } else {
    logLine("cannot make a directory in " + launch_parent +
            " for the parts' batch scripts: the job's sruns start its parts' steps, and a "
            "cancel or requeue of the job ends them without a checkpoint");
  }
}

void PartLauncher::endParts() {
  if (!submitted_.empty()) {
    std::vector<std::string> scancel = {"scancel"};
    for (const uint32_t part : submitted_) scancel.push_back(std::to_string(part));
    const CommandOutput result = runCommand(scancel);
    if (result.status != 0) logLine("scancel of the job's parts failed: " + result.output);
  }
  submitted_.clear();
  submitted_at_.reset();
  training_started_ = false;
}

PartLauncher::~PartLauncher() {
  endParts();
  const auto deadline = Clock::now() + kStepEndWait;
  for (reapSteps(); !steps_.empty(); reapSteps()) {
    if (Clock::now() > deadline) {
      for (const auto& [part, srun] : steps_) {
        srun->signal(SIGKILL);
        srun->poll();
      }
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  steps_.clear();
  std::error_code ignored;  // what cannot be removed stays, private to the job's user
  if (!launch_dir_.empty()) std::filesystem::remove_all(launch_dir_, ignored);
}

void PartLauncher::poll(const std::vector<std::string>& job_nodes) {
  reapSteps();
  if (Clock::now() < next_poll_) return;
  next_poll_ = Clock::now() + kPollInterval;
  if (const auto part = askPlugin()) follow(*part, job_nodes);
}

void PartLauncher::follow(const schema::PartStatus& part,
                          const std::vector<std::string>& job_nodes) {
  // The job's own step goes on whatever fails here; the plugin grows the job by requeue
  // once a part does not run or join in time.
  try {
    if (part.state != schema::PartStatus::State::kWanted) submitted_at_.reset();  // seen
    if (part.state == schema::PartStatus::State::kWanted) {
      if (!submitted_at_ || Clock::now() - *submitted_at_ > kResubmitAfter) submit();
    } else if (part.state == schema::PartStatus::State::kRunning && !started_.count(part.job_id)) {
      start(part, job_nodes);
    }
  } catch (const std::exception& error) {
    logLine("live growth through a part: " + std::string(error.what()));
  }
}

std::optional<schema::PartStatus> PartLauncher::askPlugin() {
  try {
    client::HttpClient client(2, plugin_.ca_file);
    const client::HttpResponse response =
        client::getStatus(client, plugin_.rest_url, "/v1/jobs/" + job_id_, plugin_.munge_socket);
    if (response.status != 200) return std::nullopt;
    return schema::parseReportReply(response.body).part;
  } catch (const std::exception&) {
    return std::nullopt;  // no decision yet, or the plugin unreachable: asked again later
  }
}

void PartLauncher::submit() {
  submitted_at_ = Clock::now();
  const CommandOutput result =
      runCommand(partSubmitCommand(job_id_, processEnv, timeLeftText(job_id_), launch_dir_));
  const std::string answer = result.text();
  const std::string id = answer.substr(0, answer.find(';'));
  if (result.status != 0 || id.empty() || id.find_first_not_of("0123456789") != std::string::npos) {
    logLine("could not submit a part of the job for its live growth (sbatch status " +
            std::to_string(result.status) + ")");
    return;
  }
  submitted_.insert(static_cast<uint32_t>(std::stoul(id)));
  logLine("submitted job " + id + " as a part of the job, for its live growth");
}

void PartLauncher::start(const schema::PartStatus& part, const std::vector<std::string>& job_nodes) {
  submitted_.insert(part.job_id);  // cancelled with the job's step, whoever submitted it
  const int per_node = countVariable(processEnv, "SLURM_NTASKS_PER_NODE", 1, 1);
  const std::string self = std::filesystem::read_symlink("/proc/self/exe");
  const bool leads = gpus_in_parts_ && steps_.empty();  // no worker of the job runs
  const auto command = partStepCommand(self, options_, part.job_id, part.nodes.size(), per_node);
  const auto env = partStepEnvironment(job_id_, part.job_id, part.nodes, per_node, job_nodes, step_,
                                       processEnv, leads);
  std::unique_ptr<PartStep> step;
  if (launch_dir_.empty()) {
    step = std::make_unique<SrunStep>(command, env);
  } else {
    step = std::make_unique<ScriptStep>(launch_dir_, part.job_id, command, env);
  }
  steps_.emplace(part.job_id, std::move(step));
  started_.insert(part.job_id);
  training_started_ = true;
  logLine("part " + std::to_string(part.job_id) + " runs on " + commaJoined(part.nodes) +
          (leads ? ": starting the job's training there"
                 : ": starting the job's workers there, to join live"));
}

void PartLauncher::signalSteps(int number) {
  for (const auto& [part, srun] : steps_) srun->signal(number);
}

void PartLauncher::checkpointSteps() {
  if (steps_.empty()) return;
  std::vector<std::string> scancel = {"scancel", "--signal=TERM"};
  for (const auto& [part, srun] : steps_) scancel.push_back(std::to_string(part));
  const CommandOutput result = runCommand(scancel);
  if (result.status != 0)
    logLine("scancel --signal=TERM of the job's parts failed: " + result.output);
}

void PartLauncher::reapSteps() {
  for (auto step = steps_.begin(); step != steps_.end();) {
    const auto status = step->second->poll();
    if (!status) {
      ++step;
      continue;
    }
    logLine("the workers in part " + std::to_string(step->first) + " ended (status " +
            std::to_string(*status) + ")");
    step = steps_.erase(step);
  }
}

}  // namespace pollux::agent
