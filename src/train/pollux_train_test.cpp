// SPDX-License-Identifier: GPL-2.0-or-later
// pollux_train.h against a fake agent: a listening SOCK_SEQPACKET socket in a temp dir, named
// by POLLUX_AGENT_SOCKET as pollux-agent does.
#include <pollux/pollux_train.h>

#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

// The same header compiled as C (pollux_train_c_check.c).
extern "C" {
int pollux_c_connect(pollux_trainer* trainer, const pollux_limits* limits);
int pollux_c_report_step(pollux_trainer* trainer, const pollux_step* step);
int pollux_c_decision_get(pollux_trainer* trainer, pollux_decision* out);
int pollux_c_declare_examples(pollux_trainer* trainer, double examples);
int pollux_c_declare_epochs(pollux_trainer* trainer, double epochs, double examples_per_epoch);
}

namespace {

constexpr pollux_limits kLimits{256, 4096, 16, 128, 1};
constexpr const char* kHello =
    "hello init_batch_size=256 max_batch_size=4096 min_local_bsz=16 max_local_bsz=128 "
    "accumulation=1\n";
constexpr pollux_step kPlainStep{0.5, 32, 4, 1000, 0.25, -1, 0, -1};
constexpr const char* kPlainStepLine =
    "step time=0.5 local_bsz=32 accum_steps=4 examples=1000 epochs=0.25\n";

// The agent's end: listens at a fresh path, then talks over the accepted connection.
class FakeAgent {
 public:
  FakeAgent() {
    char directory[] = "/tmp/pollux-train-test-XXXXXX";
    if (mkdtemp(directory) == nullptr) ADD_FAILURE() << "mkdtemp: " << strerror(errno);
    directory_ = directory;
    path_ = directory_ + "/agent.sock";
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    snprintf(address.sun_path, sizeof address.sun_path, "%s", path_.c_str());
    listener_ = socket(AF_UNIX, SOCK_SEQPACKET, 0);
    if (bind(listener_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
        listen(listener_, 4) != 0)
      ADD_FAILURE() << "cannot listen at " << path_ << ": " << strerror(errno);
    setenv("POLLUX_AGENT_SOCKET", path_.c_str(), 1);
  }
  ~FakeAgent() {
    unsetenv("POLLUX_AGENT_SOCKET");
    hangUp();
    close(listener_);
    unlink(path_.c_str());
    rmdir(directory_.c_str());
  }
  FakeAgent(const FakeAgent&) = delete;
  FakeAgent& operator=(const FakeAgent&) = delete;

  void accept() {
    hangUp();
    connection_ = ::accept(listener_, nullptr, nullptr);
  }

  // The next message from the trainer; "" if none arrives within the timeout.
  std::string receive(int timeout_ms = 1000) {
    pollfd readable{connection_, POLLIN, 0};
    if (poll(&readable, 1, timeout_ms) != 1) return "";
    char message[4096];
    const ssize_t got = recv(connection_, message, sizeof message, 0);
    return got > 0 ? std::string(message, static_cast<size_t>(got)) : "";
  }

  void send(const std::string& message) {
    ASSERT_EQ(::send(connection_, message.data(), message.size(), 0),
              static_cast<ssize_t>(message.size()));
  }

  void hangUp() {
    if (connection_ >= 0) close(connection_);
    connection_ = -1;
  }

 private:
  std::string directory_, path_;
  int listener_ = -1, connection_ = -1;
};

// "kind key=value ..." -> the values by key (the kind under "").
std::map<std::string, std::string> fieldsOf(const std::string& line) {
  std::istringstream words(line);
  std::map<std::string, std::string> fields;
  words >> fields[""];
  std::string word;
  while (words >> word) {
    const auto equals = word.find('=');
    fields[word.substr(0, equals)] = equals == std::string::npos ? "" : word.substr(equals + 1);
  }
  return fields;
}

double numberOf(const std::map<std::string, std::string>& fields, const std::string& key) {
  const auto found = fields.find(key);
  if (found == fields.end()) return -12345;
  char* end = nullptr;
  const double value = strtod(found->second.c_str(), &end);
  return *end == '\0' ? value : -12345;
}

std::set<std::string> keysOf(const std::map<std::string, std::string>& fields) {
  std::set<std::string> keys;
  for (const auto& [key, value] : fields)
    if (!key.empty()) keys.insert(key);
  return keys;
}

TEST(PolluxTrainNoAgent, EveryCallIsANoOp) {
  unsetenv("POLLUX_AGENT_SOCKET");
  pollux_trainer trainer;
  ASSERT_EQ(pollux_connect(&trainer, &kLimits), 0);
  EXPECT_EQ(trainer.fd, -1);
  EXPECT_EQ(pollux_report_step(&trainer, &kPlainStep), 0);
  pollux_decision decision{};
  EXPECT_EQ(pollux_decision_get(&trainer, &decision), 0);
  EXPECT_EQ(pollux_checkpoint_requested(&trainer), 0);
  EXPECT_EQ(pollux_checkpointed(&trainer), 0);
  pollux_close(&trainer);
  EXPECT_EQ(trainer.fd, -1);
}

TEST(PolluxTrainNoAgent, DeclarationsAreCheckedAndNothingIsSent) {
  unsetenv("POLLUX_AGENT_SOCKET");
  pollux_trainer trainer;
  ASSERT_EQ(pollux_connect(&trainer, &kLimits), 0);
  EXPECT_EQ(pollux_declare_epochs(&trainer, 30, 1497), 0);
  EXPECT_EQ(pollux_declare_examples(&trainer, 1e6), 0);
  EXPECT_EQ(trainer.length_pending, 0);
  errno = 0;
  EXPECT_EQ(pollux_declare_examples(&trainer, -1), -1);
  EXPECT_EQ(errno, EINVAL);
  pollux_close(&trainer);
}

TEST(PolluxTrainNoAgent, EmptyVariableMeansNoAgent) {
  setenv("POLLUX_AGENT_SOCKET", "", 1);
  pollux_trainer trainer;
  EXPECT_EQ(pollux_connect(&trainer, &kLimits), 0);
  EXPECT_EQ(trainer.fd, -1);
  unsetenv("POLLUX_AGENT_SOCKET");
}

TEST(PolluxTrainConnect, FailsWithErrnoWhenNobodyListensThenStaysANoOp) {
  setenv("POLLUX_AGENT_SOCKET", "/nonexistent/pollux-agent.sock", 1);
  pollux_trainer trainer;
  errno = 0;
  EXPECT_EQ(pollux_connect(&trainer, &kLimits), -1);
  EXPECT_EQ(errno, ENOENT);
  EXPECT_EQ(trainer.fd, -1);
  EXPECT_EQ(pollux_report_step(&trainer, &kPlainStep), 0);
  unsetenv("POLLUX_AGENT_SOCKET");
}

TEST(PolluxTrainConnect, TooLongPathIsENAMETOOLONG) {
  setenv("POLLUX_AGENT_SOCKET", ("/tmp/" + std::string(200, 'x')).c_str(), 1);
  pollux_trainer trainer;
  EXPECT_EQ(pollux_connect(&trainer, &kLimits), -1);
  EXPECT_EQ(errno, ENAMETOOLONG);
  EXPECT_EQ(trainer.fd, -1);
  unsetenv("POLLUX_AGENT_SOCKET");
}

TEST(PolluxTrainConnect, SendsHelloFirstWithTheLimits) {
  FakeAgent agent;
  pollux_trainer trainer;
  ASSERT_EQ(pollux_connect(&trainer, &kLimits), 0);
  agent.accept();
  EXPECT_EQ(agent.receive(), kHello);
  pollux_close(&trainer);
}

TEST(PolluxTrainConnect, AnyNonZeroAccumulationIsSentAsOne) {
  FakeAgent agent;
  pollux_limits limits = kLimits;
  limits.accumulation = 7;
  pollux_trainer trainer;
  ASSERT_EQ(pollux_connect(&trainer, &limits), 0);
  agent.accept();
  EXPECT_EQ(fieldsOf(agent.receive())["accumulation"], "1");
  pollux_close(&trainer);
  limits.accumulation = 0;
  ASSERT_EQ(pollux_connect(&trainer, &limits), 0);
  agent.accept();
  EXPECT_EQ(fieldsOf(agent.receive())["accumulation"], "0");
  pollux_close(&trainer);
}

// A trainer connected to a fake agent that has read the hello.
class PolluxTrainTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(pollux_connect(&trainer_, &kLimits), 0);
    agent_.accept();
    ASSERT_EQ(agent_.receive(), kHello);
  }
  void TearDown() override { pollux_close(&trainer_); }

