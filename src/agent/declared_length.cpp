// SPDX-License-Identifier: GPL-2.0-or-later
#include "declared_length.hpp"

#include <algorithm>
#include <cstdio>

#include "common/invalid_input.hpp"

namespace pollux::agent {
namespace {

std::string number(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.9g", value);
  return text;
}

double declaredNumber(const schema::JsonField& field) {
  const double value = field.positiveNumber();
  if (value > kMaxDeclared) throw InvalidInput(field.path() + ": must be at most 1e18");
  return value;
}

}  // namespace

void LengthAccount::recordStep(double examples, double efficiency) {
  const double counted = examples_.value_or(0.0);
  if (examples >= counted) {
    progress_ += (examples - counted) * efficiency;
  } else {
    progress_ = std::max(0.0, progress_ - (counted - examples) * efficiency_);
  }
  examples_ = examples;
  efficiency_ = efficiency;
}

std::optional<std::string> LengthAccount::declare(const LengthMessage& declaration,
                                                  const schema::TrainingProgress& totals) {
  declaration_ = declaration;
  const auto declared_target = target(totals);
  if (declared_target && *declared_target <= progress_) {
    declaration_.reset();
    return "the work done (progress " + number(progress_) +
           " examples at the initial batch size) already reaches the declared target (" +
           number(*declared_target) + ")";
  }
  return std::nullopt;
}

std::optional<double> LengthAccount::target(const schema::TrainingProgress& totals) const {
  if (!declaration_) return std::nullopt;
  if (declaration_->examples) return *declaration_->examples;
  std::optional<double> per_epoch = declaration_->examples_per_epoch;
  if (!per_epoch && totals.epochs > 0 && totals.examples > 0) {
    per_epoch = totals.examples / totals.epochs;
  }
  if (!per_epoch) return std::nullopt;
  return *declaration_->epochs * *per_epoch;
}

std::optional<policy::DeclaredLength> LengthAccount::length(
    const schema::TrainingProgress& totals) const {
  const auto declared_target = target(totals);
  if (!declared_target) return std::nullopt;
  return policy::DeclaredLength{progress_, *declared_target};
}

Json::Value LengthAccount::toJson() const {
  Json::Value out(Json::objectValue);
  out["progress"] = progress_;
  if (examples_) {
    out["examples"] = *examples_;
    out["efficiency"] = efficiency_;
  }
  if (declaration_) {
    Json::Value& declared = out["declared"];
    declared = Json::Value(Json::objectValue);
    if (declaration_->examples) declared["examples"] = *declaration_->examples;
    if (declaration_->epochs) declared["epochs"] = *declaration_->epochs;
    if (declaration_->examples_per_epoch) {
      declared["examples_per_epoch"] = *declaration_->examples_per_epoch;
    }
  }
  return out;
}

LengthAccount LengthAccount::fromJson(const schema::JsonField& field) {
  field.requireOnlyKeys({"progress", "examples", "efficiency", "declared"});
  LengthAccount account;
  account.progress_ = field["progress"].nonNegativeNumber();
  if (field.has("examples")) {
    account.examples_ = field["examples"].nonNegativeNumber();
    account.efficiency_ = field["efficiency"].positiveNumber();
  }
  if (field.has("declared")) {
    const schema::JsonField declared = field["declared"];
    declared.requireOnlyKeys({"examples", "epochs", "examples_per_epoch"});
    LengthMessage declaration;
    if (declared.has("examples")) declaration.examples = declaredNumber(declared["examples"]);
    if (declared.has("epochs")) declaration.epochs = declaredNumber(declared["epochs"]);
    if (declared.has("examples_per_epoch")) {
      declaration.examples_per_epoch = declaredNumber(declared["examples_per_epoch"]);
    }
    if (declaration.examples.has_value() == declaration.epochs.has_value() ||
        (declaration.examples_per_epoch && !declaration.epochs)) {
      throw InvalidInput(declared.path() + ": needs examples or epochs (examples_per_epoch "
                                           "only with epochs)");
    }
    account.declaration_ = declaration;
  }
  return account;
}

std::string describe(const LengthMessage& declaration) {
  if (declaration.examples) return "examples=" + number(*declaration.examples);
  std::string text = "epochs=" + number(declaration.epochs.value_or(0));
  if (declaration.examples_per_epoch) {
    text += " examples_per_epoch=" + number(*declaration.examples_per_epoch);
  }
  return text;
}

}  // namespace pollux::agent
