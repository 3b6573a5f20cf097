// SPDX-License-Identifier: GPL-2.0-or-later
#include "agent.hpp"

#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <system_error>
#include <vector>

#include "common/invalid_input.hpp"
#include "common/slurm_text/node_list.hpp"
#include "log.hpp"
#include "io/state_file.hpp"
#include "live_shrink.hpp"

namespace pollux::agent {
namespace {

// Log the first garbage messages, then one in this many, so a broken trainer cannot flood.
constexpr long kGarbageLogEvery = 1000;
constexpr double kChannelBatchMs = 20;
// Seconds between the trainer's live re-form without the leavers and the job's shrink: the
// leaving workers' agents exit meanwhile, so that Slurm kills no task of the step.
constexpr int kLeaveGraceS = 5;
// How long the lead waits for sched/pollux to take its report that training finished.
constexpr double kFinishedReportTimeoutS = 5;

std::string tempParent() {
  const char* tmp = std::getenv("TMPDIR");
  return tmp && *tmp ? tmp : "/tmp";
}

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

Agent::Agent(Options options, StepEnvironment step, NodeWorkers workers,
             ReporterSettings reporter, int signal_fd)
    : options_(std::move(options)), step_(std::move(step)),
      node_workers_(std::move(workers)), signal_fd_(signal_fd),
      wake_fd_(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)), started_(Clock::now()),
      channel_(tempParent()) {
  if (wake_fd_ < 0) throw std::system_error(errno, std::generic_category(), "eventfd");
  state_path_ = !options_.state_file.empty()
                    ? options_.state_file
                    : step_.submit_dir + "/.pollux-agent-" + step_.trainingJob() + ".json";
  state_.gpu_type = options_.gpu_type;
  state_.placement = step_.placement;
  state_.leads = step_.leadsJob();
  if (state_.leads) restoreState();
  reporter_ = std::make_unique<Reporter>(
      std::move(reporter), step_, state_,
      [this] {
        const uint64_t one = 1;
        if (write(wake_fd_, &one, sizeof one) < 0) return;  // already signalled
      },
      [this] { saveState(); });
}

Agent::~Agent() {
  reporter_.reset();  // joins the thread that writes wake_fd_
  close(wake_fd_);
}

void Agent::restoreState() {
  try {
    if (const auto saved = io::loadState(state_path_)) {
      Measurements restored = Measurements::fromJson(*saved);
      const int placements = restored.distinctSamples();
      {
        std::lock_guard<std::mutex> guard(state_.mutex);
        state_.measurements = std::move(restored);
      }
      logLine("measurements restored from " + state_path_ + " (" + std::to_string(placements) +
              " placements measured)");
    }
  } catch (const std::exception& error) {
    const std::string kept = state_path_ + ".corrupt";
    std::error_code ignored;
    std::filesystem::rename(state_path_, kept, ignored);
    logLine("state file unusable (" + std::string(error.what()) + "); kept as " + kept +
            ", measuring afresh");
  }
}

void Agent::saveState() {
  Json::Value state;
  {
    std::lock_guard<std::mutex> guard(state_.mutex);
    if (!state_.leads) return;
    state = state_.measurements.toJson();
  }
  try {
    io::saveState(state_path_, state);
  } catch (const std::exception& error) {
    logLine("cannot save measurements: " + std::string(error.what()));
  }
}

int Agent::run() {
  if (state_.gpu_type.empty()) reporter_->learnGpuType(3);
  std::map<std::string, std::string> env{{"POLLUX_AGENT_SOCKET", channel_.path()}};
  // The pollux package's live changes of the world size (pollux.elastic), unless the job
  // says otherwise; scripts without it ignore the variable.
  if (!std::getenv("POLLUX_ELASTIC")) env["POLLUX_ELASTIC"] = "1";
  {
    std::lock_guard<std::mutex> guard(state_.mutex);
    if (!state_.gpu_type.empty()) env["POLLUX_GPU_TYPE"] = state_.gpu_type;
  }
  for (int local_rank = 0; local_rank < node_workers_.per_node; ++local_rank) {
    auto worker_env = env;
    worker_env.merge(workerEnvironment(node_workers_, local_rank));
    workers_.push_back(std::make_unique<ChildProcess>(options_.command, worker_env));
  }
  exit_statuses_.assign(workers_.size(), std::nullopt);
  if (workers_.size() > 1) {
    const auto first = workerEnvironment(node_workers_, 0);
    const bool one_thread = first.count("OMP_NUM_THREADS") > 0;
    logLine("started " + std::to_string(workers_.size()) + " workers (RANK " + first.at("RANK") +
            "..., WORLD_SIZE " + first.at("WORLD_SIZE") + ", MASTER_ADDR " +
            node_workers_.master_addr + ":" + std::to_string(node_workers_.master_port) +
            (one_thread ? ", OMP_NUM_THREADS 1: set it in the job to tune it" : "") + ")");
  }
  reporter_->start();
  for (;;) {
    const auto status = pollWorkers();
    signalStepWhenDue();
    if (status && !(step_stop_ && step_stop_->open())) {
      drainChannel();  // what they sent before they exited (a leaver's `leaving`)
      return finish(*status);
    }
    for (auto* since : {&checkpoint_requested_, &stopping_failed_}) {
      if (*since && secondsSince(**since) > options_.grace_s) {
        logLine("workers did not exit within the grace time; killing them");
        signalWorkers(SIGKILL);
        since->reset();
      }
    }
    serveOnce(200);
    shrinkJobWhenDue();
  }
}

// The step's nodes as live growths through the job's parts change them: a part's join adds
// its nodes, the loss of its workers (the leave asked of them, or the part's failure, maybe
// with newer parts) takes them away again. Called with state_.mutex held.
void Agent::followLiveJoin(const ResizedMessage& resized) {
  const auto& shrink = state_.live_shrink;
  std::optional<int> nodes;
  if (shrink && shrink->part && shrink->requested && !shrink->done && !shrink->kept.empty()) {
    nodes = followPartNodesLeave(state_.live_joins, shrink->part, resized.from, resized.to,
                                 shrink->nodes, state_.placement.num_nodes);
  } else if (shrink && shrink->part && shrink->requested && !shrink->done) {
    nodes = followPartLeave(state_.live_joins, shrink->part, resized.from, resized.to,
                            state_.placement.num_nodes);
  }
  LiveJoin* joining = newestActiveJoin(state_.live_joins);
  if (joining && (!joining->requested || joining->done)) joining = nullptr;
  if (!nodes) nodes = followResize(state_.live_joins, resized.from, resized.to);
  if (nodes) state_.placement.num_nodes = *nodes;
  if (joining && joining->done) {  // the job trained at its old size while they started
    const double startup_s = std::max(0.0, secondsSince(joining->seen_running) - resized.stall_s);
    state_.measurements.recordJoinStartup(startup_s);
    logLine("job part " + std::to_string(joining->part) + "'s workers joined " +
            std::to_string(startup_s) + " s after it ran, besides the stall");
  }
}

void Agent::signalWorkers(int signal_number) {
  for (size_t i = 0; i < workers_.size(); ++i) {
    if (!exit_statuses_[i]) workers_[i]->signal(signal_number);
  }
}

std::optional<int> Agent::pollWorkers() {
  bool running = false;
  for (size_t i = 0; i < workers_.size(); ++i) {
    if (exit_statuses_[i]) continue;
    exit_statuses_[i] = workers_[i]->poll();
    if (!exit_statuses_[i]) {
      running = true;
    } else if (*exit_statuses_[i] != 0 && elastic_workers_ && !failure_ &&
               !checkpoint_requested_) {
      // pollux.elastic: the survivors re-form their group live, or stop for a checkpoint.
      if (!lost_) lost_ = exit_statuses_[i];
      logLine("worker " + std::to_string(i) + " exited with status " +
              std::to_string(*exit_statuses_[i]) +
              "; the others go on (the trainer re-forms its group live)");
    } else if (*exit_statuses_[i] != 0 && !failure_ && !checkpoint_requested_) {
      failure_ = exit_statuses_[i];
      if (workers_.size() > 1) {
        logLine("worker " + std::to_string(i) + " exited with status " +
                std::to_string(*failure_) + "; stopping the others");
        stopping_failed_ = Clock::now();
        signalWorkers(SIGTERM);
      }
      stopLaunchedStep();
    }
  }
  if (running) return std::nullopt;
  if (failure_) return failure_;
  bool completed = false;  // an elastic worker that outlived a lost one and ended well
  for (const auto& status : exit_statuses_) {
    if (*status == 0) completed = true;
  }
  if (lost_ && completed) return 0;
  for (const auto& status : exit_statuses_) {
    if (*status != 0 && (!lost_ || *status != *lost_)) return status;  // a checkpoint stop
  }
  if (lost_) return lost_;
  return 0;
}

void Agent::serveOnce(int timeout_ms) {
  // The channel is read in batches, at most every kChannelBatchMs: a step sent meanwhile
  // waits in the socket instead of waking the agent, which keeps the trainer's send cheap.
  const double since_drain_ms = secondsSince(last_drain_) * 1000;
  const bool channel_due = since_drain_ms >= kChannelBatchMs;
  std::vector<pollfd> fds{{signal_fd_, POLLIN, 0}, {wake_fd_, POLLIN, 0}};
  if (channel_due) {
    for (const int fd : channel_.pollDescriptors()) fds.push_back({fd, POLLIN, 0});
  } else {
    timeout_ms = static_cast<int>(kChannelBatchMs - since_drain_ms) + 1;
  }
  if (poll(fds.data(), fds.size(), timeout_ms) <= 0) return;
  if (fds[0].revents) handleSignal();
  if (fds[1].revents) {
    uint64_t count;
    if (read(wake_fd_, &count, sizeof count) == sizeof count) pushDecision();
  }
  if (!channel_due) return;
  if (fds[2].revents && channel_.acceptConnection()) pushDecision();
  for (size_t i = 3; i < fds.size(); ++i) {
    if (fds[i].revents) drainConnection(fds[i].fd);
  }
  last_drain_ = Clock::now();
}

void Agent::drainChannel() {
  while (channel_.acceptConnection()) continue;  // workers that connected since the last poll
  const auto fds = channel_.pollDescriptors();
  for (std::size_t i = 1; i < fds.size(); ++i) drainConnection(fds[i]);  // [0]: the listener
}

void Agent::drainConnection(int fd) {
  std::string message;
  while (channel_.receive(fd, message) && !message.empty()) handleMessage(message);
}

void Agent::handleMessage(const std::string& text) {
  TrainerMessage message;
  try {
    message = parseTrainerMessage(text);
  } catch (const InvalidInput& error) {
    if (garbage_messages_++ % kGarbageLogEvery == 0)
      logLine("ignored a bad message from the trainer (" + std::to_string(garbage_messages_) +
              " so far): " + error.what());
    return;
  }
  if (const auto* hello = std::get_if<HelloMessage>(&message)) {
    std::lock_guard<std::mutex> guard(state_.mutex);
    state_.measurements.setLimits(hello->limits);
    if (hello->elastic) elastic_workers_ = state_.elastic = true;
    state_.trainer_said_hello = true;
    state_.report_now = true;
    state_.wake_reporter.notify_all();
  } else if (const auto* resized = std::get_if<ResizedMessage>(&message)) {
    logLine("the trainer changed its world size live: " + std::to_string(resized->from) +
            " -> " + std::to_string(resized->to) + " replicas, stall " +
            std::to_string(resized->stall_s) + " s");
    if (resized->rank == 0) takeLead(resized->to);
    std::lock_guard<std::mutex> guard(state_.mutex);
    state_.measurements.recordResizeStall(resized->stall_s);
    state_.placement.num_replicas = resized->to;
    followLiveJoin(*resized);
    // The plugin counts a part's workers as joined, or as gone, from the job's reports: tell
    // it now rather than a report interval later (it would take joined workers for absent
    // ones and cancel their part under them, or hold the next growth back).
    state_.report_now = true;
    state_.wake_reporter.notify_all();
    // One live shrink per step, as the plugin shrinks a job in place once until a requeue
    // (besides leaving its parts).
    if (state_.live_shrink && state_.live_shrink->requested && !state_.live_shrink->done) {
      state_.live_shrink->done = true;
      const LiveShrink& shrink = *state_.live_shrink;
      if (!shrink.part || std::to_string(shrink.part) == step_.job_id) {
        state_.step_nodes_left.insert(shrink.nodes.begin(), shrink.nodes.end());
      }
      if (!state_.live_shrink->part) {
        state_.placement.num_nodes = static_cast<int>(state_.live_shrink->kept.size());
      }
      shrink_due_ = DueShrink{Clock::now() + std::chrono::seconds(kLeaveGraceS),
                              state_.live_shrink->kept, state_.live_shrink->part};
    }
  } else if (const auto* length = std::get_if<LengthMessage>(&message)) {
    declareLength(*length);
  } else if (const auto* step = std::get_if<StepMessage>(&message)) {
    std::lock_guard<std::mutex> guard(state_.mutex);
    // Every step's examples count towards the declared length, the first one's too.
    state_.measurements.recordProgress(*step, state_.placement.num_replicas);
    if (!first_step_seen_) {  // its time includes warm-up: it measures the restart instead
      first_step_seen_ = true;
      const double startup_s = secondsSince(started_);
      state_.measurements.recordStartup(startup_s);
      // Wall-clock time, so that a resize can be timed from the plugin's decision on.
      const double now_s = std::chrono::duration<double>(
                               std::chrono::system_clock::now().time_since_epoch()).count();
      char line[128];
      std::snprintf(line, sizeof line, "first training step at %.3f (%.2f s after the start)",
                    now_s, startup_s);
      logLine(line);
      return;
    }
    // Not attributed while its type is unknown, or while its workers span two types.
    const std::string gpu_type = trainingGpuType(state_.gpu_type, state_.live_joins);
    if (gpu_type.empty()) return;
    const int before = state_.measurements.distinctSamples();
    state_.measurements.addSample(gpu_type, state_.placement, *step);
    if (state_.measurements.distinctSamples() > before) {
      state_.report_now = true;
      state_.wake_reporter.notify_all();
    }
  } else if (std::holds_alternative<LeavingMessage>(message)) {
    noteLeaving();
  } else if (checkpoint_requested_) {
    logLine("trainer checkpointed " + std::to_string(secondsSince(*checkpoint_requested_)) +
            " s after the request");
  }
}

// The job's rank 0 left or failed, and one of this node's workers is rank 0 now: this agent
// reports for the job from here on, with the measurements the lead before it saved.
void Agent::takeLead(int replicas) {
  {
    std::lock_guard<std::mutex> guard(state_.mutex);
    if (state_.leads) return;
  }
  logLine("this node's worker is the job's rank 0 now: its agent reports for the job");
  restoreState();
  std::lock_guard<std::mutex> guard(state_.mutex);
  state_.leads = true;
  state_.placement.num_nodes = std::max(replicas / std::max(node_workers_.per_node, 1), 1);
}

// A worker of this node leaves the job at a live change. Once all of them do, the job goes on
// without this agent: it saves the measurements for the next lead and leads no longer.
void Agent::noteLeaving() {
  if (++workers_leaving_ != workers_.size()) return;  // once, at the last of them
  logLine("this node's workers leave the job live; it goes on without them");
  saveState();
  std::lock_guard<std::mutex> guard(state_.mutex);
  state_.leads = false;
}

bool Agent::allWorkersLeft() const {
  return !workers_.empty() && workers_leaving_ >= workers_.size();
}

void Agent::declareLength(const LengthMessage& length) {
  const std::string declared = describe(length);
  std::optional<std::string> refused;
  std::optional<double> target;
  {
    std::lock_guard<std::mutex> guard(state_.mutex);
    if (declared == last_declaration_) return;  // every worker of the node sends it
    refused = state_.measurements.declareLength(length);
    target = state_.measurements.length().target(state_.measurements.totals());
    state_.report_now = true;
    state_.wake_reporter.notify_all();
  }
  last_declaration_ = refused ? "" : declared;
  if (refused) {
    logLine("declared length " + declared + " refused: " + *refused + "; the job runs undeclared");
    return;
  }
  char line[256];
  if (target) {
    std::snprintf(line, sizeof line,
                  "declared length %s: target %.9g examples at the initial batch size",
                  declared.c_str(), *target);
  } else {
    std::snprintf(line, sizeof line,
                  "declared length %s: target known once the trainer reports epochs",
                  declared.c_str());
  }
  logLine(line);
}

void Agent::handleSignal() {
  signalfd_siginfo info;
  if (read(signal_fd_, &info, sizeof info) != sizeof info) return;
  const int number = static_cast<int>(info.ssi_signo);
  // Already stopping, or asked again (a failed node's agent repeats its stop).
  if ((number == SIGTERM || number == SIGINT) && (failure_ || checkpoint_requested_)) return;
  if ((number == SIGTERM || number == SIGINT) && !step_.part_of.empty() && !state_.leadsNow()) {
    // The part ends (shrunk off, cancelled, preempted): its workers leave, and the job's
    // others re-form live without them; a checkpoint request would stop them all. The
    // lead's part has its workers leave first (a live shrink moves the lead): a lead
    // signalled here is signalled by its job's launcher, as the job ends or is requeued.
    logLine("the part of job " + step_.part_of + " ends: its workers leave the job");
    signalWorkers(SIGKILL);
    return;
  }
  if (number == SIGTERM || number == SIGINT) {
    logLine(std::string("got ") + (number == SIGTERM ? "SIGTERM" : "SIGINT") +
            ": asking the trainer to checkpoint within " + std::to_string(options_.grace_s) + " s");
    requestCheckpoint();
  } else if (number != SIGCHLD) {
    signalWorkers(number);  // SIGHUP, SIGUSR1, SIGUSR2 belong to the trainer
  }
}

// The launcher's srun goes on when a task fails, so that a lost node does not end the step
// of workers that go on live; a worker that cannot go on ends the step itself here, as srun
// --kill-on-bad-exit would: SIGTERM to every task of the step (this agent ignores it), sent
// again within the grace time for the nodes whose tasks had not started (step_stop.hpp).
void Agent::stopLaunchedStep() {
  const char* step_id = std::getenv("SLURM_STEP_ID");
  if (!step_.launched || !step_id || !*step_id) return;
  step_stop_.emplace(
      std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(options_.grace_s)));
}

