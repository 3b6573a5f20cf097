// SPDX-License-Identifier: GPL-2.0-or-later
// Loading a run's inputs, bad-input errors, and an end-to-end run on the shipped traces.
#include "experiment.hpp"

#include <gtest/gtest.h>

#include <fstream>

#include "fifo.hpp"
#include "metrics.hpp"
#include "options.hpp"
#include "pollux_scheduler.hpp"
#include "report.hpp"
#include "simulation.hpp"
#include "test_support.hpp"
#include "tiresias.hpp"

namespace pollux::sim {
namespace {

const std::string kHeader = "name,time,application,num_replicas,batch_size\n";

std::string messageOf(const std::function<void()>& action) {
  try {
    action();
  } catch (const std::exception& error) {
    return error.what();
  }
  return "";
}

Options parse(std::vector<std::string> args) {
  args.insert(args.begin(), "pollux-sim");
  std::vector<char*> argv;
  for (auto& arg : args) argv.push_back(arg.data());
  return parseOptions(static_cast<int>(argv.size()), argv.data());
}

TEST(OptionsTest, ParsesAndRejects) {
  const Options options = parse({"--workload", "w.csv", "--policy", "fifo", "--round", "30",
                                 "--restart-cost", "bert=10,ncf=2.5", "--json"});
  EXPECT_EQ(options.cluster, "t4:16x4");
  EXPECT_DOUBLE_EQ(options.round_s, 30);
  EXPECT_DOUBLE_EQ(options.restart_cost_s.at("ncf"), 2.5);
  EXPECT_TRUE(options.json);
  EXPECT_DOUBLE_EQ(options.event_delay_s, 0);
  EXPECT_DOUBLE_EQ(
      parse({"--workload", "w", "--policy", "pollux", "--event-delay", "1"}).event_delay_s, 1);
  EXPECT_THROW(parse({"--workload", "w", "--policy", "fifo", "--event-delay", "-1"}),
               std::invalid_argument);
  EXPECT_THROW(parse({"--workload", "w", "--policy", "fifo", "--event-delay", "soon"}),
               std::invalid_argument);
  EXPECT_NE(messageOf([] { parse({"--workload", "w", "--policy", "sjf"}); }).find("unknown policy"),
            std::string::npos);
  EXPECT_THROW(parse({"--policy", "fifo"}), std::invalid_argument);
  EXPECT_THROW(parse({"--workload", "w", "--policy", "fifo", "--round", "0"}),
               std::invalid_argument);
  EXPECT_THROW(parse({"--workload", "w", "--policy", "fifo", "--restart-cost", "bert"}),
               std::invalid_argument);
  EXPECT_DOUBLE_EQ(parse({"--workload", "w", "--policy", "pollux", "--join-startup", "bert=30"})
                       .join_startup_s.at("bert"),
                   30);
  EXPECT_NE(messageOf([] {
              parse({"--workload", "w", "--policy", "pollux", "--join-startup", "bert=-1"});
            }).find("--join-startup bert"),
            std::string::npos);
  EXPECT_THROW(parse({"--workload", "w", "--policy", "fifo", "--bogus"}), std::invalid_argument);
  EXPECT_THROW(parse({"--workload", "w", "--policy", "fifo", "extra"}), std::invalid_argument);
}

TEST(OptionsTest, DeclarationsAndObjective) {
  const Options defaults = parse({"--workload", "w", "--policy", "pollux-goodput"});
  EXPECT_DOUBLE_EQ(defaults.declare_factor, 1);
  EXPECT_DOUBLE_EQ(defaults.undeclared_share, 0);
  EXPECT_EQ(defaults.params.objective, policy::Objective::kJct);
  const Options options =
      parse({"--workload", "w", "--policy", "pollux", "--declare-factor", "0.5",
             "--undeclared-share", "0.5", "--params", "pollux_objective=goodput,pollux_jct_guard=3"});
  EXPECT_DOUBLE_EQ(options.declare_factor, 0.5);
  EXPECT_DOUBLE_EQ(options.undeclared_share, 0.5);
  EXPECT_EQ(options.params.objective, policy::Objective::kGoodput);
  EXPECT_DOUBLE_EQ(options.params.jct_guard, 3);
  for (const char* bad : {"0", "-1", "nan", "x", "1000"}) {
    EXPECT_THROW(parse({"--workload", "w", "--policy", "pollux", "--declare-factor", bad}),
                 std::invalid_argument) << bad;
  }
  EXPECT_THROW(parse({"--workload", "w", "--policy", "pollux", "--undeclared-share", "1.5"}),
               std::invalid_argument);
  EXPECT_EQ(messageOf([] { parsePolicyParams("pollux_objective=fast"); }),
            "--params: pollux_objective=fast: must be goodput or jct");
  EXPECT_THROW(parsePolicyParams("pollux_jct_guard=0.5"), std::invalid_argument);
}

TEST(OptionsTest, UndeclaredJobsAreSpreadOverTheWorkload) {
  std::vector<trace::WorkloadJob> workload;
  for (int i = 0; i < 6; ++i) workload.push_back({"j" + std::to_string(i), double(i), "toy", 1, 10});
  EXPECT_TRUE(undeclaredJobs(workload, 0).empty());
  EXPECT_EQ(undeclaredJobs(workload, 0.5), (std::set<std::string>{"j1", "j3", "j5"}));
  EXPECT_EQ(undeclaredJobs(workload, 1).size(), 6u);
}

TEST(OptionsTest, PolicyParamsUseTheSchedulerParameterKeys) {
  const Options options =
      parse({"--workload", "w", "--policy", "pollux", "--jobs", "jobs.csv", "--params",
             "pollux_fairness_p=0.5,pollux_min_change_interval=120,pollux_speed_a100=3"});
  EXPECT_EQ(options.jobs, "jobs.csv");
  EXPECT_DOUBLE_EQ(options.params.fairness_p, 0.5);
  EXPECT_DOUBLE_EQ(options.params.min_change_interval_s, 120);
  EXPECT_DOUBLE_EQ(options.params.relative_speeds.at("a100"), 3);
  EXPECT_DOUBLE_EQ(options.params.restart_threshold, policy::Params{}.restart_threshold);
  EXPECT_EQ(messageOf([] { parsePolicyParams("pollux_rest_port=7000"); })
                .rfind("--params: 'pollux_rest_port' is not a policy key", 0),
            0u);
  EXPECT_EQ(messageOf([] { parsePolicyParams("pollux_fairness_p=2"); }),
            "--params: pollux_fairness_p=2: must be in [-10, 1]");
  EXPECT_THROW(parsePolicyParams("pollux_fairness_p"), std::invalid_argument);
  EXPECT_THROW(parsePolicyParams("pollux_speed_=2"), std::invalid_argument);
}

TEST(ReportTest, JobRowsCarryTheirCompletionTime) {
  const std::string path = testing::makeTempDir() + "/jobs.csv";
  writeJobs(path, {{"j1", "toy", 10, 70, 2, 60, 0, 7200, 30, 45}});
  std::ifstream in(path);
  std::string header, row;
  std::getline(in, header);
  std::getline(in, row);
  EXPECT_EQ(header,
            "name,application,submit_s,completion_s,jct_s,restarts,gpu_hours,isolated_s,fair_share_s,"
            "paused_s");
  EXPECT_EQ(row, "j1,toy,10,70,60,2,2,30,45,60");
  EXPECT_THROW(writeJobs("/nonexistent/dir/jobs.csv", {}), std::runtime_error);
}

TEST(ExperimentTest, BadInputsGiveClearErrors) {
  const std::string profiles = testing::makeToyProfiles();
  const std::string dir = testing::makeTempDir();
  const std::string good = testing::writeFile(dir, "good.csv", kHeader + "j,0,toy,1,10\n");
  const std::map<std::string, double> toy_cost = {{"toy", 5}};
  EXPECT_NO_THROW(loadExperiment(good, profiles, "t4:1x2", toy_cost));
  EXPECT_NE(messageOf([&] { loadExperiment(good, profiles, "t4:1x2", {}); })
                .find("no restart cost for application 'toy'"),
            std::string::npos);
  EXPECT_NE(messageOf([&] { loadExperiment(good, profiles, "t4:1x2", {{"nope", 1}}); })
                .find("unknown application 'nope'"),
            std::string::npos);
  EXPECT_NE(messageOf([&] {
              loadExperiment(good, profiles, "t4:1x2", toy_cost, {{"gpt", 1}});
            }).find("--join-startup names unknown application 'gpt'"),
            std::string::npos);
  const auto joining = loadExperiment(good, profiles, "t4:1x2", toy_cost, {{"toy", 2}});
  EXPECT_DOUBLE_EQ(joining.jobs(Resize::kLive).at(0).joinStartup(), 2);
  EXPECT_DOUBLE_EQ(loadExperiment(good, profiles, "t4:1x2", toy_cost).jobs().at(0).joinStartup(),
                   5);
  const std::string unknown_app = testing::writeFile(dir, "app.csv", kHeader + "j,0,gpt,1,10\n");
  EXPECT_NE(messageOf([&] { loadExperiment(unknown_app, profiles, "t4:1x2", toy_cost); })
                .find("unknown application 'gpt'"),
            std::string::npos);
  const std::string malformed =
      testing::writeFile(dir, "bad.csv", kHeader + "j,0,toy,1,10\nk,1,toy,two,10\n");
  EXPECT_NE(messageOf([&] { loadExperiment(malformed, profiles, "t4:1x2", toy_cost); })
                .find("bad.csv:3:"),
            std::string::npos);
  EXPECT_THROW(loadExperiment(dir + "/missing.csv", profiles, "t4:1x2", toy_cost), std::exception);
  EXPECT_THROW(loadExperiment(good, profiles, "t4:1x", toy_cost), std::invalid_argument);
  EXPECT_THROW(loadExperiment(good, dir + "/none", "t4:1x2", toy_cost), std::invalid_argument);
  testing::writeFile(profiles, "toy/validation-20.csv", "progress,grad_sqr\n1,2\n");
  EXPECT_NE(messageOf([&] { loadExperiment(good, profiles, "t4:1x2", toy_cost); })
                .find("validation-20.csv:1:"),
            std::string::npos);
}

TEST(ExperimentTest, SuffixedProfilesServeTheirGpuType) {
  const std::string profiles = testing::makeToyProfiles();
  testing::writeFile(profiles, "toy/placements-fast.csv",
                     "local_bsz,step_time,sync_time,placement\n10,0.5,0,1\n");
  const std::string workload =
      testing::writeFile(testing::makeTempDir(), "w.csv", kHeader + "j,0,toy,1,10\n");
  const Experiment experiment = loadExperiment(workload, profiles, "t4:1x1,fast:1x1", {{"toy", 0}});
  const trace::Application& toy = experiment.apps.at("toy");
  EXPECT_DOUBLE_EQ(toy.on("t4").timing({1}, 10).step_time, 1.0);
  EXPECT_DOUBLE_EQ(toy.on("fast").timing({1}, 10).step_time, 0.5);
  EXPECT_DOUBLE_EQ(trace::estimateRelativeSpeeds(experiment.apps, {"t4", "fast"}).at("fast"), 2.0);
}

TEST(ExperimentTest, ShippedWorkloadRunsToCompletion) {
  const std::string traces = testing::shippedTraces();
  const Experiment experiment =
      loadExperiment(traces + "/../workloads/workload-1.csv", traces, "t4:16x4", {});
  EXPECT_EQ(experiment.workload.size(), 160u);
  for (const std::string policy : {"fifo", "tiresias"}) {
    std::unique_ptr<Scheduler> scheduler;
    if (policy == "fifo") scheduler = std::make_unique<FifoScheduler>(experiment.cluster);
    if (policy == "tiresias") scheduler = std::make_unique<TiresiasScheduler>(experiment.cluster);
    const Summary summary = summarize(simulate(experiment.cluster, experiment.jobs(), *scheduler, {}));
    EXPECT_EQ(summary.jobs, 160u);
    EXPECT_GT(summary.avg_jct_s, 0);
    EXPECT_GE(summary.p99_jct_s, summary.median_jct_s);
    EXPECT_GE(summary.max_ftf, 1.0) << policy;  // no job beats running alone
    const Json::Value json = summaryJson(policy, summary);
    for (const char* key : {"avg_jct_s", "p99_jct_s", "makespan_s", "restarts_per_job",
                            "gpu_hours_per_job"}) {
      EXPECT_TRUE(json.isMember(key)) << key;
    }
    EXPECT_TRUE(json["round_ms"].isMember("p95"));
    EXPECT_GE(json["max_restarts"].asInt(), 0);
    EXPECT_GT(json["themis_ftf"]["max"].asDouble(), 0);
    EXPECT_GE(json["themis_ftf"]["max"].asDouble(), json["themis_ftf"]["p99"].asDouble());
  }
}

TEST(MetricsTest, QuantilesInterpolate) {
  EXPECT_DOUBLE_EQ(quantile({1, 2, 3, 4, 5}, 0.5), 3);
  EXPECT_DOUBLE_EQ(quantile({1, 2}, 0.5), 1.5);
  EXPECT_DOUBLE_EQ(quantile({}, 0.99), 0);
}

}  // namespace
}  // namespace pollux::sim