  FakeAgent agent_;
  pollux_trainer trainer_;
};

TEST_F(PolluxTrainTest, StepLineWithoutOptionalKeys) {
  ASSERT_EQ(pollux_report_step(&trainer_, &kPlainStep), 0);
  EXPECT_EQ(agent_.receive(), kPlainStepLine);
}

TEST_F(PolluxTrainTest, StepLineWithEveryKey) {
  const pollux_step step{0.5, 32, 4, 1000, 0.25, 0.125, 0.75, 12.5};
  ASSERT_EQ(pollux_report_step(&trainer_, &step), 0);
  EXPECT_EQ(agent_.receive(),
            "step time=0.5 local_bsz=32 accum_steps=4 examples=1000 epochs=0.25 "
            "compute_time=0.125 grad_sqr=0.75 grad_var=12.5\n");
}

TEST_F(PolluxTrainTest, OptionalKeysAppearOnlyWhenMeasured) {
  const std::set<std::string> required{"time", "local_bsz", "accum_steps", "examples", "epochs"};
  struct Case {
    double compute_time, grad_var;
    std::set<std::string> extra_keys;
  };
  const std::vector<Case> cases{{-1, -1, {}},
                                {0.01, -1, {"compute_time"}},
                                {-1, 3.5, {"grad_sqr", "grad_var"}},
                                {0, 0, {"compute_time", "grad_sqr", "grad_var"}}};
  for (const Case& c : cases) {
    const pollux_step step{0.5, 32, 4, 1000, 0.25, c.compute_time, 1.5, c.grad_var};
    ASSERT_EQ(pollux_report_step(&trainer_, &step), 0);
    std::set<std::string> expected = required;
    expected.insert(c.extra_keys.begin(), c.extra_keys.end());
    const auto fields = fieldsOf(agent_.receive());
    EXPECT_EQ(fields.at(""), "step");
    EXPECT_EQ(keysOf(fields), expected) << "compute_time " << c.compute_time << ", grad_var "
                                        << c.grad_var;
  }
}

