#include "profile.hpp"

#include <cmath>
#include <fstream>
#include <sstream>

#include "invalid_input.hpp"

namespace pollux::trace {

namespace {

std::vector<std::string> splitFields(const std::string& line) {
  std::vector<std::string> fields;
  std::stringstream stream(line);
  std::string field;
  while (std::getline(stream, field, ',')) fields.push_back(field);
  if (!line.empty() && line.back() == ',') fields.emplace_back();
  return fields;
}

double parseNumber(const std::string& text) {
  size_t used = 0;
  const double value = std::stod(text, &used);
  if (used != text.size()) throw std::invalid_argument("trailing characters in '" + text + "'");
  return value;
}

int parseInteger(const std::string& text) {
  const double value = parseNumber(text);
  if (value != std::floor(value) || std::abs(value) > 1e9) {
    throw std::invalid_argument("'" + text + "' is not an integer");
  }
  return static_cast<int>(value);
}

// Reads a CSV with the exact `header`, turning each data line into a row with `parse`.
template <typename Parse>
std::vector<ProfileRow> readCsv(const std::string& path, const std::string& header, Parse parse) {
  std::ifstream in(path);
  if (!in) throw TraceError(path + ": cannot open");
  std::string line;
  if (!std::getline(in, line) || line != header) {
    throw TraceError(path + ":1: expected header '" + header + "'");
  }
  std::vector<ProfileRow> rows;
  for (int number = 2; std::getline(in, line); ++number) {
    if (line.empty()) continue;
    try {
      ProfileRow row = parse(splitFields(line));
      model::validate(row.placement);
      requirePositive(row.step_time, "step_time");
      requireNonNegative(row.sync_time, "sync_time");
      if (row.local_bsz < 1) throw std::invalid_argument("local_bsz must be >= 1");
      rows.push_back(row);
    } catch (const std::exception& error) {
      throw TraceError(path + ":" + std::to_string(number) + ": " + error.what());
    }
  }
  return rows;
}

void requireFieldCount(const std::vector<std::string>& fields, size_t count) {
  if (fields.size() != count) {
    throw std::invalid_argument("expected " + std::to_string(count) + " fields, got " +
                                std::to_string(fields.size()));
  }
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
  return readCsv(path, "placement,local_bsz,step_time,sync_time",
                 [](const std::vector<std::string>& f) {
                   requireFieldCount(f, 4);
                   return ProfileRow{parsePlacementDigits(f[0]), parseInteger(f[1]),
                                     parseNumber(f[2]), parseNumber(f[3])};
                 });
}

std::vector<ProfileRow> readScalability(const std::string& path) {
  return readCsv(path, "num_nodes,num_replicas,local_bsz,step_time,sync_time",
                 [](const std::vector<std::string>& f) {
                   requireFieldCount(f, 5);
                   return ProfileRow{{parseInteger(f[0]), parseInteger(f[1])}, parseInteger(f[2]),
                                     parseNumber(f[3]), parseNumber(f[4])};
                 });
}

}  // namespace pollux::trace
