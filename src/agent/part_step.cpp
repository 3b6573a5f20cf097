// SPDX-License-Identifier: GPL-2.0-or-later
#include "part_step.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <utility>

namespace pollux::agent {
namespace {

// How often a step that wrote no status yet has its part checked with squeue.
constexpr auto kPartCheckInterval = std::chrono::seconds(5);
// How much of a step's output is copied at a time.
constexpr std::streamsize kRelayBlock = 1 << 16;
// The status of a step whose part ended before it wrote one, as a shell reports SIGTERM.
constexpr int kEndedWithItsPart = 143;

// `text` as one word of a POSIX shell command line.
std::string shellQuoted(const std::string& text) {
  std::string quoted = "'";
  for (const char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

void writeAll(int fd, const std::string& data) {
  for (size_t done = 0; done < data.size();) {
    const ssize_t wrote = write(fd, data.data() + done, data.size() - done);
    if (wrote <= 0) return;  // the launcher's output is gone: nothing to copy to
    done += static_cast<size_t>(wrote);
  }
}

}  // namespace

std::string partBatchScript(const std::string& launch_dir) {
  return "d=" + shellQuoted(launch_dir) +
         "; while [ ! -e \"$d/$SLURM_JOB_ID.run\" ]; do [ -d \"$d\" ] || exit 0; sleep 1; done"
         "; /bin/sh \"$d/$SLURM_JOB_ID.run\"; exec sleep infinity";
}

std::string stepScript(const std::string& base, const std::vector<std::string>& command,
                       const std::map<std::string, std::string>& env) {
  std::string script;
  for (const auto& [name, value] : env)
    script += "export " + name + "=" + shellQuoted(value) + "\n";
  for (const auto& word : command) script += shellQuoted(word) + " ";
  script += ">" + shellQuoted(base + ".out") + " 2>&1 </dev/null\n";
  script += "echo $? >" + shellQuoted(base + ".status.new") + "\n";
  script += "mv " + shellQuoted(base + ".status.new") + " " + shellQuoted(base + ".status") + "\n";
  return script;
}

void relayLeftOutput(const std::string& launch_dir) {
  std::vector<std::filesystem::path> outputs;
  for (const auto& entry : std::filesystem::directory_iterator(launch_dir)) {
    if (entry.path().extension() == ".out") outputs.push_back(entry.path());
  }
  // By part, the oldest (lowest job id) first.
  std::sort(outputs.begin(), outputs.end(), [](const auto& a, const auto& b) {
    const std::string first = a.stem().string(), second = b.stem().string();
    return std::make_pair(first.size(), first) < std::make_pair(second.size(), second);
  });
  for (const auto& path : outputs) {
    writeAll(STDOUT_FILENO, "--- the output of part " + path.stem().string() +
                                "'s step in an earlier run of the job ---\n");
    std::ifstream output(path, std::ios::binary);
    std::string block(kRelayBlock, '\0');
    while (output.read(block.data(), kRelayBlock) || output.gcount() > 0) {
      writeAll(STDOUT_FILENO, block.substr(0, static_cast<size_t>(output.gcount())));
    }
  }
}

ScriptStep::ScriptStep(const std::string& launch_dir, uint32_t part,
                       const std::vector<std::string>& command,
                       const std::map<std::string, std::string>& env)
    : base_(launch_dir + "/" + std::to_string(part)), part_(part),
      next_check_(std::chrono::steady_clock::now() + kPartCheckInterval) {
  // Written whole, then renamed: the part's batch script runs it once it exists.
  const std::string unfinished = base_ + ".run.new";
  std::ofstream(unfinished) << stepScript(base_, command, env);
  if (std::rename(unfinished.c_str(), (base_ + ".run").c_str()) != 0) {
    throw std::runtime_error("cannot write " + base_ + ".run for the part's batch script");
  }
}

ScriptStep::~ScriptStep() {
  for (const char* suffix : {".run", ".out", ".status"}) std::remove((base_ + suffix).c_str());
}

std::optional<int> ScriptStep::poll() {
  relayOutput();
  std::ifstream status_file(base_ + ".status");
  int status = 0;
  if (status_file >> status) {
    relayOutput();
    return status;
  }
  if (std::chrono::steady_clock::now() < next_check_) return std::nullopt;
  next_check_ = std::chrono::steady_clock::now() + kPartCheckInterval;
  if (partRuns()) return std::nullopt;
  relayOutput();
  return kEndedWithItsPart;
}

void ScriptStep::signal(int number) {
  runCommand({"scancel", "--signal=" + std::to_string(number), std::to_string(part_)});
}

void ScriptStep::relayOutput() {
  std::ifstream output(base_ + ".out", std::ios::binary);
  if (!output || !output.seekg(relayed_)) return;
  std::stringstream unread;
  unread << output.rdbuf();
  const std::string text = unread.str();
  writeAll(STDOUT_FILENO, text);
  relayed_ += static_cast<std::streamoff>(text.size());
}

bool ScriptStep::partRuns() {
  const CommandOutput state = runCommand({"squeue", "-h", "-j", std::to_string(part_), "-o", "%T"});
  return state.status == 0 && state.text() == "RUNNING";
}

}  // namespace pollux::agent
