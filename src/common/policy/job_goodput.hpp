// SPDX-License-Identifier: GPL-2.0-or-later
// A job's goodput on each GPU type and configuration, each computed once per round.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <tuple>

#include "common/model/goodput.hpp"
#include "configurations.hpp"
#include "policy.hpp"

namespace pollux::policy {

class JobGoodput {
 public:
  // Models for every type of `cluster` (measured, or estimated with `speeds`, in which a
  // missing type counts as 1.0); none if the job has no measurement yet.
  JobGoodput(const Job& job, const model::RelativeSpeeds& speeds, const ClusterShape& cluster);

  // Whether speedups are known: the job has a model and its baseline fits somewhere.
  bool hasModel() const { return baseline_goodput_.has_value(); }

  // Best batch for `config`; nullopt if the job has no model on its type or no batch fits.
  std::optional<model::BatchChoice> best(const Config& config);

  // Best goodput at the baseline: min_gpus on the job's fastest allowed type.
  std::optional<double> baselineGoodput() const { return baseline_goodput_; }

  // Best goodput at `config` over the baseline.
  std::optional<double> speedup(const Config& config);

 private:
  std::optional<double> bestBaselineGoodput(const Job& job, const ClusterShape& cluster);

  std::map<std::string, model::GoodputModel> models_;
  std::map<std::tuple<std::string, int, int>, std::optional<model::BatchChoice>> cache_;
  std::optional<double> baseline_goodput_;
};

}  // namespace pollux::policy