TEST_F(PolluxTrainTest, StepNumbersParseBackToTheSameValues) {
  // examples is sent with 17 significant digits (exact); the others with 9.
  const pollux_step step{0.0123456789, 48, 3, 2.0 / 3.0 * 1e7, 12.3456789, 0.00412345678,
                         1.23456789e-4, 5.5e3};
  ASSERT_EQ(pollux_report_step(&trainer_, &step), 0);
  const auto fields = fieldsOf(agent_.receive());
  EXPECT_EQ(numberOf(fields, "examples"), step.examples);
  EXPECT_EQ(numberOf(fields, "local_bsz"), 48);
  EXPECT_EQ(numberOf(fields, "accum_steps"), 3);
  EXPECT_EQ(numberOf(fields, "time"), step.step_time);
  EXPECT_EQ(numberOf(fields, "epochs"), step.epochs);
  EXPECT_EQ(numberOf(fields, "compute_time"), step.compute_time);
  EXPECT_EQ(numberOf(fields, "grad_sqr"), step.grad_sqr);
  EXPECT_EQ(numberOf(fields, "grad_var"), step.grad_var);
}

TEST_F(PolluxTrainTest, DecisionIsPickedUpAndTheLatestWins) {
  pollux_decision decision{};
  EXPECT_EQ(pollux_decision_get(&trainer_, &decision), 0);
  agent_.send("decision batch_size=512 local_bsz=64 accum_steps=2 lr_scale=1.75\n");
  ASSERT_EQ(pollux_decision_get(&trainer_, &decision), 1);
  EXPECT_EQ(decision.batch_size, 512);
  EXPECT_EQ(decision.local_bsz, 64);
  EXPECT_EQ(decision.accum_steps, 2);
  EXPECT_EQ(decision.lr_scale, 1.75);
  agent_.send("decision batch_size=96 local_bsz=48 accum_steps=1 lr_scale=0.375");
  ASSERT_EQ(pollux_decision_get(&trainer_, &decision), 1);
  EXPECT_EQ(decision.batch_size, 96);
  EXPECT_EQ(decision.local_bsz, 48);
  EXPECT_EQ(decision.accum_steps, 1);
  EXPECT_EQ(decision.lr_scale, 0.375);
}

