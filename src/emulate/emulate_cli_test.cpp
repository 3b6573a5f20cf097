// SPDX-License-Identifier: GPL-2.0-or-later
// pollux-emulate as a process, alone and under a fake pollux-agent: reports, a decision applied
// from the next step, checkpoints on request and on SIGTERM, a resumed run that continues where
// the first stopped, wall time under time scaling, the waiting tasks, and bad input.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "applications.hpp"
#include "checkpoint.hpp"
#include "emulated_job.hpp"
#include "test_support.hpp"

extern char** environ;

namespace pollux::emulate {
namespace {

using Variables = std::map<std::string, std::string>;

// The test's environment without Slurm's, CUDA's and pollux-agent's variables, plus `extra`.
std::vector<std::string> childEnvironment(const Variables& extra) {
  std::vector<std::string> environment;
  for (char** variable = environ; *variable; ++variable) {
    const std::string entry = *variable;
    const std::string name = entry.substr(0, entry.find('='));
    if (name.rfind("SLURM_", 0) == 0 || name == "CUDA_VISIBLE_DEVICES" ||
        name == "POLLUX_AGENT_SOCKET" || name == "POLLUX_GPU_TYPE")
      continue;
    environment.push_back(entry);
  }
  for (const auto& [name, value] : extra) environment.push_back(name + "=" + value);
  return environment;
}

std::vector<char*> pointers(std::vector<std::string>& strings) {
  std::vector<char*> result;
  for (auto& text : strings) result.push_back(text.data());
  result.push_back(nullptr);
  return result;
}

// A pollux-emulate process; its stdout and stderr go to files in `dir`.
class Emulator {
 public:
  Emulator(const TempDir& dir, const std::vector<std::string>& arguments,
           const Variables& variables = {})
      : out_(dir.file("stdout-" + std::to_string(++runs_))),
        err_(dir.file("stderr-" + std::to_string(runs_))) {
    std::vector<std::string> argv{std::getenv("POLLUX_EMULATE")};
    argv.insert(argv.end(), arguments.begin(), arguments.end());
    std::vector<std::string> environment = childEnvironment(variables);
    posix_spawn_file_actions_t files;
    posix_spawn_file_actions_init(&files);
    posix_spawn_file_actions_addopen(&files, 1, out_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_addopen(&files, 2, err_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    EXPECT_EQ(posix_spawn(&pid_, argv[0].c_str(), &files, nullptr, pointers(argv).data(),
                          pointers(environment).data()),
              0);
    posix_spawn_file_actions_destroy(&files);
  }
  ~Emulator() {
    if (pid_ > 0 && !status_) kill(pid_, SIGKILL), waitpid(pid_, nullptr, 0);
  }

  // The exit status (128 + signal if killed), or nullopt if still running after `seconds`.
  std::optional<int> exitWithin(double seconds) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    while (!status_ && std::chrono::steady_clock::now() < until) {
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_)
        status_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      else
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return status_;
  }
  int exitStatus() { return exitWithin(20).value_or(-1); }
  void signal(int number) const { kill(pid_, number); }
  std::string out() const { return readFile(out_); }
  std::string err() const { return readFile(err_); }

 private:
  static inline int runs_ = 0;
  std::string out_, err_;
  pid_t pid_ = -1;
  std::optional<int> status_;
};

// The agent's end of the channel: a SOCK_SEQPACKET listener, one trainer at a time.
class FakeAgent {
 public:
  explicit FakeAgent(const TempDir& dir) : path_(dir.file("channel")) {
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::strcpy(address.sun_path, path_.c_str());
    listener_ = socket(AF_UNIX, SOCK_SEQPACKET, 0);
    EXPECT_EQ(bind(listener_, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
    EXPECT_EQ(listen(listener_, 1), 0);
  }
  ~FakeAgent() {
    if (connection_ >= 0) close(connection_);
    close(listener_);
  }
  Variables environment() const { return {{"POLLUX_AGENT_SOCKET", path_}}; }
  // Takes the next trainer's connection; false if none within 10 s.
  bool accept() {
    if (connection_ >= 0) close(connection_);
    pollfd ready{listener_, POLLIN, 0};
    connection_ = poll(&ready, 1, 10000) == 1 ? ::accept(listener_, nullptr, nullptr) : -1;
    return connection_ >= 0;
  }
  // The next message, or "" after `timeout_ms` or when the trainer has gone.
  std::string receive(int timeout_ms = 10000) {
    pollfd ready{connection_, POLLIN, 0};
    if (poll(&ready, 1, timeout_ms) != 1) return "";
    char buffer[2048];
    const ssize_t got = recv(connection_, buffer, sizeof buffer, 0);
    return got > 0 ? std::string(buffer, size_t(got)) : "";
  }
  void send(const std::string& message) {
    ASSERT_EQ(::send(connection_, message.data(), message.size(), 0), ssize_t(message.size()));
  }

 private:
  std::string path_;
  int listener_;
  int connection_ = -1;
};

// The value of `key` in a channel message; NaN if absent.
double field(const std::string& message, const std::string& key) {
  const auto at = message.find(" " + key + "=");
  if (at == std::string::npos) return NAN;
  return std::strtod(message.c_str() + at + key.size() + 2, nullptr);
}

bool isStep(const std::string& message) { return message.rfind("step ", 0) == 0; }

const trace::Application& cifar10() { return traceApp("cifar10"); }

std::vector<std::string> cifar10Arguments(const TempDir& dir, const std::string& time_scale,
                                          const std::string& target_fraction, int gpus) {
  return {"--app", "cifar10", "--profiles", tracesDir(), "--time-scale", time_scale,
          "--target-fraction", target_fraction, "--nodes", "1", "--gpus-per-node",
          std::to_string(gpus), "--checkpoint", dir.file("ckpt"), "--checkpoint-interval", "60"};
}

// A step report as pollux-emulate must send it after `model`'s last step with `config`.
void expectStepReport(const std::string& message, const EmulatedJob& model,
                      const BatchConfig& config, double time_scale) {
  ASSERT_TRUE(isStep(message)) << message;
  EXPECT_EQ(field(message, "local_bsz"), config.local_bsz) << message;
  EXPECT_EQ(field(message, "accum_steps"), config.accum_steps) << message;
  EXPECT_NEAR(field(message, "time") / (model.stepSeconds(config) / time_scale), 1, 1e-6);
  EXPECT_NEAR(field(message, "compute_time") / (model.computeSeconds(config) / time_scale), 1,
              1e-6);
  EXPECT_EQ(field(message, "examples"), model.state().examples) << message;
  EXPECT_NEAR(field(message, "epochs"), model.state().examples / 50000, 1e-9) << message;
  const model::GradParams grad = model.perExampleGrad(config);
  EXPECT_NEAR(field(message, "grad_sqr") / grad.sqr, 1, 1e-6) << message;
  EXPECT_NEAR(field(message, "grad_var") / grad.var, 1, 1e-6) << message;
}

TEST(EmulateCli, ReportsAppliesTheDecisionCheckpointsOnRequestAndResumes) {
  const TempDir dir;
  FakeAgent agent(dir);
  const auto arguments = cifar10Arguments(dir, "2", "0.001", 2);
  EmulatedJob model(cifar10(), {2}, 1, 0.001);  // what the emulator should be doing
  const BatchConfig initial{64, 0}, decided{128, 1};

  Emulator first(dir, arguments, agent.environment());
  ASSERT_TRUE(agent.accept());
  EXPECT_EQ(agent.receive(),
            "hello init_batch_size=128 max_batch_size=4096 min_local_bsz=32 max_local_bsz=1024 "
            "accumulation=1\n");
  model.step(initial);
  expectStepReport(agent.receive(), model, initial, 2);
  agent.send("decision batch_size=512 local_bsz=128 accum_steps=1 lr_scale=2\n");
  // Steps already under way keep the old batch (at most one queued, one in progress).
  std::string message = agent.receive();
  for (int old = 0; old < 2 && field(message, "local_bsz") == initial.local_bsz; ++old) {
    model.step(initial);
    expectStepReport(message, model, initial, 2);
    message = agent.receive();
  }
  for (int step = 0; step < 2; ++step, message = agent.receive()) {
    model.step(decided);
    expectStepReport(message, model, decided, 2);
  }
  agent.send("checkpoint\n");
  for (; isStep(message); message = agent.receive()) model.step(decided);
  EXPECT_EQ(message, "checkpointed\n");
  EXPECT_EQ(first.exitStatus(), 0);
  EXPECT_NE(first.err().find("pollux-emulate: checkpoint written to " + dir.file("ckpt")),
            std::string::npos) << first.err();
  const auto stopped = loadCheckpoint(dir.file("ckpt"), "cifar10");
  ASSERT_TRUE(stopped);
  EXPECT_FALSE(stopped->done);
  EXPECT_EQ(stopped->steps, model.state().steps);  // nothing trained goes unsaved
  EXPECT_EQ(stopped->examples, model.state().examples);
  EXPECT_EQ(stopped->progress, model.state().progress);

  Emulator second(dir, arguments, agent.environment());
  ASSERT_TRUE(agent.accept());
  EXPECT_EQ(agent.receive().rfind("hello ", 0), 0u);
  model.step(initial);  // no decision yet: the initial batch again, from the saved state on
  expectStepReport(agent.receive(), model, initial, 2);
  EXPECT_EQ(second.exitStatus(), 0);
  char resumed[256];
  std::snprintf(resumed, sizeof resumed,
                "pollux-emulate: resumed from %s at progress %.1f of %.1f (",
                dir.file("ckpt").c_str(), stopped->progress, model.target());
  EXPECT_NE(second.err().find(resumed), std::string::npos) << second.err();
  const auto finished = loadCheckpoint(dir.file("ckpt"), "cifar10");
  ASSERT_TRUE(finished);
  EXPECT_TRUE(finished->done);
  while (!model.state().done) model.step(initial);
  EXPECT_EQ(finished->steps, model.state().steps);
  EXPECT_EQ(finished->progress, model.state().progress);
  char written[256];
  std::snprintf(written, sizeof written,
                "pollux-emulate: checkpoint written to %s at progress %.1f (finished)\n",
                dir.file("ckpt").c_str(), model.state().progress);
  EXPECT_NE(second.err().find(written), std::string::npos) << second.err();
  EXPECT_EQ(second.out().rfind("pollux-emulate: finished cifar10: " +
                                   std::to_string(model.state().steps) + " steps, ", 0),
            0u) << second.out();
}

// 2344 steps of 0.1 ms: the run takes the profile's time over the time scale (sleeping each
// step for its own time would add over 0.1 s of overshoot), and reports at most one step per
// 10 ms.
TEST(EmulateCli, TimeScaleSetsTheWallTimeAndShortStepsAreReportedSparsely) {
  const TempDir dir;
  FakeAgent agent(dir);
  EmulatedJob model(cifar10(), {1}, 1, 0.06);
  double profile_seconds = 0;
  for (; !model.state().done; model.step(model.defaultBatch()))
    profile_seconds += model.stepSeconds(model.defaultBatch());
  const double expected = profile_seconds / 1000;

  Emulator run(dir, cifar10Arguments(dir, "1000", "0.06", 1), agent.environment());
  ASSERT_TRUE(agent.accept());
  int reports = 0;
  for (std::string message = agent.receive(); !message.empty(); message = agent.receive())
    reports += isStep(message);
  EXPECT_EQ(run.exitStatus(), 0);
  const std::string summary = run.out();
  const double wall = std::strtod(summary.c_str() + summary.rfind(", ") + 2, nullptr);
  EXPECT_GE(wall, expected - 0.002) << summary;
  EXPECT_LE(wall, expected + 0.06) << summary << " expected " << expected;
  EXPECT_GE(reports, 2);
  EXPECT_LE(reports, wall / 0.01 + 2) << model.state().steps << " steps";
}

// --epochs N: the job is N epochs of the data set long, counted as the agent counts a declared
// length (examples at the initial batch size, statistical efficiency applied), and declares it
// right after its hello; --declare declares the length it has.
TEST(EmulateCli, EpochsSetTheLengthTheJobDeclares) {
  const TempDir dir;
  FakeAgent agent(dir);
  std::vector<std::string> arguments = {
      "--app", "cifar10", "--profiles", tracesDir(), "--time-scale", "1000", "--epochs", "0.5",
      "--dataset-size", "10000", "--nodes", "1", "--gpus-per-node", "2",
      "--checkpoint", dir.file("ckpt"), "--checkpoint-interval", "60"};
  EmulatedJob model(cifar10(), {2}, 1, 1);
  model.setTargetExamples(5000);  // 0.5 x 10,000 examples
  while (!model.state().done) model.step(model.defaultBatch());

  Emulator run(dir, arguments, agent.environment());
  ASSERT_TRUE(agent.accept());
  EXPECT_EQ(agent.receive().rfind("hello ", 0), 0u);
  EXPECT_EQ(agent.receive(), "length epochs=0.5 examples_per_epoch=10000\n");
  EXPECT_TRUE(isStep(agent.receive()));
  EXPECT_EQ(run.exitStatus(), 0);
  const auto finished = loadCheckpoint(dir.file("ckpt"), "cifar10");
  ASSERT_TRUE(finished && finished->done);
  EXPECT_EQ(finished->steps, model.state().steps);
  EXPECT_GE(finished->progress * 128, 5000);  // progress counts iterations of 128 examples
  EXPECT_LT((finished->progress - 1) * 128, 5000);

  Emulator declared(dir, {"--app", "cifar10", "--profiles", tracesDir(), "--time-scale", "1000",
                          "--target-fraction", "0.001", "--declare", "--nodes", "1",
                          "--gpus-per-node", "1", "--checkpoint", dir.file("ckpt2")},
                    agent.environment());
  ASSERT_TRUE(agent.accept());
  EXPECT_EQ(agent.receive().rfind("hello ", 0), 0u);
  const std::string length = agent.receive();
  EXPECT_EQ(length.rfind("length examples=", 0), 0u) << length;
  EXPECT_DOUBLE_EQ(field(length, "examples"), EmulatedJob(cifar10(), {1}, 1, 0.001).targetExamples());
  EXPECT_EQ(declared.exitStatus(), 0);
}

TEST(EmulateCli, StartupTimePassesBeforeTheFirstStep) {
  const TempDir dir;
  FakeAgent agent(dir);
  auto arguments = cifar10Arguments(dir, "100", "0.001", 1);
  arguments.insert(arguments.end(), {"--startup", "0.4"});
  Emulator run(dir, arguments, agent.environment());
  ASSERT_TRUE(agent.accept());
  EXPECT_EQ(agent.receive().rfind("hello ", 0), 0u);
  const auto hello = std::chrono::steady_clock::now();
  EXPECT_TRUE(isStep(agent.receive()));
  EXPECT_GE(std::chrono::duration<double>(std::chrono::steady_clock::now() - hello).count(), 0.39);
  EXPECT_EQ(run.exitStatus(), 0);
}

TEST(EmulateCli, SigtermWithoutAnAgentCheckpointsAndExits143) {
  const TempDir dir;
  Emulator run(dir, cifar10Arguments(dir, "1", "1", 1));
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  run.signal(SIGTERM);
  EXPECT_EQ(run.exitStatus(), 143);
  const auto saved = loadCheckpoint(dir.file("ckpt"), "cifar10");
  ASSERT_TRUE(saved);
  EXPECT_GT(saved->steps, 0);
  EXPECT_FALSE(saved->done);
  EXPECT_NE(run.err().find("pollux-emulate: starting fresh"), std::string::npos) << run.err();
}

TEST(EmulateCli, OtherTasksWaitUntilTheCheckpointSaysDone) {
  const TempDir dir;
  saveCheckpoint(dir.file("ckpt"), "cifar10", TrainingState{5, 640, 5, false});
  Emulator waiting(dir, cifar10Arguments(dir, "1", "1", 1), {{"SLURM_PROCID", "1"}});
  EXPECT_FALSE(waiting.exitWithin(0.7));
  saveCheckpoint(dir.file("ckpt"), "cifar10", TrainingState{5, 640, 5, true});
  EXPECT_EQ(waiting.exitWithin(2), 0);

  saveCheckpoint(dir.file("ckpt"), "cifar10", TrainingState{5, 640, 5, false});
  Emulator stopped(dir, cifar10Arguments(dir, "1", "1", 1), {{"SLURM_PROCID", "2"}});
  EXPECT_FALSE(stopped.exitWithin(0.2));
  stopped.signal(SIGTERM);
  EXPECT_EQ(stopped.exitWithin(2), 143);
}

TEST(EmulateCli, ADoneCheckpointEndsAtOnce) {
  const TempDir dir;
  saveCheckpoint(dir.file("ckpt"), "cifar10", TrainingState{40000, 5e6, 40000, true});
  Emulator run(dir, cifar10Arguments(dir, "1", "1", 1));
  EXPECT_EQ(run.exitWithin(2), 0);
  EXPECT_NE(run.err().find("already done"), std::string::npos) << run.err();
  EXPECT_EQ(run.out(), "");
}

TEST(EmulateCli, ACorruptCheckpointIsAnErrorAndIsKept) {
  const TempDir dir;
  for (const char* corrupt : {"{\"app\": \"cifar10\", \"progress\": 1", "{}"}) {
    std::ofstream(dir.file("ckpt")) << corrupt;
    Emulator run(dir, cifar10Arguments(dir, "1", "1", 1));
    EXPECT_EQ(run.exitStatus(), 2);
    EXPECT_NE(run.err().find(dir.file("ckpt")), std::string::npos) << run.err();
    EXPECT_EQ(readFile(dir.file("ckpt")), corrupt);
  }
}

TEST(EmulateCli, BadOptionsExitTwoWithAMessage) {
  const TempDir dir;
  Emulator unknown(dir, {"--app", "nosuchapp", "--profiles", tracesDir()});
  EXPECT_EQ(unknown.exitStatus(), 2);
  EXPECT_NE(unknown.err().find("bert, cifar10, deepspeech2, imagenet, ncf, yolov3"),
            std::string::npos) << unknown.err();
  for (const std::vector<std::string>& arguments :
       {std::vector<std::string>{"--app", "cifar10", "--time-scale", "fast"},
        std::vector<std::string>{"--speed", "a100"}, std::vector<std::string>{}}) {
    Emulator run(dir, arguments);
    EXPECT_EQ(run.exitStatus(), 2);
    EXPECT_EQ(run.err().rfind("pollux-emulate: ", 0), 0u) << run.err();
  }
}

}  // namespace
}  // namespace pollux::emulate
