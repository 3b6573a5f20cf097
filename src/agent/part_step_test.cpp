// SPDX-License-Identifier: GPL-2.0-or-later
#include "part_step.hpp"

#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <thread>

#include "test_env.hpp"

namespace pollux::agent {
namespace {

// A directory with fake srun and squeue first on PATH, and a part's batch script run there
// as Slurm would (SLURM_JOB_ID set). srun prints its words and POLLUX_PART_OF, then exits 3.
class PartScriptTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string dir_template =
        (std::filesystem::temp_directory_path() / "pollux-part-step-XXXXXX").string();
    if (!mkdtemp(dir_template.data())) throw std::runtime_error("mkdtemp failed");
    dir_ = dir_template;
    launch_dir_ = dir_ + "/launch";
    std::filesystem::create_directory(launch_dir_);
    write("srun", "echo \"srun $*\"; echo \"part of $POLLUX_PART_OF\"; exit 3\n");
    write("squeue", "cat \"" + dir_ + "/state\" 2>/dev/null\n");
    old_path_ = processEnv("PATH").value_or("/usr/bin:/bin");
    setenv("PATH", (dir_ + ":" + old_path_).c_str(), 1);
  }
  void TearDown() override {
    if (std::ifstream pid_file(dir_ + "/batch.pid"); pid_file) {
      pid_t pid = 0;
      if (pid_file >> pid && pid > 0) kill(pid, SIGTERM);
    }
    setenv("PATH", old_path_.c_str(), 1);
    std::filesystem::remove_all(dir_);
  }

  void write(const std::string& name, const std::string& body) const {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path) << "#!/bin/sh\n" << body;
    chmod(path.c_str(), 0755);
  }

  // The command that runs the batch script of part `part` (waiting for `launch_dir`), as
  // slurmd would, for at most `seconds`.
  std::string partScript(uint32_t part, const std::string& launch_dir, int seconds) const {
    const std::string script = dir_ + "/batch-" + std::to_string(part);
    std::ofstream(script) << partBatchScript(launch_dir) << "\n";
    return "SLURM_JOB_ID=" + std::to_string(part) + " timeout " + std::to_string(seconds) +
           " /bin/sh " + script;
  }

  // Runs it in the background, stopped at TearDown.
  void runPartScript(uint32_t part) const {
    const std::string command = partScript(part, launch_dir_, 30) + " >/dev/null 2>&1 & " +
                                "echo $! >" + dir_ + "/batch.pid";
    ASSERT_EQ(std::system(command.c_str()), 0);
  }

  static std::optional<int> statusWithin(PartStep& step, std::chrono::seconds wait) {
    const auto deadline = std::chrono::steady_clock::now() + wait;
    while (std::chrono::steady_clock::now() < deadline) {
      if (const auto status = step.poll()) return status;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return std::nullopt;
  }

  std::string dir_, launch_dir_, old_path_;
};

TEST_F(PartScriptTest, ThePartsBatchScriptRunsTheStepAndTheLauncherRelaysItsOutputAndStatus) {
  runPartScript(12);
  ::testing::internal::CaptureStdout();
  std::optional<int> status;
  {
    ScriptStep step(launch_dir_, 12, {"srun", "--jobid=12", "it's", "a b"},
                    {{"POLLUX_PART_OF", "7 o'clock"}});
    status = statusWithin(step, std::chrono::seconds(10));
  }
  const std::string output = ::testing::internal::GetCapturedStdout();
  EXPECT_EQ(status, 3);
  EXPECT_EQ(output, "srun --jobid=12 it's a b\npart of 7 o'clock\n");
  EXPECT_FALSE(std::filesystem::exists(launch_dir_ + "/12.run"));  // removed with the step
  EXPECT_FALSE(std::filesystem::exists(launch_dir_ + "/12.status"));
}

TEST_F(PartScriptTest, AStepWhosePartEndsWithoutAStatusEndedWithIt) {
  std::ofstream(dir_ + "/state") << "RUNNING\n";
  ScriptStep step(launch_dir_, 12, {"srun"}, {});  // no batch script runs it
  EXPECT_EQ(step.poll(), std::nullopt);
  std::ofstream(dir_ + "/state") << "CANCELLED\n";
  EXPECT_EQ(statusWithin(step, std::chrono::seconds(10)), 143);
}

TEST_F(PartScriptTest, ThePartsBatchScriptEndsOnceTheLaunchersDirectoryIsGone) {
  EXPECT_EQ(std::system(partScript(12, launch_dir_ + "/gone", 10).c_str()), 0);
}

}  // namespace
}  // namespace pollux::agent
