// SPDX-License-Identifier: GPL-2.0-or-later
#include "part_launcher.hpp"

#include <sys/stat.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "test_env.hpp"
#include "workers.hpp"

namespace pollux::agent {
namespace {

using testing::fakeEnv;
using Words = std::vector<std::string>;

TEST(PartLauncher, PartIsSubmittedAsTheJobWasWithItsTimeLeft) {
  const GetEnv env = fakeEnv({{"SLURM_JOB_NAME", "train"},
                              {"SLURM_JOB_PARTITION", "gpu"},
                              {"SLURM_JOB_ACCOUNT", "acct1"},
                              {"SLURM_JOB_QOS", "normal"},
                              {"SLURM_NTASKS_PER_NODE", "2"},
                              {"SLURM_GPUS_ON_NODE", "2"}});
  EXPECT_EQ(partSubmitCommand("7", env, "1:02:03"),
            (Words{"sbatch", "--parsable", "--comment=adaptive:part_of=7", "--job-name=train",
                   "--partition=gpu", "--account=acct1", "--qos=normal", "--time=1:02:03",
                   "--nodes=1", "--ntasks-per-node=2", "--gres=gpu:2", "--no-requeue",
                   "--output=/dev/null", "--wrap=exec sleep infinity"}));
  EXPECT_EQ(partSubmitCommand("7", fakeEnv({}), ""),
            (Words{"sbatch", "--parsable", "--comment=adaptive:part_of=7", "--job-name=part-of-7",
                   "--nodes=1", "--ntasks-per-node=1", "--gres=gpu:1", "--no-requeue",
                   "--output=/dev/null", "--wrap=exec sleep infinity"}));
}

TEST(PartLauncher, WorkersStartInThePartWithTheJobsCommand) {
  Options options;
  options.command = {"python3", "train.py"};
  EXPECT_EQ(partStepCommand("/usr/bin/pollux-agent", options, 12, 2, 1),
            (Words{"srun", "--jobid=12", "--nodes=2", "--ntasks=2", "--ntasks-per-node=1",
                   "--kill-on-bad-exit=0", "--no-kill", "/usr/bin/pollux-agent", "--", "python3",
                   "train.py"}));
}

TEST(PartLauncher, APartOfAJobWhoseGpusAreInPartsStartsItsStepFromTheLaunchersDirectory) {
  const Words command = partSubmitCommand("7", fakeEnv({}), "", "/home/u/.pollux-parts-7-ab");
  EXPECT_EQ(command.back(), "--wrap=" + partBatchScript("/home/u/.pollux-parts-7-ab"));
  EXPECT_NE(command.back().find("'/home/u/.pollux-parts-7-ab'"), std::string::npos);
}

TEST(PartLauncher, WorkersInThePartJoinTheJobsRendezvous) {
  StepSettings settings{"token", 2, "/tmp/status"};
  const auto env =
      partStepEnvironment("7", 12, {"n2"}, 2, {"n1", "n3"}, settings, fakeEnv({}));
  EXPECT_EQ(env.at("SLURM_JOB_ID"), "12");
  EXPECT_EQ(env.at("SLURM_JOB_NODELIST"), "n2");
  EXPECT_EQ(env.at("SLURM_NTASKS"), "2");
  EXPECT_EQ(env.at("MASTER_ADDR"), "n1");
  EXPECT_EQ(env.at("MASTER_PORT"), std::to_string(masterPort("7")));
  EXPECT_EQ(env.at("POLLUX_JOIN"), "1");
  EXPECT_EQ(env.at("POLLUX_JOIN_TOKEN"), "token");
  EXPECT_EQ(env.at("POLLUX_PART_OF"), "7");
  // Its agent writes the job's status once it leads (its worker is the job's rank 0).
  EXPECT_EQ(env.at(kStepStatusVariable), settings.status_file);
  const auto given = partStepEnvironment("7", 12, {"n2"}, 2, {"n1"}, settings,
                                         fakeEnv({{"MASTER_ADDR", "head"}, {"MASTER_PORT", "29500"}}));
  EXPECT_EQ(given.at("MASTER_ADDR"), "head");
  EXPECT_EQ(given.at("MASTER_PORT"), "29500");
  settings.master_port = 20008;  // the launcher's choice for the job's own step
  settings.store_hosted = true;  // the job's store runs apart: the joiners know it
  const auto chosen = partStepEnvironment("7", 12, {"n2"}, 2, {"n1"}, settings, fakeEnv({}));
  EXPECT_EQ(chosen.at("MASTER_PORT"), "20008");
  EXPECT_EQ(chosen.at("POLLUX_STORE_HOSTED"), "1");
  // The step that starts the training of a job whose GPUs are all in parts joins nothing.
  const auto first =
      partStepEnvironment("7", 12, {"n2"}, 2, {"n9"}, settings, fakeEnv({}), true);
  EXPECT_EQ(first.count("POLLUX_JOIN"), 0u);
  EXPECT_EQ(first.at(kPartLeadsVariable), "1");
  EXPECT_EQ(first.at("POLLUX_PART_OF"), "7");
  EXPECT_EQ(first.at("MASTER_ADDR"), "n9");  // the job's home, where its store runs
}

// srun, scancel and squeue on PATH: srun records the part it starts in and runs until
// scancel cancels that part; a part's batch script (runPart) runs until scancel cancels it.
// squeue shows every part cancelled.
class FakeSlurm {
 public:
  FakeSlurm() : old_path_(processEnv("PATH").value_or("/usr/bin:/bin")) {
    std::string dir_template =
        (std::filesystem::temp_directory_path() / "pollux-part-launcher-XXXXXX").string();
    if (!mkdtemp(dir_template.data())) throw std::runtime_error("mkdtemp failed");
    dir_ = dir_template;
    write("srun",
          "for word; do case $word in --jobid=*) part=${word#--jobid=};; esac; done\n"
          "echo $$ > \"$dir/srun-$part\"\n"
          // Its role first: a test that waits for a part's start then finds its role too.
          "echo \"$part ${POLLUX_PART_LEADS:-joins}\" >> \"$dir/roles\"\n"
          "echo $part >> \"$dir/started\"\n"
          "exec sleep 30\n");
    write("scancel",
          "for part; do\n"
          "  case $part in -*) continue;; esac\n"
          "  echo $part >> \"$dir/cancelled\"\n"
          "  kill $(cat \"$dir/srun-$part\" \"$dir/batch-$part.pid\" 2>/dev/null) 2>/dev/null\n"
          "done\n");
    write("squeue", "echo CANCELLED\n");
    setenv("PATH", (dir_ + ":" + old_path_).c_str(), 1);
  }
  ~FakeSlurm() {
    setenv("PATH", old_path_.c_str(), 1);
    std::filesystem::remove_all(dir_);
  }

