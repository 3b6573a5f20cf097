// SPDX-License-Identifier: GPL-2.0-or-later
#include "csv.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

namespace pollux::trace {

namespace {

std::vector<std::string> splitFields(std::string line) {
  if (!line.empty() && line.back() == '\r') line.pop_back();
  std::vector<std::string> fields;
  std::stringstream stream(line);
  std::string field;
  while (std::getline(stream, field, ',')) fields.push_back(field);
  if (!line.empty() && line.back() == ',') fields.emplace_back();
  return fields;
}

std::string joined(const std::vector<std::string>& names) {
  std::string text;
  for (const auto& name : names) text += (text.empty() ? "" : ",") + name;
  return text;
}

// Position of each wanted column in the header; throws if one is missing.
std::vector<size_t> locateColumns(const std::vector<std::string>& header,
                                  const std::vector<std::string>& columns) {
  std::vector<size_t> positions;
  for (const auto& column : columns) {
    const auto found = std::find(header.begin(), header.end(), column);
    if (found == header.end()) {
      throw std::invalid_argument("expected a header with columns '" + joined(columns) + "'");
    }
    positions.push_back(static_cast<size_t>(found - header.begin()));
  }
  return positions;
}

}  // namespace

void forEachCsvRow(const std::string& path, const std::vector<std::string>& columns,
                   const std::function<void(const std::vector<std::string>&)>& row) {
  std::ifstream in(path);
  if (!in) throw TraceError(path + ": cannot open");
  std::string line;
  std::vector<std::string> header;
  if (std::getline(in, line)) header = splitFields(line);
  std::vector<size_t> positions;
  try {
    positions = locateColumns(header, columns);
  } catch (const std::exception& error) {
    throw TraceError(path + ":1: " + error.what());
  }
  std::vector<std::string> selected(columns.size());
  for (int number = 2; std::getline(in, line); ++number) {
    if (line.empty() || line == "\r") continue;
    try {
      const auto fields = splitFields(line);
      if (fields.size() != header.size()) {
        throw std::invalid_argument("expected " + std::to_string(header.size()) +
                                    " fields, got " + std::to_string(fields.size()));
      }
      for (size_t i = 0; i < positions.size(); ++i) selected[i] = fields[positions[i]];
      row(selected);
    } catch (const std::exception& error) {
      throw TraceError(path + ":" + std::to_string(number) + ": " + error.what());
    }
  }
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

}  // namespace pollux::trace
