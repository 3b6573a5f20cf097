// pollux-emulate as a process under a fake pollux-agent: hello, steps, a decision applied,
// a checkpoint on request, and a resumed run that finishes where the first stopped.
#include <poll.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "checkpoint.hpp"

extern char** environ;

namespace pollux::emulate {
namespace {

class FakeAgent {
 public:
  FakeAgent() : dir_(std::filesystem::temp_directory_path() / ("emulate-cli-" + std::to_string(getpid()))) {
    std::filesystem::create_directories(dir_);
    path_ = (dir_ / "channel").string();
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
    std::filesystem::remove_all(dir_);
  }
  // Runs pollux-emulate with `arguments` under this agent.
  pid_t start(const std::vector<std::string>& arguments) {
    std::vector<std::string> argv{std::getenv("POLLUX_EMULATE")};
    argv.insert(argv.end(), arguments.begin(), arguments.end());
    std::vector<char*> pointers;
    for (auto& text : argv) pointers.push_back(text.data());
    pointers.push_back(nullptr);
    setenv("POLLUX_AGENT_SOCKET", path_.c_str(), 1);
    pid_t pid;
    EXPECT_EQ(posix_spawn(&pid, argv[0].c_str(), nullptr, nullptr, pointers.data(), environ), 0);
    unsetenv("POLLUX_AGENT_SOCKET");
    if (connection_ >= 0) close(connection_);
    connection_ = accept(listener_, nullptr, nullptr);
    return pid;
  }
  // The next message, or "" after 10 s.
  std::string receive() {
    pollfd ready{connection_, POLLIN, 0};
    if (poll(&ready, 1, 10000) != 1) return "";
    char buffer[2048];
    const ssize_t got = recv(connection_, buffer, sizeof buffer, 0);
    return got > 0 ? std::string(buffer, size_t(got)) : "";
  }
  // Reads messages until one starts with `prefix`; "" if none within 200 messages.
  std::string receiveUntil(const std::string& prefix) {
    for (int i = 0; i < 200; ++i) {
      const std::string message = receive();
      if (message.empty() || message.rfind(prefix, 0) == 0) return message;
    }
    return "";
  }
  void send(const std::string& message) {
    ASSERT_EQ(::send(connection_, message.data(), message.size(), 0), ssize_t(message.size()));
  }
  std::string checkpoint() const { return (dir_ / "ckpt").string(); }

 private:
  std::filesystem::path dir_;
  std::string path_;
  int listener_;
  int connection_ = -1;
};

int exitStatus(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

TEST(EmulateCli, ReportsAppliesDecisionsCheckpointsAndResumes) {
  FakeAgent agent;
  const std::vector<std::string> arguments{
      "--app", "cifar10", "--profiles", std::getenv("POLLUX_TRACES"), "--time-scale", "200",
      "--target-fraction", "0.004", "--nodes", "1", "--gpus-per-node", "2",
      "--checkpoint", agent.checkpoint()};
  pid_t pid = agent.start(arguments);
  EXPECT_EQ(agent.receive().rfind("hello init_batch_size=", 0), 0u);
  const std::string first_step = agent.receiveUntil("step ");
  EXPECT_NE(first_step.find(" grad_sqr="), std::string::npos) << first_step;
  EXPECT_NE(first_step.find(" compute_time="), std::string::npos) << first_step;
  agent.send("decision batch_size=512 local_bsz=128 accum_steps=1 lr_scale=2\n");
  EXPECT_NE(agent.receiveUntil("step time=").find("local_bsz=128 accum_steps=1"), std::string::npos);
  const std::string applied = agent.receiveUntil("step time=");
  EXPECT_NE(applied.find("local_bsz=128 accum_steps=1"), std::string::npos) << applied;
  agent.send("checkpoint\n");
  EXPECT_EQ(agent.receiveUntil("checkpointed"), "checkpointed\n");
  EXPECT_EQ(exitStatus(pid), 0);
  const auto stopped = loadCheckpoint(agent.checkpoint(), "cifar10");
  ASSERT_TRUE(stopped);
  EXPECT_GT(stopped->progress, 0);
  EXPECT_FALSE(stopped->done);

  pid = agent.start(arguments);
  EXPECT_EQ(exitStatus(pid), 0);
  const auto finished = loadCheckpoint(agent.checkpoint(), "cifar10");
  ASSERT_TRUE(finished);
  EXPECT_TRUE(finished->done);
  EXPECT_GT(finished->steps, stopped->steps);
  EXPECT_GT(finished->examples, stopped->examples);
}

TEST(EmulateCli, BadOptionsExitTwo) {
  for (const std::vector<std::string>& arguments :
       {std::vector<std::string>{"--app", "nosuchapp", "--profiles", std::getenv("POLLUX_TRACES")},
        std::vector<std::string>{"--app", "cifar10", "--time-scale", "fast"},
        std::vector<std::string>{"--speed", "a100"}}) {
    std::vector<std::string> argv{std::getenv("POLLUX_EMULATE")};
    argv.insert(argv.end(), arguments.begin(), arguments.end());
    std::vector<char*> pointers;
    for (auto& text : argv) pointers.push_back(text.data());
    pointers.push_back(nullptr);
    pid_t pid;
    ASSERT_EQ(posix_spawn(&pid, argv[0].c_str(), nullptr, nullptr, pointers.data(), environ), 0);
    EXPECT_EQ(exitStatus(pid), 2) << arguments[1];
  }
}

}  // namespace
}  // namespace pollux::emulate
