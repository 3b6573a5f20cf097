// SPDX-License-Identifier: GPL-2.0-or-later
#include "snapshot_json.hpp"

#include <gtest/gtest.h>

#include "common/invalid_input.hpp"

namespace pollux::schema {
namespace {

const char* const kSnapshot = R"({
  "time": 1000,
  "nodes": [{"name": "n1", "gpu_type": "a100", "gpus": 8, "cpus": 64, "memory_mb": 512000},
            {"name": "n2", "gpu_type": "v100", "gpus": 4}],
  "jobs": [
    {"id": 17, "submit_time": 10, "adaptive": true, "min_gpus": 1, "max_gpus": 8,
     "current": {"gpu_type": "a100", "nodes": {"n1": 2}}, "last_change_time": 500,
     "restarts": 1, "restart_cost_s": 30,
     "models": {"a100": {"alpha_c": 0.1, "beta_c": 0.01, "alpha_n": 0.5, "beta_n": 0.05,
                         "alpha_r": 0.2, "beta_r": 0.02, "gamma": 1.5}},
     "grad_params": {"sqr": 1.0, "var": 3.0}, "init_batch_size": 128,
     "max_batch_size": 4096, "local_bsz_bounds": [16, 256], "accumulation": true,
     "node_demand": {"cpus": 4, "memory_mb_per_gpu": 32000}},
    {"id": "18", "submit_time": 20, "adaptive": false, "min_gpus": 4, "max_gpus": 4,
     "gpu_type": "v100", "partition": "small"}
  ],
  "params": {"fairness_p": -1, "restart_threshold": 0.1, "relative_speeds": {"a100": 3}},
  "partitions": {"small": ["n2"]}
})";

TEST(SnapshotJsonTest, ParsesEveryField) {
  const policy::Snapshot snapshot = parseSnapshot(kSnapshot);
  EXPECT_DOUBLE_EQ(snapshot.time, 1000);
  ASSERT_EQ(snapshot.nodes.size(), 2u);
  EXPECT_EQ(snapshot.nodes[1].gpu_type, "v100");
  EXPECT_EQ(snapshot.nodes[0].cpus, 64);
  EXPECT_EQ(snapshot.nodes[0].memory_mb, 512000);
  EXPECT_FALSE(snapshot.nodes[1].cpus.has_value());
  ASSERT_EQ(snapshot.jobs.size(), 2u);
  const policy::Job& adaptive = snapshot.jobs[0];
  EXPECT_EQ(adaptive.id, "17");
  EXPECT_EQ(adaptive.current->nodes.at("n1"), 2);
  EXPECT_DOUBLE_EQ(adaptive.models.at("a100").gamma, 1.5);
  EXPECT_EQ(adaptive.limits.max_local_bsz, 256);
  EXPECT_TRUE(adaptive.limits.accumulation);
  EXPECT_EQ(adaptive.restarts, 1);
  EXPECT_EQ(adaptive.demand.cpusFor(2), 4);
  EXPECT_EQ(adaptive.demand.memoryFor(2), 64000);
  const policy::Job& rigid = snapshot.jobs[1];
  EXPECT_EQ(rigid.id, "18");
  EXPECT_FALSE(rigid.adaptive);
  EXPECT_EQ(*rigid.gpu_type, "v100");
  EXPECT_FALSE(rigid.current.has_value());
  EXPECT_EQ(*rigid.partition, "small");
  EXPECT_FALSE(adaptive.partition.has_value());
  EXPECT_EQ(snapshot.partitions.at("small"), policy::NodeSet{"n2"});
  EXPECT_EQ(rigid.demand.cpusFor(4), 1);  // Slurm's default: one CPU per node
  EXPECT_DOUBLE_EQ(snapshot.params.restart_threshold, 0.1);
  EXPECT_DOUBLE_EQ(snapshot.params.relative_speeds.at("a100"), 3);
  EXPECT_DOUBLE_EQ(snapshot.params.min_change_interval_s, policy::Params().min_change_interval_s);
}

