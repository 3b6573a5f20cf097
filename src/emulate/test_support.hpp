// SPDX-License-Identifier: GPL-2.0-or-later
// Shared by pollux-emulate's tests: the shipped profiles and scratch folders.
#pragma once

#include <filesystem>
#include <string>

#include "trace/application.hpp"

namespace pollux::emulate {

// An application of the traces POLLUX_TRACES points at, loaded once.
const trace::Application& traceApp(const std::string& name);
std::string tracesDir();

// A fresh folder under the system's temporary folder, removed with its contents.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

std::string readFile(const std::string& path);

// Writes DIR/tiny: an application whose initial batch (64) needs 4 micro-batches on one GPU
// (per-GPU batch 8 to 16), trained to progress 100.
void writeTinyApp(const TempDir& dir);

}  // namespace pollux::emulate
