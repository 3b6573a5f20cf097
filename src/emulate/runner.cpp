// SPDX-License-Identifier: GPL-2.0-or-later
#include "runner.hpp"

#include <signal.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "checkpoint.hpp"
#include "pollux/pollux_train.h"
#include "step_schedule.hpp"

namespace pollux::emulate {
namespace {

volatile sig_atomic_t stop_signal = 0;

void onStopSignal(int signal) { stop_signal = signal; }

// Reports a step at most this often: shorter steps are trained but not all reported.
constexpr double kReportSpacing = 0.01;
// Longest sleep between looks at the agent's channel and at signals.
constexpr double kPollInterval = 0.1;
constexpr double kProgressLineEvery = 5;
constexpr double kOtherTaskPoll = 0.5;

// The channel to pollux-agent, and the stop requests (the agent's or a signal).
class Channel {
 public:
  explicit Channel(const pollux_limits& limits) {
    if (pollux_connect(&trainer_, &limits) == 0) return;
    if (trainer_.fd < 0)
      std::fprintf(stderr, "pollux-emulate: cannot reach pollux-agent (%s); training alone\n",
                   std::strerror(errno));
    else
      std::fprintf(stderr, "pollux-emulate: hello to pollux-agent not sent (%s)\n",
                   std::strerror(errno));
  }
  ~Channel() { pollux_close(&trainer_); }
  Channel(const Channel&) = delete;
  Channel& operator=(const Channel&) = delete;

  bool stopRequested() { return stop_signal != 0 || pollux_checkpoint_requested(&trainer_); }
  // Sleeps until `deadline`, looking for stop requests; false if one came.
  bool waitUntil(double deadline) {
    for (;;) {
      if (stopRequested()) return false;
      const double now = monotonicNow();
      if (now >= deadline) return true;
      sleepUntil(std::min(deadline, now + kPollInterval));
    }
  }
  std::optional<BatchConfig> decision() {
    pollux_decision latest;
    if (!pollux_decision_get(&trainer_, &latest)) return std::nullopt;
    return BatchConfig{latest.local_bsz, latest.accum_steps};
  }
  void reportStep(const pollux_step& step) { pollux_report_step(&trainer_, &step); }
  // The job's declared length (pollux_train.h refuses bad values with a message on stderr).
  void declareEpochs(double epochs, double dataset_size) {
    pollux_declare_epochs(&trainer_, epochs, dataset_size);
  }
  void declareExamples(double examples) { pollux_declare_examples(&trainer_, examples); }
  // Tells the agent the checkpoint is written; the exit status of a stop.
  int acknowledgeStop() {
    pollux_checkpointed(&trainer_);
    return stop_signal != 0 ? 128 + stop_signal : 0;
  }

 private:
  pollux_trainer trainer_;
};

pollux_limits wireLimits(const model::BatchLimits& limits) {
  return {limits.init_batch_size, limits.max_batch_size, limits.min_local_bsz,
          limits.max_local_bsz, limits.accumulation};
}

class FirstTask {
 public:
  FirstTask(EmulatedJob& job, const RunSettings& settings)
      : job_(job), settings_(settings), channel_(wireLimits(job.limits())) {}

  int run() {
    declare();
    if (!channel_.waitUntil(started_ + settings_.startup_s)) return stop();
    StepSchedule schedule(settings_.time_scale, monotonicNow());
    while (!job_.state().done) {
      const BatchConfig config = job_.batchFor(channel_.decision());
      const double profile_seconds = job_.stepSeconds(config);
      // A step cut short by a stop is lost, as in real training.
      if (!channel_.waitUntil(schedule.next(profile_seconds, monotonicNow()))) return stop();
      job_.step(config);
      afterStep(config, schedule.wallSeconds(profile_seconds));
    }
    return finish();
  }

 private:
  void afterStep(const BatchConfig& config, double wall_seconds) {
    const double now = monotonicNow();
    if (now - last_report_ >= kReportSpacing) report(config, wall_seconds), last_report_ = now;
    if (now - last_checkpoint_ >= settings_.checkpoint_interval_s) save(), last_checkpoint_ = now;
    if (now - last_line_ >= kProgressLineEvery) progressLine(config), last_line_ = now;
  }

  // The length, in the agent's unit: examples at the initial batch size, as progress counts.
  void declare() {
    if (settings_.declare_epochs > 0) {
      channel_.declareEpochs(settings_.declare_epochs, settings_.dataset_size);
    } else if (settings_.declare) {
      channel_.declareExamples(job_.targetExamples());
    }
  }

  void report(const BatchConfig& config, double wall_seconds) {
    const model::GradParams grad = job_.perExampleGrad(config);
    const double examples = job_.state().examples;
    channel_.reportStep({wall_seconds, config.local_bsz, config.accum_steps, examples,
                         examples / settings_.dataset_size,
                         job_.computeSeconds(config) / settings_.time_scale, grad.sqr,
                         grad.var});
  }

  void save() { saveCheckpoint(settings_.checkpoint, settings_.app, job_.state()); }

  // Writes the checkpoint and says so, with `why` (the line resumes are checked against).
  void saveAndLog(const char* why) {
    save();
    std::fprintf(stderr, "pollux-emulate: checkpoint written to %s at progress %.1f (%s)\n",
                 settings_.checkpoint.c_str(), job_.state().progress, why);
  }

  int stop() {
    saveAndLog(stop_signal != 0 ? strsignal(stop_signal) : "asked by pollux-agent");
    return channel_.acknowledgeStop();
  }

  int finish() {
    const double wall_seconds = monotonicNow() - started_;
    saveAndLog("finished");
    const TrainingState& state = job_.state();
    std::printf("pollux-emulate: finished %s: %ld steps, %.0f examples, progress %.1f of %.1f, "
                "%.3f s\n", settings_.app.c_str(), state.steps, state.examples, state.progress,
                job_.target(), wall_seconds);
    std::fflush(stdout);
    return 0;
  }

  void progressLine(const BatchConfig& config) {
    std::fprintf(stderr,
                 "pollux-emulate: %s at %.1f %% (progress %.1f of %.1f), batch %ld = %d GPU(s) "
                 "x %d x %d micro-batch(es)\n",
                 settings_.app.c_str(), 100 * job_.state().progress / job_.target(),
                 job_.state().progress, job_.target(), job_.batchSize(config), job_.replicas(),
                 config.local_bsz, config.accum_steps + 1);
  }

  EmulatedJob& job_;
  const RunSettings& settings_;
  Channel channel_;
  const double started_ = monotonicNow();
  double last_report_ = 0;
  double last_checkpoint_ = started_;
  double last_line_ = started_;
};

}  // namespace

void installStopHandler() {
  struct sigaction action;
  std::memset(&action, 0, sizeof action);
  action.sa_handler = onStopSignal;
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGINT, &action, nullptr);
}

int runFirstTask(EmulatedJob& job, const RunSettings& settings) {
  return FirstTask(job, settings).run();
}

int runOtherTask(const std::string& app, const std::string& checkpoint) {
  Channel channel(pollux_limits{1, 1, 1, 1, 0});  // this task's agent does not report
  for (;;) {
    const auto state = loadCheckpoint(checkpoint, app);
    if (state && state->done) return 0;
    if (!channel.waitUntil(monotonicNow() + kOtherTaskPoll)) return channel.acknowledgeStop();
  }
}

}  // namespace pollux::emulate
