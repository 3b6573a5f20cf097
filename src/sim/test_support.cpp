// SPDX-License-Identifier: GPL-2.0-or-later
#include "test_support.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace pollux::sim::testing {

namespace fs = std::filesystem;

namespace {

std::string makeUniqueDir(const std::string& pattern) {
  std::string path = pattern;
  if (!mkdtemp(path.data())) throw std::runtime_error("mkdtemp failed for " + pattern);
  return path;
}

// Every directory the tests make lives under one root, removed when the program exits.
class TempRoot {
 public:
  TempRoot() : path_(makeUniqueDir("/tmp/pollux-sim-test-XXXXXX")) {}
  ~TempRoot() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace

std::string makeTempDir() {
  static const TempRoot root;
  return makeUniqueDir(root.path() + "/dir-XXXXXX");
}

std::string writeFile(const std::string& dir, const std::string& name, const std::string& text) {
  const fs::path path = fs::path(dir) / name;
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text;
  return path.string();
}

std::string makeToyProfiles() {
  const std::string dir = makeTempDir();
  writeFile(dir, "toy/placements.csv",
            "placement,local_bsz,step_time,sync_time\n"
            "1,10,1.0,0.0\n1,20,2.0,0.0\n2,10,1.0,0.5\n2,20,2.0,0.5\n");
  writeFile(dir, "toy/validation-10.csv",
            "progress,iteration,metric,grad_sqr,grad_var\n50,50,0.5,1.0,0.0\n100,100,0.9,1.0,0.0\n");
  writeFile(dir, "toy/validation-40.csv",
            "progress,iteration,metric,grad_sqr,grad_var\n50,50,0.5,1.0,0.0\n100,100,0.9,1.0,0.0\n");
  return dir;
}


}  // namespace pollux::sim::testing