  const std::string& dir() const { return dir_; }

  // Runs the batch script of part `part` of the job whose launcher made its directory in
  // dir(), in the background, as slurmd would (see part_step.hpp).
  void runPart(uint32_t part) const {
    std::string launch_dir;
    for (const auto& entry : std::filesystem::directory_iterator(dir_)) {
      if (entry.path().filename().string().rfind(".pollux-parts-", 0) == 0) {
        launch_dir = entry.path();
      }
    }
    const std::string script = dir_ + "/batch-" + std::to_string(part);
    std::ofstream(script) << partBatchScript(launch_dir) << "\n";
    const std::string command = "SLURM_JOB_ID=" + std::to_string(part) + " timeout 60 /bin/sh " +
                                script + " >/dev/null 2>&1 & echo $! >" + script + ".pid";
    if (std::system(command.c_str()) != 0) throw std::runtime_error("cannot run " + script);
  }

  // What a script appended to `name`, once it holds `lines` lines (or after 10 s).
  std::string appended(const std::string& name, int lines) const {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    std::string text;
    while (std::chrono::steady_clock::now() < deadline) {
      std::stringstream content;
      content << std::ifstream(dir_ + "/" + name).rdbuf();
      text = content.str();
      if (std::count(text.begin(), text.end(), '\n') >= lines) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return text;
  }

 private:
  // A script whose `body` finds this fake's directory in $dir.
  void write(const std::string& name, const std::string& body) const {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path) << "#!/bin/sh\ndir='" << dir_ << "'\n" << body;
    chmod(path.c_str(), 0755);
  }

