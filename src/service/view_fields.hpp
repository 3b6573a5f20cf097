// SPDX-License-Identifier: GPL-2.0-or-later
// The kinds of the fields of a job's and a node's view (the lists of pollux_service.h). A kind
// converts a field of the C view into the service's type (fromC, for pollux_service.cpp),
// reads and writes it in a recorded round's JSON (read, write, for round_json.cpp) and gives
// it back as a view (toC, for the seam's test); isSet tells a Sparse field worth writing.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <ctime>
#include <deque>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <json/json.h>

#include "common/invalid_input.hpp"
#include "common/schema/json_reader.hpp"
#include "common/slurm_text/node_list.hpp"
#include "pollux_service.h"
#include "site_policy.hpp"
#include "slurm_view.hpp"

namespace pollux::service::view_fields {

using schema::JsonField;

// A round the shim filled wrongly (a NULL array with a count, a NULL name).
class InvalidRound : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// A C array and its count; throws InvalidRound for a NULL array with a count.
template <typename T>
const T* arrayOf(const T* items, size_t count, const char* what) {
  if (!items && count > 0) throw InvalidRound(std::string(what) + ": NULL with a count");
  return items;
}

inline std::vector<std::string> namesOf(const pollux_names_t& names, const char* what) {
  const char* const* items = arrayOf(names.names, names.count, what);
  std::vector<std::string> out;
  for (size_t i = 0; i < names.count; ++i) {
    if (!items[i]) throw InvalidRound(std::string(what) + ": a NULL name");
    out.emplace_back(items[i]);
  }
  return out;
}

// What views given back by toC point to, beside the service's values they were made of.
struct ViewStorage {
  std::deque<std::string> texts;
  std::deque<std::vector<const char*>> name_lists;
};

enum class Presence { kAlways, kDefaulted, kSparse };

template <typename Kind, Presence presence>
void write(Json::Value& out, const char* key, const typename Kind::Value& value) {
  if constexpr (presence == Presence::kSparse) {
    if (!Kind::isSet(value)) return;
  }
  out[key] = Kind::write(value);
}

// Leaves `value` as it is where a field that is not Always is absent.
template <typename Kind, Presence presence>
void read(const JsonField& holder, const char* key, typename Kind::Value& value) {
  if constexpr (presence != Presence::kAlways) {
    if (!holder.has(key)) return;
  }
  value = Kind::read(holder[key]);
}

inline constexpr long long kMaxCount = 1LL << 30;
inline constexpr long long kMaxMegabytes = 1LL << 50;

// `value` within [least, most], for integers of any C type.
template <typename Integer>
long long clamped(Integer value, long long least, long long most) {
  const long long wide = value > static_cast<Integer>(most) ? most : static_cast<long long>(value);
  return std::max(wide, least);
}

// uint32_t values at least `Least`.
template <long Least>
struct Uint32Of {
  using Value = uint32_t;
  static Value fromC(uint32_t value, const char*) { return value; }
  static uint32_t toC(Value value, ViewStorage&) { return value; }
  static Value read(const JsonField& field) {
    return static_cast<Value>(field.integer(Least, 0xFFFFFFFFL));
  }
  static Json::Value write(Value value) { return value; }
  static bool isSet(Value value) { return value > 0; }
};
using Id = Uint32Of<1>;
using Uint32 = Uint32Of<0>;

struct State {
  using Value = JobState;
  static Value fromC(int state, const char*) {
    if (state == POLLUX_JOB_PENDING) return JobState::kPending;
    if (state == POLLUX_JOB_RUNNING) return JobState::kRunning;
    return JobState::kOther;
  }
  static int toC(Value state, ViewStorage&) {
    switch (state) {
      case JobState::kPending: return POLLUX_JOB_PENDING;
      case JobState::kRunning: return POLLUX_JOB_RUNNING;
      case JobState::kOther: return POLLUX_JOB_OTHER;
    }
    return POLLUX_JOB_OTHER;
  }
  static Value read(const JsonField& field) {
    const std::string name = field.string();
    for (JobState state : {JobState::kPending, JobState::kRunning, JobState::kOther}) {
      if (name == toString(state)) return state;
    }
    throw InvalidInput(field.path() + ": not pending, running or other");
  }
  static Json::Value write(Value state) { return toString(state); }
};

struct Flag {
  using Value = bool;
  static Value fromC(int value, const char*) { return value != 0; }
  static int toC(Value value, ViewStorage&) { return value ? 1 : 0; }
  static Value read(const JsonField& field) { return field.boolean(); }
  static Json::Value write(Value value) { return value; }
};

// Seconds since the epoch.
struct Time {
  using Value = double;
  static Value fromC(time_t value, const char*) { return static_cast<double>(value); }
  static time_t toC(Value value, ViewStorage&) { return static_cast<time_t>(value); }
  static Value read(const JsonField& field) { return field.nonNegativeNumber(); }
  static Json::Value write(Value value) { return value; }
};

// Counts up to 2^30, of any C integer type.
struct Count {
  using Value = int;
  template <typename Integer>
  static Value fromC(Integer value, const char*) {
    return static_cast<int>(clamped(value, 0, kMaxCount));
  }
  static long long toC(Value value, ViewStorage&) { return value; }
  static Value read(const JsonField& field) {
    return static_cast<int>(field.integer(0, kMaxCount));
  }
  static Json::Value write(Value value) { return value; }
  static bool isSet(Value value) { return value > 0; }
};

// A view's CPUs per task: 1 where Slurm left it 0.
struct CpusPerTask : Count {
  template <typename Integer>
  static Value fromC(Integer value, const char*) {
    return static_cast<int>(clamped(value, 1, kMaxCount));
  }
};

struct Megabytes {
  using Value = std::int64_t;
  template <typename Integer>
  static Value fromC(Integer value, const char*) {
    return clamped(value, 0, kMaxMegabytes);
  }
  static Value toC(Value value, ViewStorage&) { return value; }
  static Value read(const JsonField& field) { return field.integer(0, kMaxMegabytes); }
  static Json::Value write(Value value) { return Json::Int64(value); }
};

// Megabytes where memory is consumable, -1 in the view (none in the service) where not.
struct MegabytesOrNone {
  using Value = std::optional<std::int64_t>;
  static Value fromC(int64_t value, const char*) { return value < 0 ? std::nullopt : Value(value); }
  static int64_t toC(const Value& value, ViewStorage&) { return value.value_or(-1); }
  static Value read(const JsonField& field) { return Megabytes::read(field); }
  static Json::Value write(const Value& value) { return Json::Int64(value.value()); }
  static bool isSet(const Value& value) { return value.has_value(); }
};

// A string, NULL in the view where empty.
struct Text {
  using Value = std::string;
  static Value fromC(const char* value, const char*) { return value ? value : ""; }
  static const char* toC(const Value& value, ViewStorage&) {
    return value.empty() ? nullptr : value.c_str();
  }
  static Value read(const JsonField& field) { return field.string(); }
  static Json::Value write(const Value& value) { return value; }
  static bool isSet(const Value& value) { return !value.empty(); }
};

struct Names {
  using Value = std::vector<std::string>;
  static Value fromC(const pollux_names_t& names, const char* field) {
    return namesOf(names, field);
  }
  template <typename Container>  // of std::string, which must outlive the view
  static pollux_names_t toC(const Container& names, ViewStorage& storage) {
    auto& pointers = storage.name_lists.emplace_back();
    for (const auto& name : names) pointers.push_back(name.c_str());
    return {pointers.data(), pointers.size()};
  }
  static Value read(const JsonField& field) {
    Value names;
    for (Json::ArrayIndex i = 0; i < field.arraySize(); ++i) names.push_back(field.at(i).string());
    return names;
  }
  static Json::Value write(const Value& names) {
    Json::Value out(Json::arrayValue);
    for (const auto& name : names) out.append(name);
    return out;
  }
  static bool isSet(const Value& names) { return !names.empty(); }
};

// A node's features: "ib,nvlink" in the view, a list in the service and the JSON.
struct Features : Names {
  static Value fromC(const char* list, const char*) { return splitFeatures(list ? list : ""); }
  static const char* toC(const Value& features, ViewStorage& storage) {
    return storage.texts.emplace_back(commaJoined(features)).c_str();
  }
};

// A node's GPUs: "gpu:a100:4" in the view, {"type": "a100", "count": 4} in the JSON.
struct GpuGres {
  using Value = schema::GpuGres;
  static Value fromC(const char* gres, const char*) {
    return parseGpuGres(gres ? gres : "").value_or(Value{});
  }
  static const char* toC(const Value& gpus, ViewStorage& storage) {
    const std::string type = gpus.type.empty() ? "" : gpus.type + ":";
    return storage.texts.emplace_back("gpu:" + type + std::to_string(gpus.count)).c_str();
  }
  static Value read(const JsonField& field) {
    field.requireOnlyKeys({"type", "count"});
    Value gpus;
    view_fields::read<Text, Presence::kSparse>(field, "type", gpus.type);
    gpus.count = Count::read(field["count"]);
    return gpus;
  }
  static Json::Value write(const Value& gpus) {
    Json::Value out(Json::objectValue);
    view_fields::write<Text, Presence::kSparse>(out, "type", gpus.type);
    out["count"] = gpus.count;
    return out;
  }
};

// GPUs a node's jobs hold: "gpu:a100:2(IDX:0-1)" in the view, their count in the service.
struct GpusUsed : Count {
  static Value fromC(const char* gres, const char*) { return countGpus(gres ? gres : ""); }
  static const char* toC(Value count, ViewStorage& storage) {
    return storage.texts.emplace_back("gpu:" + std::to_string(count)).c_str();
  }
};

}  // namespace pollux::service::view_fields