// Replaces the first occurrence of `from` in the reference snapshot.
std::string withChange(const std::string& from, const std::string& to) {
  std::string text = kSnapshot;
  const auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return text.replace(at, from.size(), to);
}

// Each (snapshot text, expected part of the message) must be refused with that message.
void expectRefused(const std::vector<std::pair<std::string, std::string>>& cases) {
  for (const auto& [text, expected] : cases) {
    try {
      parseSnapshot(text);
      ADD_FAILURE() << "accepted a snapshot that should fail with: " << expected;
    } catch (const InvalidInput& error) {
      EXPECT_NE(std::string(error.what()).find(expected), std::string::npos)
          << "message '" << error.what() << "' lacks '" << expected << "'";
    }
  }
}

TEST(SnapshotJsonTest, BadDocumentsNameThePath) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"{", "malformed JSON"},
      {withChange("\"time\": 1000", "\"time\": -1"), "time: must be >= 0"},
      {withChange("\"gpus\": 8", "\"gpus\": 8.5"), "nodes[0].gpus: must be an integer"},
      {withChange("\"gpus\": 8", "\"gpus\": \"8\""), "nodes[0].gpus: must be a number"},
      {withChange("\"min_gpus\": 1", "\"min_gpus\": 0"), "jobs[0].min_gpus"},
      {withChange("\"max_gpus\": 8", "\"max_gpus\": 0"), "jobs[0].max_gpus"},
      {withChange("\"min_gpus\": 4", "\"min_gpus\": 5"), "above max_gpus"},
      {withChange("\"gamma\": 1.5", "\"gamma\": 11"), "jobs[0].models.a100"},
      {withChange("\"alpha_c\": 0.1", "\"alpha_c\": -0.1"), "alpha_c"},
      {withChange("\"sqr\": 1.0", "\"sqr\": -1.0"), "jobs[0].grad_params.sqr"},
      {withChange("[16, 256]", "[16]"), "jobs[0].local_bsz_bounds"},
      {withChange("[16, 256]", "[0, 256]"), "jobs[0].local_bsz_bounds[0]"},
      {withChange("\"max_batch_size\": 4096", "\"max_batch_size\": 64"), "max_batch_size"},
      {withChange("\"restarts\": 1", "\"restarts\": 1, \"colour\": 1"), "unknown key 'colour'"},
      {withChange("\"id\": 17", "\"id\": -17"), "jobs[0].id"},
      {withChange("\"n1\": 2", "\"n1\": 0"), "jobs[0].current.nodes.n1"},
      {withChange("\"cpus\": 64", "\"cpus\": -1"), "nodes[0].cpus"},
      {withChange("\"memory_mb\": 512000", "\"memory_mb\": 1.5"), "nodes[0].memory_mb"},
      {withChange("\"cpus\": 4", "\"cpus\": 0"), "jobs[0].node_demand.cpus"},
      {withChange("\"cpus\": 4", "\"cpu\": 4"), "unknown key 'cpu'"},
      {withChange("\"memory_mb_per_gpu\": 32000", "\"memory_mb_per_gpu\": -1"),
       "jobs[0].node_demand.memory_mb_per_gpu"},
      {withChange("\"adaptive\": true", "\"adaptive\": 1"), "jobs[0].adaptive"},
      {withChange("\"time\": 1000,", ""), "missing required key 'time'"},
      {withChange("\"time\": 1000", "\"time\": 1000, \"time\": 5"), "malformed JSON"},
      {withChange("\"relative_speeds\": {\"a100\": 3}", "\"relative_speeds\": {\"a100\": 0}"),
       "params.relative_speeds.a100"},
      {std::string(kSnapshot) + " []", "malformed JSON"},
      {withChange("[\"n2\"]", "\"n2\""), "partitions.small: must be an array"},
      {withChange("[\"n2\"]", "[2]"), "partitions.small[0]"},
      {withChange("\"partition\": \"small\"", "\"partition\": \"\""), "jobs[1].partition"},
      {withChange("\"last_change_time\": 500",
                  "\"parts\": [{\"gpu_type\": \"a100\", \"nodes\": {\"n2\": 2}}], "
                  "\"last_change_time\": 500"),
       "jobs[0].parts[0]: a part lies within current"},
  };
  expectRefused(cases);
}