TEST_F(PolluxTrainTest, ReportStepPicksUpDecisionAndCheckpoint) {
  agent_.send("decision batch_size=128 local_bsz=32 accum_steps=4 lr_scale=1\n");
  agent_.send("checkpoint\n");
  ASSERT_EQ(pollux_report_step(&trainer_, &kPlainStep), 0);
  EXPECT_EQ(trainer_.have_decision, 1);
  EXPECT_EQ(trainer_.decision.accum_steps, 4);
  EXPECT_EQ(trainer_.checkpoint_requested, 1);
}

TEST_F(PolluxTrainTest, CheckpointRequestWithOrWithoutNewlineThenCheckpointed) {
  EXPECT_EQ(pollux_checkpoint_requested(&trainer_), 0);
  agent_.send("checkpoint");
  EXPECT_EQ(pollux_checkpoint_requested(&trainer_), 1);
  EXPECT_EQ(pollux_checkpoint_requested(&trainer_), 1) << "a request stays requested";
  ASSERT_EQ(pollux_checkpointed(&trainer_), 0);
  EXPECT_EQ(agent_.receive(), "checkpointed\n");

  pollux_close(&trainer_);
  ASSERT_EQ(pollux_connect(&trainer_, &kLimits), 0);
  agent_.accept();
  agent_.send("checkpoint\n");
  EXPECT_EQ(pollux_checkpoint_requested(&trainer_), 1);
}

TEST_F(PolluxTrainTest, GarbageFromTheAgentIsIgnored) {
  const std::vector<std::string> garbage{
      "hello",
      "decision",
      "decision batch_size=512 local_bsz=64 accum_steps=2",
      "decision batch_size=x local_bsz=64 accum_steps=2 lr_scale=1",
      "decisions batch_size=512 local_bsz=64 accum_steps=2 lr_scale=1",
      "checkpointed\n",
      "checkpoints",
      "checkpoint=1",
      "CHECKPOINT\n",
      std::string(3000, 'x'),
      std::string("\0checkpoint\xff", 12),
  };
  for (const std::string& message : garbage) agent_.send(message);
  pollux_decision decision{};
  EXPECT_EQ(pollux_report_step(&trainer_, &kPlainStep), 0);
  EXPECT_EQ(pollux_decision_get(&trainer_, &decision), 0);
  EXPECT_EQ(pollux_checkpoint_requested(&trainer_), 0);
  agent_.send("decision batch_size=256 local_bsz=16 accum_steps=1 lr_scale=1");
  ASSERT_EQ(pollux_decision_get(&trainer_, &decision), 1) << "still in sync after garbage";
  EXPECT_EQ(decision.batch_size, 256);
}

