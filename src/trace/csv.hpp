// SPDX-License-Identifier: GPL-2.0-or-later
// Reading the comma-separated trace files: columns located by header name, errors with file:line.
#pragma once

#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace pollux::trace {

// A malformed or unreadable trace file; the message names the file and line.
class TraceError : public std::runtime_error {
 public:
  explicit TraceError(const std::string& what) : std::runtime_error(what) {}
};

// Calls `row` for each non-empty data line of the CSV at `path` with the fields of `columns`,
// in that order, wherever they appear in the header. Throws TraceError naming the file and line
// if the file cannot be read, the header lacks a column, a line has the wrong field count, or
// `row` throws.
void forEachCsvRow(const std::string& path, const std::vector<std::string>& columns,
                   const std::function<void(const std::vector<std::string>&)>& row);

// Strict number parsing: the whole text must be used; throw std::invalid_argument otherwise.
double parseNumber(const std::string& text);
int parseInteger(const std::string& text);

}  // namespace pollux::trace