TEST(SnapshotJsonTest, OldSnapshotsHaveNoLengthAndDefaultObjective) {
  const policy::Snapshot snapshot = parseSnapshot(kSnapshot);
  EXPECT_FALSE(snapshot.jobs[0].length.has_value());
  EXPECT_FALSE(snapshot.jobs[1].length.has_value());
  EXPECT_EQ(snapshot.params.objective, policy::Params().objective);
  EXPECT_DOUBLE_EQ(snapshot.params.jct_guard, policy::Params().jct_guard);
}

TEST(SnapshotJsonTest, DeclaredLengthAndObjectiveKeys) {
  std::string text = withChange("\"restarts\": 1,",
                                "\"restarts\": 1, \"progress\": 1500.5, \"target_progress\": 64000,");
  const auto at = text.find("\"fairness_p\": -1");
  text.replace(at, 16, "\"fairness_p\": -1, \"objective\": \"goodput\", \"jct_guard\": 1.5");
  const policy::Snapshot snapshot = parseSnapshot(text);
  ASSERT_TRUE(snapshot.jobs[0].length.has_value());
  EXPECT_DOUBLE_EQ(snapshot.jobs[0].length->progress, 1500.5);
  EXPECT_DOUBLE_EQ(snapshot.jobs[0].length->target, 64000);
  EXPECT_DOUBLE_EQ(snapshot.jobs[0].length->remaining(), 62499.5);
  EXPECT_FALSE(snapshot.jobs[1].length.has_value());
  EXPECT_EQ(snapshot.params.objective, policy::Objective::kGoodput);
  EXPECT_DOUBLE_EQ(snapshot.params.jct_guard, 1.5);
  // Progress at or beyond the target is read as written: the policy schedules it undeclared.
  const policy::Snapshot done = parseSnapshot(
      withChange("\"restarts\": 1,", "\"restarts\": 1, \"progress\": 9, \"target_progress\": 8,"));
  EXPECT_DOUBLE_EQ(done.jobs[0].length->progress, 9);
  EXPECT_EQ(parseSnapshot(withChange("\"fairness_p\": -1", "\"objective\": \"jct\""))
                .params.objective,
            policy::Objective::kJct);
}

TEST(SnapshotJsonTest, BadLengthAndObjectiveKeysNameThePath) {
  const auto job = [](const std::string& keys) {
    return withChange("\"restarts\": 1,", "\"restarts\": 1, " + keys + ",");
  };
  const auto params = [](const std::string& keys) {
    return withChange("\"fairness_p\": -1", keys);
  };
  const std::vector<std::pair<std::string, std::string>> cases = {
      {job("\"progress\": 10"), "jobs[0]: progress and target_progress come together"},
      {job("\"target_progress\": 10"), "jobs[0]: progress and target_progress come together"},
      {job("\"progress\": -1, \"target_progress\": 10"), "jobs[0].progress: must be >= 0"},
      {job("\"progress\": 1, \"target_progress\": 0"), "jobs[0].target_progress: must be > 0"},
      {job("\"progress\": 1, \"target_progress\": -5"), "jobs[0].target_progress"},
      {job("\"progress\": 1, \"target_progress\": \"9\""), "jobs[0].target_progress: must be a number"},
      {job("\"progress\": 1, \"target_progress\": 1e999"), "malformed JSON"},
      {params("\"objective\": \"fast\""), "params.objective: must be \"goodput\" or \"jct\""},
      {params("\"objective\": 1"), "params.objective: must be a string"},
      {params("\"jct_guard\": 0.5"), "params.jct_guard: must be >= 1"},
      {params("\"jct_guard\": \"2\""), "params.jct_guard: must be a number"},
  };
  expectRefused(cases);
}

