// SPDX-License-Identifier: GPL-2.0-or-later
#include "channel_message.hpp"

#include <cstdio>
#include <limits>
#include <map>
#include <sstream>

#include "common/invalid_input.hpp"
#include "common/text_number.hpp"

namespace pollux::agent {
namespace {

constexpr size_t kMaxMessageBytes = 1024;
constexpr long kMaxCount = 1L << 40;

using Fields = std::map<std::string, std::string, std::less<>>;

// "kind key=value ..." -> kind and its fields; later duplicates win.
std::string splitMessage(std::string_view text, Fields& fields) {
  if (!text.empty() && text.back() == '\n') text.remove_suffix(1);
  if (text.size() > kMaxMessageBytes) throw InvalidInput("message longer than 1024 bytes");
  for (const char c : text) {
    if (c < 0x20 || c > 0x7e) throw InvalidInput("message contains a non-printable byte");
  }
  std::istringstream words{std::string(text)};
  std::string kind, word;
  words >> kind;
  while (words >> word) {
    const auto equals = word.find('=');
    if (equals == std::string::npos || equals == 0)
      throw InvalidInput("'" + word + "' is not key=value");
    fields[word.substr(0, equals)] = word.substr(equals + 1);
  }
  return kind;
}

const std::string& required(const Fields& fields, const char* key) {
  const auto found = fields.find(key);
  if (found == fields.end()) throw InvalidInput(std::string("missing ") + key + "=");
  return found->second;
}

// A finite number >= min.
double number(const std::string& key, const std::string& text, double min) {
  const auto value = parseFiniteNumber(text);
  if (!value || *value < min)
    throw InvalidInput(key + "=" + text + " is not a finite number >= " + std::to_string(min));
  return *value;
}

long integer(const std::string& key, const std::string& text, long min, long max) {
  const auto value = parseInteger(text, min, max);
  if (!value)
    throw InvalidInput(key + "=" + text + " is not an integer in [" + std::to_string(min) + ", " +
                       std::to_string(max) + "]");
  return *value;
}

double requiredNumber(const Fields& fields, const char* key, double min) {
  return number(key, required(fields, key), min);
}

long requiredInteger(const Fields& fields, const char* key, long min, long max) {
  return integer(key, required(fields, key), min, max);
}

HelloMessage parseHello(const Fields& fields) {
  model::BatchLimits limits{
      requiredInteger(fields, "init_batch_size", 1, kMaxCount),
      requiredInteger(fields, "max_batch_size", 1, kMaxCount),
      static_cast<int>(requiredInteger(fields, "min_local_bsz", 1, 1L << 30)),
      static_cast<int>(requiredInteger(fields, "max_local_bsz", 1, 1L << 30)),
      requiredInteger(fields, "accumulation", 0, 1) == 1};
  model::validate(limits);
  const auto elastic = fields.find("elastic");
  return {limits, elastic != fields.end() && integer("elastic", elastic->second, 0, 1) == 1};
}

StepMessage parseStep(const Fields& fields) {
  StepMessage step{requiredNumber(fields, "time", 0),
                   static_cast<int>(requiredInteger(fields, "local_bsz", 1, 1L << 30)),
                   static_cast<int>(requiredInteger(fields, "accum_steps", 0, 1L << 20)),
                   requiredNumber(fields, "examples", 0),
                   requiredNumber(fields, "epochs", 0),
                   std::nullopt,
                   std::nullopt};
  if (step.step_time <= 0) throw InvalidInput("time= must be above 0");
  if (const auto found = fields.find("compute_time"); found != fields.end())
    step.compute_time = number("compute_time", found->second, 0);
  const bool has_sqr = fields.count("grad_sqr") > 0, has_var = fields.count("grad_var") > 0;
  if (has_sqr != has_var) throw InvalidInput("grad_sqr= and grad_var= come together");
  // Single-step estimates may be negative; the agent averages them before clamping.
  constexpr double kAnyFinite = -std::numeric_limits<double>::max();
  if (has_sqr)
    step.per_example_grad = model::GradParams{requiredNumber(fields, "grad_sqr", kAnyFinite),
                                              requiredNumber(fields, "grad_var", kAnyFinite)};
  return step;
}

// A declared amount: finite, > 0 and at most kMaxDeclared.
std::optional<double> declaredAmount(const Fields& fields, const char* key) {
  const auto found = fields.find(key);
  if (found == fields.end()) return std::nullopt;
  const auto value = parseFiniteNumber(found->second);
  if (!value || !(*value > 0) || *value > kMaxDeclared)
    throw InvalidInput(std::string("length ") + key + "=" + found->second +
                       " is not a finite number > 0 (and at most 1e18)");
  return value;
}

LengthMessage parseLength(const Fields& fields) {
  LengthMessage length{declaredAmount(fields, "examples"), declaredAmount(fields, "epochs"),
                       declaredAmount(fields, "examples_per_epoch")};
  if (length.examples && length.epochs)
    throw InvalidInput("length takes examples= or epochs=, not both");
  if (!length.examples && !length.epochs)
    throw InvalidInput("length needs examples= or epochs=");
  if (length.examples_per_epoch && !length.epochs)
    throw InvalidInput("length examples_per_epoch= goes with epochs= only");
  return length;
}

}  // namespace

TrainerMessage parseTrainerMessage(std::string_view text) {
  Fields fields;
  const std::string kind = splitMessage(text, fields);
  if (kind == "step") return parseStep(fields);
  if (kind == "hello") return parseHello(fields);
  if (kind == "checkpointed") return CheckpointedMessage{};
  if (kind == "leaving") return LeavingMessage{};
  if (kind == "length") return parseLength(fields);
  if (kind == "resized") {
    ResizedMessage resized{static_cast<int>(requiredInteger(fields, "from", 1, kMaxCount)),
                           static_cast<int>(requiredInteger(fields, "to", 1, kMaxCount)),
                           requiredNumber(fields, "stall", 0), std::nullopt};
    if (const auto rank = fields.find("rank"); rank != fields.end()) {
      resized.rank = static_cast<int>(integer("rank", rank->second, 0, resized.to - 1));
    }
    return resized;
  }
  if (kind.empty()) throw InvalidInput("empty message");
  throw InvalidInput("unknown message kind '" + kind + "'");
}

bool sameDecision(const Decision& a, const Decision& b) {
  return a.batch_size == b.batch_size && a.local_bsz == b.local_bsz &&
         a.accum_steps == b.accum_steps && a.lr_scale == b.lr_scale;
}

std::string formatDecision(const Decision& decision) {
  char line[160];
  std::snprintf(line, sizeof line, "decision batch_size=%ld local_bsz=%d accum_steps=%d lr_scale=%.9g\n",
                decision.batch_size, decision.local_bsz, decision.accum_steps, decision.lr_scale);
  return line;
}

}  // namespace pollux::agent
