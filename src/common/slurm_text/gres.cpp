// SPDX-License-Identifier: GPL-2.0-or-later
#include "gres.hpp"

#include <algorithm>
#include <cctype>
#include <vector>

namespace pollux::schema {

namespace {

bool allDigits(const std::string& text) {
  if (text.empty() || text.size() > 6) return false;
  for (char c : text) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

// The parts between separators, as std::getline reads them: no part after a trailing
// separator, none at all in "". Without a stringstream: every round parses each job's GRES
// (found costly at 2,000 jobs by bench/cluster-scale).
std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (start < text.size()) {
    const size_t end = std::min(text.find(separator, start), text.size());
    parts.emplace_back(text, start, end - start);
    start = end + 1;
  }
  return parts;
}

// Replaces every `from` in `text` by `to`.
std::string replaceAll(std::string text, const std::string& from, const std::string& to) {
  for (auto at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
  return text;
}

// The entries of a GRES list, split at the commas and semicolons outside parentheses (commas
// also separate socket ranges inside "(S:0,1)"). Slurm prints an untyped GPU as "(null)".
std::vector<std::string> entriesOf(const std::string& gres) {
  std::vector<std::string> entries(1);
  int depth = 0;
  for (char c : replaceAll(gres, "(null)", "")) {
    depth += c == '(' ? 1 : c == ')' ? -1 : 0;
    if (depth == 0 && (c == ',' || c == ';')) entries.emplace_back();
    else entries.back() += c;
  }
  return entries;
}

// One entry: "gpu:a100:4(S:0)", "gres/gpu:a100=2", "gpu:2", "gpu:a100(CNT:2)".
std::optional<GpuGres> parseEntry(std::string entry) {
  const auto open = entry.find('(');
  const std::string details = open == std::string::npos ? "" : entry.substr(open + 1);
  entry = entry.substr(0, open);
  for (const char* prefix : {"gres:", "gres/"}) {
    if (entry.rfind(prefix, 0) == 0) entry = entry.substr(5);
  }
  for (char& c : entry) {
    if (c == '=') c = ':';
  }
  const auto fields = split(entry, ':');
  if (fields.empty() || fields[0] != "gpu") return std::nullopt;
  if (details.rfind("CNT:", 0) == 0 && fields.size() <= 2) {
    const std::string count = details.substr(4, details.find(')') - 4);
    if (allDigits(count)) return GpuGres{fields.size() == 2 ? fields[1] : "", std::stoi(count)};
  }
  if (fields.size() == 2 && allDigits(fields[1])) return GpuGres{"", std::stoi(fields[1])};
  if (fields.size() == 3 && allDigits(fields[2])) return GpuGres{fields[1], std::stoi(fields[2])};
  return std::nullopt;
}

}  // namespace

std::optional<GpuGres> parseGpuGres(const std::string& gres) {
  for (const auto& entry : entriesOf(gres)) {
    if (auto gpus = parseEntry(entry)) return gpus;
  }
  return std::nullopt;
}

int countGpus(const std::string& gres) {
  int gpus = 0;
  for (const auto& entry : entriesOf(gres)) gpus += parseEntry(entry).value_or(GpuGres{}).count;
  return gpus;
}

}  // namespace pollux::schema