  std::string old_path_;
  std::string dir_;
};

schema::PartStatus running(uint32_t part, const std::string& node) {
  return {schema::PartStatus::State::kRunning, part, {node}};
}

TEST(PartLauncher, WorkersStartOnceInEachRunningPartAndEndWithTheJob) {
  FakeSlurm slurm;
  const StepSettings step;
  {
    PartLauncher parts(Options{}, "7", ReporterSettings{"", "", "", 1, false, false}, step);
    parts.follow(running(12, "n2"), {"n1"});
    EXPECT_EQ(slurm.appended("started", 1), "12\n");
    parts.follow(running(13, "n3"), {"n1"});  // while part 12's workers still run
    EXPECT_EQ(slurm.appended("started", 2), "12\n13\n");
    parts.follow(running(12, "n2"), {"n1"});
  }  // cancels both parts and reaps both steps
  EXPECT_EQ(slurm.appended("started", 2), "12\n13\n");
  EXPECT_EQ(slurm.appended("cancelled", 2), "12\n13\n");
  EXPECT_EQ(slurm.appended("roles", 2), "12 joins\n13 joins\n");
}

// A job whose GPUs are all in parts: its first part starts the training, the next joins it.
TEST(PartLauncher, APartStartedWhileNoStepRunsStartsTheTrainingOfAJobWhoseGpusAreInParts) {
  FakeSlurm slurm;
  const StepSettings step;
  {
    PartLauncher parts(Options{}, "7", ReporterSettings{"", "", "", 1, false, false}, step, true,
                       slurm.dir());
    EXPECT_TRUE(parts.stepsApartFromTheJob());
    slurm.runPart(12);
    parts.follow(running(12, "n2"), {"n9"});
    EXPECT_EQ(slurm.appended("roles", 1), "12 1\n");
    slurm.runPart(13);
    parts.follow(running(13, "n3"), {"n9"});
    EXPECT_EQ(slurm.appended("roles", 2), "12 1\n13 joins\n");
    EXPECT_TRUE(parts.startedAny());
  }
  EXPECT_EQ(slurm.appended("cancelled", 2), "12\n13\n");
  for (const auto& entry : std::filesystem::directory_iterator(slurm.dir())) {
    EXPECT_NE(entry.path().filename().string().rfind(".pollux-parts-", 0), 0u);  // removed
  }
}

// A launcher that ended with its node left its directory; the job's next run relays the
// parts' output it holds and removes it, and leaves other jobs' directories alone.
TEST(PartLauncher, TheDirectoryOfAnEarlierRunOfTheJobIsRelayedAndRemoved) {
  FakeSlurm slurm;
  const StepSettings step;
  const std::string earlier = slurm.dir() + "/.pollux-parts-7-old";
  const std::string other_job = slurm.dir() + "/.pollux-parts-71-old";
  std::filesystem::create_directory(earlier);
  std::filesystem::create_directory(other_job);
  std::ofstream(earlier + "/12.out") << "checkpointed at epoch 3\n";
  std::ofstream(earlier + "/12.run") << "srun\n";
  const std::string long_output(100000, 'x');  // more than one block
  std::ofstream(earlier + "/101.out") << long_output;
  ::testing::internal::CaptureStdout();
  {
    PartLauncher parts(Options{}, "7", ReporterSettings{"", "", "", 1, false, false}, step, true,
                       slurm.dir());
    EXPECT_FALSE(std::filesystem::exists(earlier));
  }
  EXPECT_EQ(::testing::internal::GetCapturedStdout(),
            "--- the output of part 12's step in an earlier run of the job ---\n"
            "checkpointed at epoch 3\n"
            "--- the output of part 101's step in an earlier run of the job ---\n" +
                long_output);
  EXPECT_TRUE(std::filesystem::exists(other_job));
}

// After the training checkpointed in its parts for a restart in new parts, the launcher ends
// them; the next part to run starts the training again (from the checkpoint).
TEST(PartLauncher, AfterItsPartsEndTheNextPartToRunStartsTheTrainingAgain) {
  FakeSlurm slurm;
  const StepSettings step;
  PartLauncher parts(Options{}, "7", ReporterSettings{"", "", "", 1, false, false}, step, true,
                     slurm.dir());
  slurm.runPart(12);
  parts.follow(running(12, "n2"), {"n9"});
  EXPECT_EQ(slurm.appended("roles", 1), "12 1\n");
  parts.endParts();
  EXPECT_EQ(slurm.appended("cancelled", 1), "12\n");
  EXPECT_FALSE(parts.startedAny());
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (parts.hasSteps() && std::chrono::steady_clock::now() < deadline) {
    parts.poll({"n9"});
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_FALSE(parts.hasSteps());
  parts.follow(running(12, "n2"), {"n9"});  // shown running a moment longer: nothing starts
  slurm.runPart(14);
  parts.follow(running(14, "n3"), {"n9"});
  EXPECT_EQ(slurm.appended("roles", 2), "12 1\n14 1\n");
  EXPECT_TRUE(parts.startedAny());
}

}  // namespace
}  // namespace pollux::agent