void Agent::signalStepWhenDue() {
  if (!step_stop_ || !step_stop_->due()) return;
  const CommandOutput result =
      runCommand({"scancel", "--signal=TERM", step_.job_id + "." + std::getenv("SLURM_STEP_ID")});
  // scancel runs inside the step it signals: its own SIGTERM (status 143) is a success.
  if (result.status != 0 && result.status != 128 + SIGTERM) {
    logLine("scancel could not stop the step (status " + std::to_string(result.status) + "): " +
            result.output);
  }
}

void Agent::requestCheckpoint() {
  if (checkpoint_requested_) return;
  checkpoint_requested_ = Clock::now();
  if (channel_.broadcast(kCheckpointRequest) == 0) signalWorkers(SIGTERM);
}

void Agent::pushDecision() {
  std::optional<Decision> decision;
  std::string resize;
  {
    std::lock_guard<std::mutex> guard(state_.mutex);
    decision = state_.decision;
    resize = pendingRequest(state_.live_shrink, state_.live_joins);
  }
  if (decision) channel_.broadcast(formatDecision(*decision));
  if (resize.empty() || channel_.broadcast(resize) == 0) return;
  logLine("live change: asked the trainer for " + resize.substr(0, resize.size() - 1));
  std::lock_guard<std::mutex> guard(state_.mutex);
  markRequested(state_.live_shrink, state_.live_joins, resize);
}