std::string written(const policy::Snapshot& snapshot) {
  return Json::writeString(Json::StreamWriterBuilder(), snapshotToJson(snapshot));
}

TEST(SnapshotJsonTest, RoundTripsWithAndWithoutTheOptionalKeys) {
  const policy::Snapshot plain = parseSnapshot(kSnapshot);
  const Json::Value plain_json = snapshotToJson(plain);
  EXPECT_FALSE(plain_json["jobs"][0].isMember("progress"));
  EXPECT_FALSE(plain_json["jobs"][0].isMember("target_progress"));
  const policy::Snapshot again = parseSnapshot(written(plain));
  EXPECT_EQ(snapshotToJson(again), plain_json);
  EXPECT_EQ(again.jobs[0].models.at("a100").gamma, 1.5);
  EXPECT_EQ(again.jobs[0].demand.memoryFor(2), 64000);
  EXPECT_EQ(*again.jobs[1].partition, "small");
  EXPECT_EQ(again.partitions.at("small"), policy::NodeSet{"n2"});
  EXPECT_EQ(again.nodes[0].memory_mb, 512000);
  EXPECT_FALSE(again.jobs[0].length.has_value());

  policy::Snapshot declared = plain;
  declared.jobs[0].length = policy::DeclaredLength{123.25, 4096};
  declared.params.objective = policy::Objective::kGoodput;
  declared.params.jct_guard = 3;
  const Json::Value declared_json = snapshotToJson(declared);
  EXPECT_EQ(declared_json["jobs"][0]["progress"].asDouble(), 123.25);
  EXPECT_EQ(declared_json["jobs"][0]["target_progress"].asDouble(), 4096);
  EXPECT_EQ(declared_json["params"]["objective"].asString(), "goodput");
  EXPECT_EQ(declared_json["params"]["jct_guard"].asDouble(), 3);
  const policy::Snapshot parsed = parseSnapshot(written(declared));
  ASSERT_TRUE(parsed.jobs[0].length.has_value());
  EXPECT_EQ(parsed.jobs[0].length->progress, 123.25);
  EXPECT_EQ(parsed.jobs[0].length->target, 4096);
  EXPECT_FALSE(parsed.jobs[1].length.has_value());
  EXPECT_EQ(parsed.params.objective, policy::Objective::kGoodput);
  EXPECT_EQ(parsed.params.jct_guard, 3);
  EXPECT_EQ(snapshotToJson(parsed), declared_json);
}

// The reference snapshot with three budgets, job 17 in two and job 18 in one and, at 8 CPUs
// per GPU, in a CPU budget.
std::string withBudgets() {
  std::string text = withChange(
      "\"partitions\": {\"small\": [\"n2\"]}",
      "\"partitions\": {\"small\": [\"n2\"]},"
      " \"budgets\": {\"qos:gpu2:user:1000\": 2, \"account:physics\": 16,"
      " \"account:physics/cpu\": 64}");
  text.replace(text.find("\"restarts\": 1,"), 14,
               "\"restarts\": 1, \"budgets\": [\"qos:gpu2:user:1000\", \"account:physics\"],");
  text.replace(text.find("\"partition\": \"small\""), 20,
               "\"partition\": \"small\", \"budgets\": [\"account:physics\","
               " {\"name\": \"account:physics/cpu\", \"per_gpu\": 8}]");
  return text;
}

