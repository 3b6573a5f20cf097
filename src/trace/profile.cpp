// SPDX-License-Identifier: GPL-2.0-or-later
#include "profile.hpp"

#include "common/invalid_input.hpp"

namespace pollux::trace {

namespace {

void validate(const ProfileRow& row) {
  model::validate(row.placement);
  requirePositive(row.step_time, "step_time");
  requireNonNegative(row.sync_time, "sync_time");
  if (row.local_bsz < 1) throw std::invalid_argument("local_bsz must be >= 1");
}

}  // namespace

model::Placement parsePlacementDigits(const std::string& digits) {
  if (digits.empty()) throw std::invalid_argument("empty placement");
  model::Placement placement{0, 0};
  for (char digit : digits) {
    if (digit < '1' || digit > '9') {
      throw std::invalid_argument("placement '" + digits + "' must be digits 1-9");
    }
    placement.num_nodes += 1;
    placement.num_replicas += digit - '0';
  }
  return placement;
}

std::vector<ProfileRow> readPlacements(const std::string& path) {
  std::vector<ProfileRow> rows;
  forEachCsvRow(path, {"placement", "local_bsz", "step_time", "sync_time"},
                [&rows](const std::vector<std::string>& f) {
                  ProfileRow row{parsePlacementDigits(f[0]), parseInteger(f[1]),
                                 parseNumber(f[2]), parseNumber(f[3]), f[0]};
                  validate(row);
                  rows.push_back(row);
                });
  return rows;
}

std::vector<ProfileRow> readScalability(const std::string& path) {
  std::vector<ProfileRow> rows;
  forEachCsvRow(path, {"num_nodes", "num_replicas", "local_bsz", "step_time", "sync_time"},
                [&rows](const std::vector<std::string>& f) {
                  ProfileRow row{{parseInteger(f[0]), parseInteger(f[1])}, parseInteger(f[2]),
                                 parseNumber(f[3]), parseNumber(f[4]), ""};
                  validate(row);
                  rows.push_back(row);
                });
  return rows;
}

std::vector<ValidationRow> readValidation(const std::string& path) {
  std::vector<ValidationRow> rows;
  forEachCsvRow(path, {"progress", "grad_sqr", "grad_var"},
                [&rows](const std::vector<std::string>& f) {
                  const ValidationRow row{parseNumber(f[0]), parseNumber(f[1]), parseNumber(f[2])};
                  requirePositive(row.progress, "progress");
                  requireNonNegative(row.grad_sqr, "grad_sqr");
                  requireNonNegative(row.grad_var, "grad_var");
                  if (!rows.empty() && row.progress <= rows.back().progress) {
                    throw std::invalid_argument("progress must increase");
                  }
                  rows.push_back(row);
                });
  if (rows.empty()) throw TraceError(path + ": no data rows");
  return rows;
}

}  // namespace pollux::trace