void Agent::shrinkJobWhenDue() {
  if (!shrink_due_ || Clock::now() < shrink_due_->at) return;
  const uint32_t part = shrink_due_->part;
  if (part && shrink_due_->kept.empty()) {
    shrink_due_.reset();
    const CommandOutput result = runCommand({"scancel", std::to_string(part)});
    logLine(result.status == 0 ? "live shrink: the job's part " + std::to_string(part) + " ends"
                               : "scancel of the job's part " + std::to_string(part) +
                                     " failed (status " + std::to_string(result.status) + "): " +
                                     result.output);
    return;
  }
  const std::string nodes = commaJoined(shrink_due_->kept);
  shrink_due_.reset();
  const std::string job = part ? std::to_string(part) : step_.trainingJob();
  const std::string what = part ? "the job's part " + job : "the job";
  const CommandOutput result =
      runCommand({"scontrol", "update", "JobId=" + job, "NodeList=" + nodes});
  logLine(result.status == 0 ? "live in-place shrink: " + what + " now holds " + nodes
                             : "scontrol could not shrink " + what + " to " + nodes + " (status " +
                                   std::to_string(result.status) + "): " + result.output);
}

int Agent::finish(int trainer_status) {
  if (checkpoint_requested_) {
    {
      std::lock_guard<std::mutex> guard(state_.mutex);
      state_.measurements.recordCheckpoint(secondsSince(*checkpoint_requested_));
    }
    saveState();
    logLine("training stopped for the requeue or resize (status " + std::to_string(trainer_status) + ")");
    return withStatusWritten(kExitAfterCheckpoint);
  }
  if (trainer_status == 0 && allWorkersLeft()) {
    logLine("this node's workers left the job live");
    return 0;
  }
  saveState();
  // Its script may still write, evaluate or copy out: no change is to stop it meanwhile.
  if (trainer_status == 0) reporter_->reportTrainingFinished(kFinishedReportTimeoutS);
  logLine("training exited with status " + std::to_string(trainer_status) + " after " +
          std::to_string(reporter_->reportsAccepted()) + " accepted reports");
  // pollux.elastic's trainer checkpoints and exits so when a live change fails.
  const bool resume = elastic_workers_ && trainer_status == kExitAfterCheckpoint;
  return withStatusWritten(trainer_status, resume);
}

// The job's lead tells its launcher how it ended (see Launcher, stepStatus). An agent that led
// before a live change may have written first: the lead at the end writes last.
int Agent::withStatusWritten(int status, bool resume) {
  const char* file = std::getenv(kStepStatusVariable);
  if (state_.leadsNow() && file && *file) {
    std::ofstream(file, std::ios::trunc) << status << (resume ? std::string(" ") + kResumeMark : "")
                                         << "\n";
  }
  return status;
}

}  // namespace pollux::agent
