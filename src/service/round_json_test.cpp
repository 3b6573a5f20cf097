// SPDX-License-Identifier: GPL-2.0-or-later
#include "round_json.hpp"

#include <gtest/gtest.h>

#include "common/invalid_input.hpp"

namespace pollux::service {
namespace {

Round sampleRound() {
  Round round;
  round.now = 1000;
  SlurmNode node;
  node.name = "n1";
  node.gpus = GpuGres{"a100", 4};
  node.gpus_used = 2;
  node.free_cpus = 8;
  node.memory_mb = 64000;
  node.free_memory_mb = 32000;
  round.nodes.push_back(node);
  node.name = "g1";
  node.gpus = GpuGres{"", 2};
  node.usable = false;
  node.memory_mb = node.free_memory_mb = std::nullopt;
  round.nodes.push_back(node);
  round.partitions["gpu"] = {"n1", "g1"};
  round.partition_max_time_min["gpu"] = 60;
  round.licenses.push_back({"matlab", 3, 1});
  SlurmJob job;
  job.id = 7;
  job.uid = 1000;
  job.state = JobState::kRunning;
  job.comment = "adaptive:max_gpus=8";
  job.partitions = {"gpu"};
  job.nodes = {"n1"};
  job.batch_host = "n1";
  job.licenses = "matlab:1";
  job.restarts = 3;
  job.num_nodes = 1;
  job.gpu_request.per_node = "gres:gpu:2";
  job.resources.min_cpus_per_node = 4;
  job.resources.mem_per_tres = "gres:gpu:16000";
  readRequests(job);
  round.jobs.push_back(job);
  SlurmQos qos;
  qos.name = "normal";
  qos.max_gpus_per_user = 4;
  qos.grp_tres.memory_mb = 256000;
  qos.per_user_tres.cpus = 32;
  qos.per_job.nodes = 2;
  qos.tres_used = {8, 32000};
  qos.users[1000] = {2, 1, SharedTresUsed{8, 32000, 1}};
  qos.max_gpus_per_account = 8;
  qos.per_account_tres.nodes = 2;
  qos.max_jobs_per_account = 5;
  qos.accounts["acct1"] = {2, 1, SharedTresUsed{8, 32000, 1}};
  round.qos.push_back(qos);
  round.partition_qos["gpu"] = "normal";
  SlurmAssociation association;
  association.id = 3;
  association.account = "acct1";
  association.grp_tres.cpus = 64;
  association.per_job.memory_mb = 128000;
  association.tres_used.cpus = 8;
  round.associations.push_back(association);
  return round;
}

TEST(RoundJsonTest, ARecordedRoundReadsBackAsItWas) {
  RecordedRound recorded{"pollux_interval=10", "pollux_fairness_p=-1\n", true,
                         Json::Value(Json::objectValue), sampleRound()};
  Json::StreamWriterBuilder writer;
  const RecordedRound back =
      parseRecordedRound(Json::writeString(writer, recordedRoundToJson(recorded)));
  EXPECT_EQ(back.scheduler_parameters, "pollux_interval=10");
  EXPECT_EQ(back.pollux_conf, "pollux_fairness_p=-1\n");
  EXPECT_TRUE(back.settling);
  EXPECT_EQ(roundToJson(back.round), roundToJson(recorded.round));
  const SlurmJob& job = back.round.jobs.at(0);
  ASSERT_TRUE(job.adaptive.has_value());  // read from the comment again
  EXPECT_EQ(*job.adaptive->max_gpus, 8);
  EXPECT_EQ(job.restarts, 3u);
  EXPECT_EQ(job.gpus_per_node->count, 2);
  EXPECT_EQ(job.demand.memoryFor(2), 32000);
  EXPECT_FALSE(back.round.nodes.at(1).memory_mb.has_value());
  EXPECT_EQ(back.round.partitions.at("gpu").size(), 2u);
  EXPECT_EQ(back.round.partition_max_time_min.at("gpu"), 60);
  EXPECT_EQ(job.licenses, "matlab:1");
  ASSERT_EQ(back.round.licenses.size(), 1u);
  EXPECT_EQ(back.round.licenses[0].name, "matlab");
  EXPECT_EQ(back.round.licenses[0].available, 3);
  EXPECT_EQ(back.round.licenses[0].reserved, 1);
  ASSERT_EQ(back.round.qos.size(), 1u);
  EXPECT_EQ(back.round.qos[0].grp_tres.memory_mb, 256000);
  EXPECT_FALSE(back.round.qos[0].grp_tres.cpus.has_value());
  EXPECT_EQ(back.round.qos[0].per_user_tres.cpus, 32);
  EXPECT_EQ(back.round.qos[0].per_job.nodes, 2);
  EXPECT_EQ(back.round.qos[0].users.at(1000).tres.memory_mb, 32000);
  EXPECT_EQ(back.round.qos[0].max_gpus_per_account, 8);
  EXPECT_EQ(back.round.qos[0].per_account_tres.nodes, 2);
  EXPECT_EQ(back.round.qos[0].max_jobs_per_account, 5);
  EXPECT_EQ(back.round.qos[0].accounts.at("acct1").tres.cpus, 8);
  EXPECT_EQ(back.round.partition_qos.at("gpu"), "normal");
  ASSERT_EQ(back.round.associations.size(), 1u);
  EXPECT_EQ(back.round.associations[0].grp_tres.cpus, 64);
  EXPECT_EQ(back.round.associations[0].per_job.memory_mb, 128000);
  EXPECT_EQ(back.round.associations[0].tres_used.cpus, 8);
}

TEST(RoundJsonTest, MalformedRoundsAreRefusedNamingTheValue) {
  const RecordedRound recorded{"", "", false, Json::Value(Json::objectValue), sampleRound()};
  Json::Value document = recordedRoundToJson(recorded);
  Json::StreamWriterBuilder writer;
  const auto refusal = [&writer](const Json::Value& bad) {
    try {
      parseRecordedRound(Json::writeString(writer, bad));
    } catch (const InvalidInput& error) {
      return std::string(error.what());
    }
    return std::string("accepted");
  };
  Json::Value bad = document;
  bad["round"]["jobs"][0]["state"] = "finished";
  EXPECT_NE(refusal(bad).find("round.jobs[0].state"), std::string::npos) << refusal(bad);
  bad = document;
  bad["round"]["nodes"][0]["free_cpus"] = -1;
  EXPECT_NE(refusal(bad).find("round.nodes[0].free_cpus"), std::string::npos) << refusal(bad);
  bad = document;
  bad["round"]["nodes"][0]["colour"] = "red";
  EXPECT_NE(refusal(bad).find("colour"), std::string::npos) << refusal(bad);
  bad = document;
  bad["round"]["licenses"][0]["available"] = -1;
  EXPECT_NE(refusal(bad).find("round.licenses[0].available"), std::string::npos) << refusal(bad);
  bad = document;
  bad["version"] = 2;
  EXPECT_NE(refusal(bad).find("version"), std::string::npos) << refusal(bad);
  EXPECT_THROW(parseRecordedRound("{"), InvalidInput);
}

}  // namespace
}  // namespace pollux::service
