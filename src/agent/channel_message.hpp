// SPDX-License-Identifier: GPL-2.0-or-later
// Messages of the local channel between a training process and pollux-agent (the protocol is
// specified in include/pollux/pollux_train.h and pollux-agent(1)).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "common/model/goodput.hpp"
#include "pollux/pollux_train.h"

namespace pollux::agent {

// `hello`: the job's batch limits.
struct HelloMessage {
  model::BatchLimits limits;
  // Optional `elastic=1`: the trainer re-forms its process group live when a worker dies
  // (pollux.elastic), so the agent lets the others go on instead of stopping them.
  bool elastic = false;
};

// `step`: one optimizer step of the trainer.
struct StepMessage {
  double step_time;  // seconds, all micro-batches included
  int local_bsz;
  int accum_steps;
  double examples;  // since the job first started
  double epochs;
  std::optional<double> compute_time;
  std::optional<model::GradParams> per_example_grad;  // |g|^2 and tr(Sigma) of one example
};

// `checkpointed`: the trainer has written a checkpoint.
struct CheckpointedMessage {};

// `length`: how long the job is, in examples or in epochs (exactly one of the two), each
// finite, > 0 and at most kMaxDeclared; examples_per_epoch (the data set's size) only with
// epochs.
struct LengthMessage {
  std::optional<double> examples;
  std::optional<double> epochs;
  std::optional<double> examples_per_epoch;
};
inline constexpr double kMaxDeclared = 1e18;

// `resized from=W to=W stall=S [rank=R]`: the trainer changed its world size live
// (pollux.elastic), stalling S seconds (the last step at the old size to the first at the
// new), and is rank R after it. Optional: older agents log it as an unknown message and go on.
struct ResizedMessage {
  int from = 0;
  int to = 0;
  double stall_s = 0;
  std::optional<int> rank;
};

// `leaving`: the worker leaves the job at a live change (pollux.elastic) and exits 0 next;
// the job goes on without it. Optional: older agents log it as an unknown message.
struct LeavingMessage {};

using TrainerMessage = std::variant<HelloMessage, StepMessage, CheckpointedMessage,
                                    LengthMessage, ResizedMessage, LeavingMessage>;

// Parses one message (a trailing newline is allowed). Throws pollux::InvalidInput saying what
// is wrong: unknown kind, missing or malformed key, value out of range.
TrainerMessage parseTrainerMessage(std::string_view text);

// The agent's messages, newline-terminated. A decision is the header's own struct.
using Decision = pollux_decision;
bool sameDecision(const Decision& a, const Decision& b);
std::string formatDecision(const Decision& decision);
inline constexpr std::string_view kCheckpointRequest = "checkpoint\n";

}  // namespace pollux::agent
