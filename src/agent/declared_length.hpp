// SPDX-License-Identifier: GPL-2.0-or-later
// A job's declared length and the work done towards it, in the goodput model's unit: examples
// at the job's initial batch size with statistical efficiency applied (what goodput counts per
// second, and how AdaptDL's simulator counts progress). Each step the trainer reports adds
// the examples it trained (the growth of the trainer's own total) times the efficiency of its
// batch size, so at the initial batch size the progress is the raw example count. Pure logic;
// Measurements keeps it in the agent's state file across restarts.
#pragma once

#include <optional>
#include <string>

#include <json/json.h>

#include "channel_message.hpp"
#include "common/policy/policy.hpp"
#include "common/schema/goodput_report.hpp"
#include "common/schema/json_reader.hpp"

namespace pollux::agent {

class LengthAccount {
 public:
  // A step after which the trainer's total is `examples`, trained at `efficiency` (1 at the
  // initial batch size, or before the gradient noise is measured). The examples beyond the
  // last total counted are added at that efficiency; a total below it (the trainer resumed
  // from an older checkpoint, its later steps lost) takes the lost examples back at the
  // efficiency of the last step counted. The first step counted (a fresh job, or an agent
  // without state) counts all of the trainer's total.
  void recordStep(double examples, double efficiency);

  // Takes the trainer's declaration, replacing any earlier one; returns why it was refused
  // (the job is then undeclared), or nullopt. Refused: a target the work done already
  // reached (`totals`: the trainer's latest totals, for an epoch target without
  // examples_per_epoch). The message's values were checked by parseTrainerMessage.
  std::optional<std::string> declare(const LengthMessage& declaration,
                                     const schema::TrainingProgress& totals);

  // The declared target in the unit of progress: the examples declared, or the epochs times
  // the examples per epoch (the trainer's examples_per_epoch, else its totals' examples /
  // epochs once epochs > 0). nullopt when undeclared or not convertible yet.
  std::optional<double> target(const schema::TrainingProgress& totals) const;
  // {progress, target} for the report, nullopt when target() is.
  std::optional<policy::DeclaredLength> length(const schema::TrainingProgress& totals) const;
  double progress() const { return progress_; }
  bool declared() const { return declaration_.has_value(); }

  // {"progress": P, "examples": last total counted, "efficiency": of its step,
  //  "declared": {"examples" | "epochs"[, "examples_per_epoch"]}} (keys absent when unset).
  Json::Value toJson() const;
  // Throws pollux::InvalidInput naming the offending key.
  static LengthAccount fromJson(const schema::JsonField& field);

 private:
  std::optional<LengthMessage> declaration_;
  double progress_ = 0;
  std::optional<double> examples_;  // the trainer's total at the last step counted
  double efficiency_ = 1;           // of that step
};

// "examples=X" or "epochs=X[ examples_per_epoch=N]": a declaration as the trainer wrote it.
std::string describe(const LengthMessage& declaration);

}  // namespace pollux::agent