TEST_F(PolluxTrainTest, FullSocketDropsStepsWithoutBlocking) {
  // Were the send blocking, this timeout would turn a hang into a 1 s call the test sees.
  const timeval timeout{1, 0};
  ASSERT_EQ(setsockopt(trainer_.fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout), 0);
  constexpr std::chrono::duration<double> kSlow{0.1};
  int sent = 0, dropped = 0;
  std::chrono::duration<double> slowest{0};
  for (int i = 0; i < 5000 && slowest < kSlow; ++i) {
    const auto start = std::chrono::steady_clock::now();
    (pollux_report_step(&trainer_, &kPlainStep) == 0 ? sent : dropped)++;
    slowest = std::max<std::chrono::duration<double>>(slowest,
                                                      std::chrono::steady_clock::now() - start);
  }
  EXPECT_LT(slowest.count(), kSlow.count()) << "seconds of the slowest pollux_report_step";
  EXPECT_GT(sent, 0);
  EXPECT_GT(dropped, 0) << "the agent never reads: the socket must fill up";

  int delivered = 0;
  for (std::string line; !(line = agent_.receive(0)).empty(); ++delivered)
    ASSERT_EQ(line, kPlainStepLine) << "a message is delivered whole or not at all";
  EXPECT_EQ(delivered, sent);
  EXPECT_EQ(pollux_report_step(&trainer_, &kPlainStep), 0) << "sends again once read";
}

TEST_F(PolluxTrainTest, AgentGoneFailsTheSendWithoutSigpipe) {
  agent_.hangUp();
  EXPECT_EQ(pollux_report_step(&trainer_, &kPlainStep), -1);
  EXPECT_EQ(pollux_checkpointed(&trainer_), -1);
  EXPECT_EQ(pollux_checkpoint_requested(&trainer_), 0);
}

TEST_F(PolluxTrainTest, DeclaredLengthLines) {
  ASSERT_EQ(pollux_declare_examples(&trainer_, 1.5e6), 0);
  EXPECT_EQ(agent_.receive(), "length examples=1500000\n");
  ASSERT_EQ(pollux_declare_epochs(&trainer_, 30, 1497), 0);
  EXPECT_EQ(agent_.receive(), "length epochs=30 examples_per_epoch=1497\n");
  ASSERT_EQ(pollux_declare_epochs(&trainer_, 2.5, 0), 0);  // the agent derives the size
  EXPECT_EQ(agent_.receive(), "length epochs=2.5\n");
  ASSERT_EQ(pollux_declare_examples(&trainer_, 2.0 / 3.0 * 1e7), 0);  // 17 digits: exact
  EXPECT_EQ(numberOf(fieldsOf(agent_.receive()), "examples"), 2.0 / 3.0 * 1e7);
  // The step protocol is unchanged by a declaration.
  ASSERT_EQ(pollux_report_step(&trainer_, &kPlainStep), 0);
  EXPECT_EQ(agent_.receive(), kPlainStepLine);
}

TEST_F(PolluxTrainTest, BadDeclarationsAreRefusedWithEinvalAndNothingSent) {
  const double nan = std::nan(""), inf = HUGE_VAL;
  for (const double bad : {0.0, -1.0, nan, inf, -inf, 2e18}) {
    errno = 0;
    EXPECT_EQ(pollux_declare_examples(&trainer_, bad), -1) << bad;
    EXPECT_EQ(errno, EINVAL) << bad;
    errno = 0;
    EXPECT_EQ(pollux_declare_epochs(&trainer_, bad, 100), -1) << bad;
    EXPECT_EQ(errno, EINVAL) << bad;
  }
  for (const double bad_size : {nan, inf, 2e18}) {
    EXPECT_EQ(pollux_declare_epochs(&trainer_, 3, bad_size), -1) << bad_size;
  }
  EXPECT_EQ(agent_.receive(100), "") << "nothing is sent for a refused declaration";
  EXPECT_EQ(trainer_.length_pending, 0);
  // Training goes on: steps are reported as before.
  ASSERT_EQ(pollux_report_step(&trainer_, &kPlainStep), 0);
  EXPECT_EQ(agent_.receive(), kPlainStepLine);
}

