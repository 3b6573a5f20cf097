// SPDX-License-Identifier: GPL-2.0-or-later
// pollux-policy: one scheduling round. Snapshot JSON on stdin, decision JSON on stdout.
#include <cstdio>
#include <iostream>
#include <stdexcept>
#include <string>

#include <json/json.h>

#include "common/invalid_input.hpp"
#include "common/policy/policy.hpp"
#include "common/schema/snapshot_json.hpp"

namespace {

constexpr const char* kUsage =
    "usage: pollux-policy < snapshot.json > decision.json\n"
    "  Runs one Pollux scheduling round on a policy snapshot (see pollux-policy(1)).\n";

// All of stdin, read in large blocks (a snapshot at 16,384 GPUs is ~2 MB).
std::string readAll(std::FILE* in) {
  std::string text;
  char block[1 << 16];
  for (std::size_t got; (got = std::fread(block, 1, sizeof block, in)) > 0;) {
    text.append(block, got);
  }
  if (std::ferror(in)) throw std::runtime_error("cannot read the snapshot from stdin");
  return text;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1) {
    const std::string arg = argv[1];
    const bool help = arg == "-h" || arg == "--help";
    (help ? std::cout : std::cerr) << (help ? "" : "pollux-policy: takes no arguments\n")
                                   << kUsage;
    return help ? 0 : 2;
  }
  try {
    const std::string text = readAll(stdin);
    const auto decision = pollux::policy::schedule(pollux::schema::parseSnapshot(text));
    Json::StreamWriterBuilder writer;
    writer["indentation"] = "  ";
    std::cout << Json::writeString(writer, pollux::schema::decisionToJson(decision)) << "\n";
    return 0;
  } catch (const pollux::InvalidInput& error) {
    std::cerr << "pollux-policy: invalid snapshot: " << error.what() << "\n";
    return 2;
  } catch (const std::exception& error) {
    std::cerr << "pollux-policy: internal error: " << error.what() << "\n";
    return 1;
  }
}