TEST(SnapshotJsonTest, LiveChangeFieldsAreOptionalAndRoundTrip) {
  policy::Snapshot snapshot = parseSnapshot(kSnapshot);
  EXPECT_FALSE(snapshot.jobs[0].live_resize_cost_s);  // an older snapshot
  EXPECT_FALSE(snapshotToJson(snapshot)["jobs"][0].isMember("live_resize_cost_s"));
  snapshot.jobs[0].live_resize_cost_s = 0.5;
  const policy::Snapshot again = parseSnapshot(written(snapshot));
  EXPECT_EQ(again.jobs[0].live_resize_cost_s, 0.5);
  // What the policy knows of a job's changes: whether it grows live, its joiners' start-up,
  // the seconds it lost, what it held before its last change, what its part holds and what
  // its old parts hold until a move has left them.
  snapshot.jobs[0].grows_live = true;
  snapshot.jobs[0].moves_live = true;
  snapshot.jobs[0].join_startup_s = 4;
  snapshot.jobs[0].lost_s = 12.5;
  snapshot.jobs[0].previous = policy::Allocation{"a100", {{"n1", 2}}};
  snapshot.jobs[0].current = policy::Allocation{"a100", {{"n1", 2}, {"n2", 2}, {"n3", 2}}};
  snapshot.jobs[0].parts = {policy::Allocation{"a100", {{"n2", 2}}},
                            policy::Allocation{"a100", {{"n3", 2}}}};
  snapshot.jobs[0].batch_hosts = {"n2", "n3"};
  snapshot.jobs[0].leaving = policy::Allocation{"v100", {{"n4", 2}}};
  const policy::Snapshot changes = parseSnapshot(written(snapshot));
  EXPECT_TRUE(changes.jobs[0].grows_live);
  EXPECT_TRUE(changes.jobs[0].moves_live);
  EXPECT_EQ(changes.jobs[0].join_startup_s, 4);
  EXPECT_EQ(changes.jobs[0].lost_s, 12.5);
  EXPECT_EQ(changes.jobs[0].previous, snapshot.jobs[0].previous);
  EXPECT_EQ(changes.jobs[0].parts, snapshot.jobs[0].parts);
  EXPECT_EQ(changes.jobs[0].batch_hosts, snapshot.jobs[0].batch_hosts);
  EXPECT_EQ(changes.jobs[0].leaving, snapshot.jobs[0].leaving);
}

TEST(SnapshotJsonTest, BudgetsRoundTrip) {
  const policy::Snapshot snapshot = parseSnapshot(withBudgets());
  EXPECT_EQ(snapshot.budgets, (std::map<std::string, std::int64_t>{
                                  {"qos:gpu2:user:1000", 2},
                                  {"account:physics", 16},
                                  {"account:physics/cpu", 64}}));
  EXPECT_EQ(snapshot.jobs[0].budgets,
            (std::vector<policy::BudgetUse>{{"qos:gpu2:user:1000", 1}, {"account:physics", 1}}));
  EXPECT_EQ(snapshot.jobs[1].budgets,
            (std::vector<policy::BudgetUse>{{"account:physics", 1}, {"account:physics/cpu", 8}}));
  const Json::Value json = snapshotToJson(snapshot);
  EXPECT_EQ(json["budgets"]["qos:gpu2:user:1000"].asInt(), 2);
  EXPECT_EQ(json["jobs"][1]["budgets"][0].asString(), "account:physics");
  EXPECT_EQ(json["jobs"][1]["budgets"][1]["per_gpu"].asInt(), 8);
  const policy::Snapshot again = parseSnapshot(written(snapshot));
  EXPECT_EQ(again.budgets, snapshot.budgets);
  EXPECT_EQ(again.jobs[0].budgets, snapshot.jobs[0].budgets);
  EXPECT_EQ(again.jobs[1].budgets, snapshot.jobs[1].budgets);
  EXPECT_EQ(snapshotToJson(again), json);
}

TEST(SnapshotJsonTest, OldSnapshotsHaveNoBudgets) {
  const policy::Snapshot snapshot = parseSnapshot(kSnapshot);
  EXPECT_TRUE(snapshot.budgets.empty());
  EXPECT_TRUE(snapshot.jobs[0].budgets.empty());
  const Json::Value json = snapshotToJson(snapshot);
  EXPECT_FALSE(json.isMember("budgets"));
  EXPECT_FALSE(json["jobs"][0].isMember("budgets"));
}