TEST_F(PolluxTrainTest, ATargetTheReportedTotalsReachedIsRefused) {
  ASSERT_EQ(pollux_report_step(&trainer_, &kPlainStep), 0);  // 1000 examples, 0.25 epochs
  EXPECT_EQ(agent_.receive(), kPlainStepLine);
  EXPECT_EQ(pollux_declare_examples(&trainer_, 1000), -1);
  EXPECT_EQ(errno, EINVAL);
  EXPECT_EQ(pollux_declare_epochs(&trainer_, 0.25, 4000), -1);
  EXPECT_EQ(agent_.receive(100), "");
  EXPECT_EQ(pollux_declare_examples(&trainer_, 1001), 0);
  EXPECT_EQ(agent_.receive(), "length examples=1001\n");
  EXPECT_EQ(pollux_declare_epochs(&trainer_, 0.5, 0), 0);
  EXPECT_EQ(agent_.receive(), "length epochs=0.5\n");
}

TEST_F(PolluxTrainTest, ADeclarationTheAgentCannotTakeNowIsSentBeforeTheNextStep) {
  int sent = 0;
  while (pollux_report_step(&trainer_, &kPlainStep) == 0 && sent < 100000) ++sent;  // full
  ASSERT_GT(sent, 0);
  ASSERT_EQ(pollux_declare_examples(&trainer_, 1e9), 0);
  EXPECT_EQ(trainer_.length_pending, 1);
  for (int i = 0; i < sent; ++i) ASSERT_EQ(agent_.receive(), kPlainStepLine);  // the agent reads
  ASSERT_EQ(pollux_report_step(&trainer_, &kPlainStep), 0);
  EXPECT_EQ(trainer_.length_pending, 0);
  EXPECT_EQ(agent_.receive(), "length examples=1000000000\n");
  EXPECT_EQ(agent_.receive(), kPlainStepLine);
}

TEST(PolluxTrainC, TheCBuildSendsAndReadsTheSameLines) {
  FakeAgent agent;
  pollux_trainer trainer;
  ASSERT_EQ(pollux_c_connect(&trainer, &kLimits), 0);
  agent.accept();
  EXPECT_EQ(agent.receive(), kHello);
  const pollux_step step{0.5, 32, 4, 1000, 0.25, 0.125, 0.75, 12.5};
  ASSERT_EQ(pollux_c_report_step(&trainer, &step), 0);
  const std::string from_c = agent.receive();
  ASSERT_EQ(pollux_report_step(&trainer, &step), 0);
  EXPECT_EQ(from_c, agent.receive());
  EXPECT_NE(from_c, "");
  agent.send("decision batch_size=512 local_bsz=64 accum_steps=2 lr_scale=1.75\n");
  pollux_decision decision{};
  ASSERT_EQ(pollux_c_decision_get(&trainer, &decision), 1);
  EXPECT_EQ(decision.batch_size, 512);
  EXPECT_EQ(decision.lr_scale, 1.75);
  ASSERT_EQ(pollux_c_declare_epochs(&trainer, 30, 1497), 0);
  const std::string epochs_from_c = agent.receive();
  ASSERT_EQ(pollux_declare_epochs(&trainer, 30, 1497), 0);
  EXPECT_EQ(epochs_from_c, agent.receive());
  ASSERT_EQ(pollux_c_declare_examples(&trainer, 1e6), 0);
  EXPECT_EQ(agent.receive(), "length examples=1000000\n");
  EXPECT_EQ(pollux_c_declare_examples(&trainer, -3), -1);
  pollux_close(&trainer);
}

}  // namespace
