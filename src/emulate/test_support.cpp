// SPDX-License-Identifier: GPL-2.0-or-later
#include "test_support.hpp"

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>

#include "applications.hpp"
#include "testing/shipped_traces.hpp"

namespace pollux::emulate {

std::string tracesDir() { return pollux::testing::shippedTraces(); }

const trace::Application& traceApp(const std::string& name) {
  static std::map<std::string, trace::Application> loaded;
  auto found = loaded.find(name);
  if (found == loaded.end()) found = loaded.emplace(name, loadProfile(tracesDir(), name)).first;
  return found->second;
}

TempDir::TempDir() {
  static int made = 0;
  path_ = std::filesystem::temp_directory_path() /
          ("pollux-emulate-test-" + std::to_string(getpid()) + "-" + std::to_string(++made));
  std::filesystem::remove_all(path_);
  std::filesystem::create_directories(path_);
}

TempDir::~TempDir() { std::filesystem::remove_all(path_); }

std::string readFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

void writeTinyApp(const TempDir& dir) {
  std::filesystem::create_directories(dir.file("tiny"));
  std::ofstream(dir.file("tiny/placements.csv")) << "placement,local_bsz,step_time,sync_time\n"
                                                    "1,8,0.1,0.01\n1,16,0.18,0.01\n"
                                                    "2,8,0.12,0.03\n2,16,0.2,0.03\n";
  for (const char* batch : {"64", "256"})
    std::ofstream(dir.file(std::string("tiny/validation-") + batch + ".csv"))
        << "progress,iteration,metric,grad_sqr,grad_var\n10,10,0.5,1.0,2.0\n100,100,0.9,0.5,4.0\n";
}

}  // namespace pollux::emulate