TEST(SnapshotJsonTest, BadBudgetsNameThePath) {
  const std::string text = withBudgets();
  const auto changed = [&text](const std::string& from, const std::string& to) {
    std::string copy = text;
    return copy.replace(copy.find(from), from.size(), to);
  };
  const std::vector<std::pair<std::string, std::string>> cases = {
      {changed("[\"account:physics\",", "[\"account:chemistry\","),
       "jobs[1].budgets[0]: unknown budget 'account:chemistry' (not in the snapshot's budgets)"},
      {withChange("\"restarts\": 1,", "\"restarts\": 1, \"budgets\": [\"qos:normal\"],"),
       "jobs[0].budgets[0]: unknown budget 'qos:normal'"},
      {changed("\"account:physics\"]", "\"qos:gpu2:user:1000\"]"),
       "jobs[0].budgets[1]: budget 'qos:gpu2:user:1000' is named twice"},
      {changed("\"account:physics\": 16", "\"account:physics\": -1"),
       "budgets.account:physics"},
      {changed("\"account:physics\": 16", "\"account:physics\": 1.5"),
       "budgets.account:physics: must be an integer"},
      {changed("\"account:physics\": 16", "\"account:physics\": 16, \"\": 1"),
       "budgets: a budget has an empty name"},
      {changed("{\"qos:gpu2:user:1000\": 2,", "[2,"), "malformed JSON"},
      {changed("\"per_gpu\": 8", "\"per_gpu\": -1"), "jobs[1].budgets[1].per_gpu"},
      {changed("\"per_gpu\": 8", "\"per_gpu\": 0"),
       "jobs[1].budgets[1]: takes nothing of budget 'account:physics/cpu'"},
      {changed("\"per_gpu\": 8", "\"per_cpu\": 8"), "jobs[1].budgets[1]"},
      {changed("[\"account:physics\",", "[7,"), "jobs[1].budgets[0]: must be an object"},
  };
  expectRefused(cases);
}

TEST(SnapshotJsonTest, DecisionHasTheDocumentedKeys) {
  policy::Decision decision;
  decision.allocations["17"] = {{"a100", {{"n1", 4}}}, 512, 64, 1, std::nullopt};
  decision.stats.solve_ms = 2.5;
  decision.stats.solver_status = "optimal";
  const Json::Value out = decisionToJson(decision);
  const Json::Value& job = out["allocations"]["17"];
  EXPECT_EQ(job["gpu_type"].asString(), "a100");
  EXPECT_EQ(job["nodes"]["n1"].asInt(), 4);
  EXPECT_EQ(job["batch_size"].asInt64(), 512);
  EXPECT_EQ(job["local_bsz"].asInt(), 64);
  EXPECT_EQ(job["accum_steps"].asInt(), 1);
  EXPECT_DOUBLE_EQ(out["stats"]["solve_ms"].asDouble(), 2.5);
  EXPECT_EQ(out["stats"]["solver_status"].asString(), "optimal");
  EXPECT_FALSE(out["stats"]["kept_current"].asBool());
  EXPECT_FALSE(job.isMember("remaining_s"));  // no declared length, no estimate
  EXPECT_FALSE(job.isMember("restarted_for"));
}

TEST(SnapshotJsonTest, DecisionCarriesTheRemainingTimeOfDeclaredJobs) {
  policy::Decision decision;
  decision.allocations["17"] = {{"a100", {{"n1", 4}}}, 512, 64, 1, 3600.5};
  EXPECT_DOUBLE_EQ(decisionToJson(decision)["allocations"]["17"]["remaining_s"].asDouble(), 3600.5);
}

TEST(SnapshotJsonTest, DecisionNamesTheJobAMoveByRequeueIsFor) {
  policy::Decision decision;
  decision.allocations["17"] = {{"a100", {{"n2", 4}}}, 512, 64, 1, std::nullopt, "18"};
  EXPECT_EQ(decisionToJson(decision)["allocations"]["17"]["restarted_for"].asString(), "18");
}

}  // namespace
}  // namespace pollux::schema
