#include "runner.hpp"

#include <signal.h>
#include <time.h>

#include <cmath>
#include <cstdio>
#include <cstring>

#include "checkpoint.hpp"
#include "invalid_input.hpp"
#include "pollux/pollux_train.h"

namespace pollux::emulate {
namespace {

volatile sig_atomic_t stop_signalled = 0;

void onStopSignal(int) { stop_signalled = 1; }

double now() {
  timespec clock;
  clock_gettime(CLOCK_MONOTONIC, &clock);
  return double(clock.tv_sec) + double(clock.tv_nsec) * 1e-9;
}

void sleepUntil(double deadline) {
  timespec at;
  at.tv_sec = time_t(deadline);
  at.tv_nsec = long((deadline - double(at.tv_sec)) * 1e9);
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, nullptr) == EINTR && !stop_signalled) {
  }
}

// Reports a step at most this often: shorter steps are trained but not all reported.
constexpr double kReportSpacing = 0.01;
constexpr double kProgressLineEvery = 5;

class FirstTask {
 public:
  FirstTask(EmulatedJob& job, const Options& options, std::string checkpoint)
      : job_(job), options_(options), checkpoint_(std::move(checkpoint)),
        dataset_size_(options.dataset_size > 0 ? options.dataset_size
                                                : 1000.0 * double(job.limits().init_batch_size)) {}

  int run() {
    connect();
    sleepUntil(now() + options_.startup_s);
    double deadline = now(), last_report = 0, last_checkpoint = now(), last_line = now();
    while (!job_.state().done) {
      if (stop_signalled || pollux_checkpoint_requested(&trainer_)) return stop();
      const BatchConfig config = currentBatch();
      const double wall = job_.stepSeconds(config) / options_.time_scale;
      deadline = std::max(deadline + wall, now() - 1.0);  // never try to catch up > 1 s
      sleepUntil(deadline);
      job_.step(config);
      if (now() - last_report >= kReportSpacing) report(config, wall), last_report = now();
      if (now() - last_checkpoint >= options_.checkpoint_interval_s)
        save(), last_checkpoint = now();
      if (now() - last_line >= kProgressLineEvery) progressLine(config), last_line = now();
    }
    save();
    std::printf("pollux-emulate: finished %s: %ld steps, %.0f examples, progress %.1f, %.1f s\n",
                options_.app.c_str(), job_.state().steps, job_.state().examples,
                job_.state().progress, now() - started_);
    pollux_close(&trainer_);
    return 0;
  }

 private:
  void connect() {
    const model::BatchLimits limits = job_.limits();
    const pollux_limits wire{limits.init_batch_size, limits.max_batch_size, limits.min_local_bsz,
                             limits.max_local_bsz, limits.accumulation};
    if (pollux_connect(&trainer_, &wire) != 0)
      std::fprintf(stderr, "pollux-emulate: cannot reach pollux-agent (%s); training alone\n",
                   std::strerror(errno));
  }

  BatchConfig currentBatch() {
    pollux_decision decision;
    if (!pollux_decision_get(&trainer_, &decision)) return job_.defaultBatch();
    return job_.clamp({decision.local_bsz, decision.accum_steps});
  }

  void report(const BatchConfig& config, double wall) {
    const model::GradParams grad = job_.perExampleGrad(config);
    const pollux_step step{wall, config.local_bsz, config.accum_steps, job_.state().examples,
                           job_.state().examples / dataset_size_,
                           job_.computeSeconds(config) / options_.time_scale, grad.sqr, grad.var};
    pollux_report_step(&trainer_, &step);
  }

  void save() { saveCheckpoint(checkpoint_, options_.app, job_.state()); }

  int stop() {
    save();
    std::fprintf(stderr, "pollux-emulate: checkpoint written to %s at progress %.17g (%s)\n",
                 checkpoint_.c_str(), job_.state().progress,
                 stop_signalled ? "SIGTERM" : "asked by pollux-agent");
    pollux_checkpointed(&trainer_);
    pollux_close(&trainer_);
    return stop_signalled ? 143 : 0;
  }

  void progressLine(const BatchConfig& config) {
    std::fprintf(stderr, "pollux-emulate: %s %.1f%% on %d GPU(s), batch %ld (%d x %d x %d)\n",
                 options_.app.c_str(), 100 * job_.state().progress / job_.target(),
                 job_.replicas(), job_.batchSize(config), job_.replicas(), config.local_bsz,
                 config.accum_steps + 1);
  }

  EmulatedJob& job_;
  const Options& options_;
  std::string checkpoint_;
  double dataset_size_;
  double started_ = now();
  pollux_trainer trainer_;
};

}  // namespace

void installStopHandler() {
  struct sigaction action;
  std::memset(&action, 0, sizeof action);
  action.sa_handler = onStopSignal;
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGINT, &action, nullptr);
}

int runFirstTask(EmulatedJob& job, const Options& options, const std::string& checkpoint) {
  return FirstTask(job, options, checkpoint).run();
}

int runOtherTask(const std::string& app, const std::string& checkpoint) {
  pollux_trainer trainer;
  const pollux_limits none{1, 1, 1, 1, 0};
  pollux_connect(&trainer, &none);
  while (!stop_signalled && !pollux_checkpoint_requested(&trainer)) {
    try {
      const auto state = loadCheckpoint(checkpoint, app);
      if (state && state->done) return 0;
    } catch (const std::exception&) {
      // The first task may be writing it; look again.
    }
    sleepUntil(now() + 0.5);
  }
  pollux_checkpointed(&trainer);
  return stop_signalled ? 143 : 0;
}

}  // namespace pollux::emulate
