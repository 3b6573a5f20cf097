// SPDX-License-Identifier: GPL-2.0-or-later
#include "goodput_report.hpp"

#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "common/invalid_input.hpp"
#include "json_reader.hpp"

namespace pollux::schema {
namespace {

const char* const kReport = R"({
  "job_id": 1234, "gpu_type": "a100", "num_nodes": 2, "num_replicas": 8,
  "perf_params": {
    "a100": {"alpha_c": 0.1, "beta_c": 0.01, "alpha_n": 0.5, "beta_n": 0.05,
             "alpha_r": 0.2, "beta_r": 0.02, "gamma": 1.5},
    "v100": {"alpha_c": 0.3, "beta_c": 0.03, "alpha_n": 0.6, "beta_n": 0.06,
             "alpha_r": 0.25, "beta_r": 0.025, "gamma": 2}},
  "grad_params": {"sqr": 1.5, "var": 30},
  "init_batch_size": 128, "max_batch_size": 4096, "local_bsz_bounds": [16, 256],
  "accumulation": true,
  "progress": {"examples": 640000, "epochs": 12.5},
  "restart_cost_s": 42.5
})";

// kReport with `key` (a top-level key or "outer.inner") set to the JSON text `value`, or
// removed when `value` is empty.
std::string reportWith(const std::string& key, const std::string& value) {
  Json::Value document = JsonField::parseDocument(kReport);
  Json::Value* parent = &document;
  std::string leaf = key;
  if (const auto dot = key.find('.'); dot != std::string::npos) {
    parent = &document[key.substr(0, dot)];
    leaf = key.substr(dot + 1);
  }
  if (value.empty()) {
    parent->removeMember(leaf);
  } else {
    (*parent)[leaf] = JsonField::parseDocument(value);
  }
  return Json::writeString(Json::StreamWriterBuilder(), document);
}

// kReport with the first occurrence of `from` replaced by `to`, for values JSON cannot hold.
std::string reportReplacing(const std::string& from, const std::string& to) {
  std::string text = kReport;
  return text.replace(text.find(from), from.size(), to);
}

void expectSamePerfParams(const model::PerfParams& a, const model::PerfParams& b) {
  EXPECT_EQ(a.alpha_c, b.alpha_c);
  EXPECT_EQ(a.beta_c, b.beta_c);
  EXPECT_EQ(a.alpha_n, b.alpha_n);
  EXPECT_EQ(a.beta_n, b.beta_n);
  EXPECT_EQ(a.alpha_r, b.alpha_r);
  EXPECT_EQ(a.beta_r, b.beta_r);
  EXPECT_EQ(a.gamma, b.gamma);
}

void expectSameReport(const GoodputReport& a, const GoodputReport& b) {
  EXPECT_EQ(a.job_id, b.job_id);
  EXPECT_EQ(a.gpu_type, b.gpu_type);
  EXPECT_EQ(a.placement.num_nodes, b.placement.num_nodes);
  EXPECT_EQ(a.placement.num_replicas, b.placement.num_replicas);
  ASSERT_EQ(a.perf_params.size(), b.perf_params.size());
  for (const auto& [type, params] : a.perf_params) {
    ASSERT_EQ(b.perf_params.count(type), 1u) << type;
    expectSamePerfParams(params, b.perf_params.at(type));
  }
  EXPECT_EQ(a.grad.sqr, b.grad.sqr);
  EXPECT_EQ(a.grad.var, b.grad.var);
  EXPECT_EQ(a.limits.init_batch_size, b.limits.init_batch_size);
  EXPECT_EQ(a.limits.max_batch_size, b.limits.max_batch_size);
  EXPECT_EQ(a.limits.min_local_bsz, b.limits.min_local_bsz);
  EXPECT_EQ(a.limits.max_local_bsz, b.limits.max_local_bsz);
  EXPECT_EQ(a.limits.accumulation, b.limits.accumulation);
  EXPECT_EQ(a.progress.examples, b.progress.examples);
  EXPECT_EQ(a.progress.epochs, b.progress.epochs);
  EXPECT_EQ(a.restart_cost_s, b.restart_cost_s);
  EXPECT_EQ(a.in_place_resize, b.in_place_resize);
  EXPECT_EQ(a.elastic, b.elastic);
  EXPECT_EQ(a.training_finished, b.training_finished);
  ASSERT_EQ(a.length.has_value(), b.length.has_value());
  if (a.length) {
    EXPECT_EQ(a.length->progress, b.length->progress);
    EXPECT_EQ(a.length->target, b.length->target);
  }
}

TEST(GoodputReportTest, ParsesEveryField) {
  const GoodputReport report = parseGoodputReport(kReport);
  EXPECT_EQ(report.job_id, "1234");
  EXPECT_EQ(report.gpu_type, "a100");
  EXPECT_EQ(report.placement.num_nodes, 2);
  EXPECT_EQ(report.placement.num_replicas, 8);
  ASSERT_EQ(report.perf_params.size(), 2u);
  expectSamePerfParams(report.perf_params.at("a100"), {0.1, 0.01, 0.5, 0.05, 0.2, 0.02, 1.5});
  expectSamePerfParams(report.perf_params.at("v100"), {0.3, 0.03, 0.6, 0.06, 0.25, 0.025, 2});
  EXPECT_EQ(report.grad.sqr, 1.5);
  EXPECT_EQ(report.grad.var, 30);
  EXPECT_EQ(report.limits.init_batch_size, 128);
  EXPECT_EQ(report.limits.max_batch_size, 4096);
  EXPECT_EQ(report.limits.min_local_bsz, 16);
  EXPECT_EQ(report.limits.max_local_bsz, 256);
  EXPECT_TRUE(report.limits.accumulation);
  EXPECT_EQ(report.progress.examples, 640000);
  EXPECT_EQ(report.progress.epochs, 12.5);
  EXPECT_EQ(report.restart_cost_s, 42.5);
}

TEST(GoodputReportTest, AcceptsStringJobIdAndOptionalParts) {
  EXPECT_EQ(parseGoodputReport(reportWith("job_id", R"("1234_7")")).job_id, "1234_7");
  EXPECT_FALSE(parseGoodputReport(reportWith("restart_cost_s", "")).restart_cost_s);
  EXPECT_FALSE(parseGoodputReport(reportWith("in_place_resize", "")).in_place_resize);
  EXPECT_FALSE(parseGoodputReport(kReport).resize_stall_s);  // an older agent's report
  EXPECT_EQ(parseGoodputReport(reportWith("resize_stall_s", "0.25")).resize_stall_s, 0.25);
  EXPECT_THROW(parseGoodputReport(reportWith("resize_stall_s", "-1")), InvalidInput);
  EXPECT_EQ(reportToJson(parseGoodputReport(reportWith("resize_stall_s", "0.25")))
                ["resize_stall_s"].asDouble(), 0.25);
  EXPECT_FALSE(parseGoodputReport(kReport).join_startup_s);  // an older agent's report
  EXPECT_EQ(parseGoodputReport(reportWith("join_startup_s", "3.5")).join_startup_s, 3.5);
  EXPECT_THROW(parseGoodputReport(reportWith("join_startup_s", "-1")), InvalidInput);
  EXPECT_THROW(parseGoodputReport(reportWith("join_startup_s", R"("3")")), InvalidInput);
  EXPECT_EQ(reportToJson(parseGoodputReport(reportWith("join_startup_s", "3.5")))["join_startup_s"]
                .asDouble(),
            3.5);
  EXPECT_TRUE(parseGoodputReport(reportWith("in_place_resize", "true")).in_place_resize);
  EXPECT_FALSE(parseGoodputReport(kReport).elastic);  // an older agent's report
  EXPECT_TRUE(parseGoodputReport(reportWith("elastic", "true")).elastic);
  EXPECT_THROW(parseGoodputReport(reportWith("elastic", "1")), InvalidInput);
  EXPECT_FALSE(parseGoodputReport(kReport).training_finished);  // an older agent's report
  EXPECT_TRUE(parseGoodputReport(reportWith("training_finished", "true")).training_finished);
  EXPECT_THROW(parseGoodputReport(reportWith("training_finished", "1")), InvalidInput);
  EXPECT_TRUE(parseGoodputReport(reportWith("perf_params", "{}")).perf_params.empty());
  // Just moved to a type without a fit there yet: the plugin estimates it.
  EXPECT_EQ(parseGoodputReport(reportWith("gpu_type", R"("h100")")).gpu_type, "h100");
}

TEST(GoodputReportTest, LengthIsOptional) {
  EXPECT_FALSE(parseGoodputReport(kReport).length.has_value());  // an older agent's report
  EXPECT_FALSE(parseGoodputReport(reportWith("length", "null")).length.has_value());
  const GoodputReport declared = parseGoodputReport(
      reportWith("length", R"({"progress": 512000.5, "target_progress": 1.28e6})"));
  ASSERT_TRUE(declared.length.has_value());
  EXPECT_EQ(declared.length->progress, 512000.5);
  EXPECT_EQ(declared.length->target, 1.28e6);
  // Done (progress reached the target): still a valid report; the plugin sends it undeclared.
  const GoodputReport done = parseGoodputReport(
      reportWith("length", R"({"progress": 2e6, "target_progress": 1.28e6})"));
  EXPECT_EQ(done.length->progress, 2e6);
  EXPECT_EQ(parseGoodputReport(reportWith("length", R"({"progress": 0, "target_progress": 1})"))
                .length->progress,
            0);
}

TEST(GoodputReportTest, MalformedLengthIsRefusedNamingTheKey) {
  const std::vector<std::pair<std::string, std::string>> cases = {  // length, expected message
      {"5", "length: must be an object"},
      {"[]", "length: must be an object"},
      {R"({"progress": 1})", "length: missing required key 'target_progress'"},
      {R"({"target_progress": 1})", "length: missing required key 'progress'"},
      {R"({"progress": -1, "target_progress": 10})", "length.progress: must be >= 0"},
      {R"({"progress": 1, "target_progress": 0})", "length.target_progress: must be > 0"},
      {R"({"progress": 1, "target_progress": -10})", "length.target_progress: must be > 0"},
      {R"({"progress": 1, "target_progress": "10"})", "length.target_progress: must be a number"},
      {R"({"progress": true, "target_progress": 10})", "length.progress: must be a number"},
      {R"({"progress": 1, "target_progress": 10, "epochs": 3})", "length: unknown key 'epochs'"},
  };
  for (const auto& [length, expected] : cases) {
    try {
      parseGoodputReport(reportWith("length", length));
      ADD_FAILURE() << "accepted length " << length;
    } catch (const InvalidInput& error) {
      EXPECT_NE(std::string(error.what()).find(expected), std::string::npos)
          << "message '" << error.what() << "' lacks '" << expected << "'";
    }
  }
  const std::string infinite = reportReplacing(
      "\"restart_cost_s\": 42.5", "\"length\": {\"progress\": 1, \"target_progress\": 1e999}");
  EXPECT_THROW(parseGoodputReport(infinite), InvalidInput);
}

TEST(GoodputReportTest, RejectsBadValuesNamingTheirPath) {
  const std::string bad_gamma = R"({"alpha_c": 0.1, "beta_c": 0.01, "alpha_n": 0.5,
      "beta_n": 0.05, "alpha_r": 0.2, "beta_r": 0.02, "gamma": 11})";
  const std::vector<std::pair<std::string, std::string>> cases = {  // body, expected path
      {"{\"job_id\": 1,", "malformed JSON"},
      {"[]", "document"},
      {reportWith("jobid", "1"), "unknown key 'jobid'"},
      {reportWith("job_id", ""), "missing required key 'job_id'"},
      {reportWith("job_id", "-3"), "job_id"},
      {reportWith("job_id", R"("")"), "job_id"},
      {reportWith("gpu_type", R"("")"), "gpu_type"},
      {reportWith("gpu_type", "7"), "gpu_type"},
      {reportWith("num_nodes", "0"), "num_nodes"},
      {reportWith("num_nodes", "1.5"), "num_nodes"},
      {reportWith("num_replicas", "1"), "num_replicas"},
      {reportWith("perf_params", "[]"), "perf_params"},
      {reportWith("perf_params", R"({"": {}})"), "perf_params"},
      {reportWith("perf_params.a100", bad_gamma), "perf_params.a100"},
      {reportWith("perf_params.v100", R"({"alpha_c": 1})"), "perf_params.v100"},
      {reportWith("grad_params.sqr", "-1"), "grad_params.sqr"},
      {reportWith("grad_params.var", R"("3")"), "grad_params.var"},
      {reportWith("grad_params.norm", "3"), "grad_params: unknown key 'norm'"},
      {reportWith("init_batch_size", "0"), "init_batch_size"},
      {reportWith("max_batch_size", "64"), "max_batch_size"},
      {reportWith("local_bsz_bounds", "[16]"), "local_bsz_bounds"},
      {reportWith("local_bsz_bounds", "[256, 16]"), "local_bsz_bounds"},
      {reportWith("local_bsz_bounds", "[16, null]"), "local_bsz_bounds[1]"},
      {reportWith("accumulation", "1"), "accumulation"},
      {reportWith("progress.examples", "-5"), "progress.examples"},
      {reportReplacing("12.5", "1e999"), "malformed JSON"},
      {reportReplacing("12.5", "NaN"), "malformed JSON"},
      {reportWith("progress.epochs", ""), "progress: missing required key 'epochs'"},
      {reportWith("restart_cost_s", "-0.5"), "restart_cost_s"},
      {reportWith("in_place_resize", "1"), "in_place_resize"},
  };
  for (const auto& [body, path] : cases) {
    try {
      parseGoodputReport(body);
      ADD_FAILURE() << "accepted: " << body;
    } catch (const InvalidInput& error) {
      EXPECT_NE(std::string(error.what()).find(path), std::string::npos)
          << "message '" << error.what() << "' does not name " << path;
    }
  }
}

TEST(GoodputReportTest, RoundTripsThroughJson) {
  const GoodputReport original = parseGoodputReport(kReport);
  const std::string body = Json::writeString(Json::StreamWriterBuilder(), reportToJson(original));
  expectSameReport(parseGoodputReport(body), original);

  GoodputReport fresh = original;
  fresh.perf_params.clear();
  fresh.restart_cost_s.reset();
  fresh.progress = {0, 0};
  const Json::Value json = reportToJson(fresh);
  EXPECT_FALSE(json.isMember("restart_cost_s"));
  EXPECT_FALSE(json.isMember("in_place_resize"));  // as older agents send it
  EXPECT_TRUE(json["perf_params"].isObject());
  expectSameReport(parseGoodputReport(Json::writeString(Json::StreamWriterBuilder(), json)),
                   fresh);

  GoodputReport declared = original;
  declared.length = policy::DeclaredLength{1234.5, 1e6};
  const Json::Value declared_json = reportToJson(declared);
  EXPECT_EQ(declared_json["length"]["progress"].asDouble(), 1234.5);
  EXPECT_EQ(declared_json["length"]["target_progress"].asDouble(), 1e6);
  EXPECT_EQ(declared_json["length"].size(), 2u);
  EXPECT_FALSE(reportToJson(original).isMember("length"));  // undeclared: as older agents
  expectSameReport(parseGoodputReport(Json::writeString(Json::StreamWriterBuilder(),
                                                        declared_json)),
                   declared);

  GoodputReport launched = original;
  launched.in_place_resize = true;
  launched.elastic = true;
  launched.training_finished = true;
  expectSameReport(parseGoodputReport(Json::writeString(Json::StreamWriterBuilder(),
                                                        reportToJson(launched))),
                   launched);
}

TEST(GoodputReportTest, ReplyAnnouncesAPendingShrinkInPlaceOnly) {
  ReportReply reply{1024, 64, 1, 2.5, policy::Allocation{"a100", {{"n1", 4}}}};
  EXPECT_FALSE(replyToJson(reply).isMember("shrink_in_place"));  // as before: older agents
  EXPECT_FALSE(parseReportReply(Json::writeString(Json::StreamWriterBuilder(), replyToJson(reply)))
                   .shrink_in_place);
  reply.shrink_in_place = true;
  EXPECT_TRUE(parseReportReply(Json::writeString(Json::StreamWriterBuilder(), replyToJson(reply)))
                  .shrink_in_place);
}

TEST(GoodputReportTest, ReplyCarriesTheJobsPartOnlyWhereItHasOne) {
  ReportReply reply{1024, 64, 1, 2.5, policy::Allocation{"a100", {{"n1", 4}}}};
  const auto roundTrip = [](const ReportReply& sent) {
    return parseReportReply(Json::writeString(Json::StreamWriterBuilder(), replyToJson(sent)));
  };
  EXPECT_FALSE(replyToJson(reply).isMember("part"));
  EXPECT_FALSE(roundTrip(reply).part);
  for (const PartStatus& part :
       {PartStatus{PartStatus::State::kWanted, 0, {}},
        PartStatus{PartStatus::State::kPending, 12, {}},
        PartStatus{PartStatus::State::kRunning, 12, {"n2", "n3"}},
        PartStatus{PartStatus::State::kRunning, 12, {"n2"}, {}, 2},
        PartStatus{PartStatus::State::kRunning, 12, {"n2"}, {}, 2, "v100"},
        PartStatus{PartStatus::State::kLeaving, 12, {"n2"}},
        PartStatus{PartStatus::State::kLeaving, 12, {"n2", "n3"}, {"n3"}, 4}}) {
    reply.part = part;
    EXPECT_EQ(roundTrip(reply).part, part);
  }
  EXPECT_EQ(replyToJson(reply)["part"]["state"].asString(), "leaving");
  const std::string base = R"({"batch_size": 1, "local_bsz": 1, "accum_steps": 0, "lr_scale": 1,
                                "part": )";
  EXPECT_THROW(parseReportReply(base + R"({"state": "sleeping"}})"), InvalidInput);
  EXPECT_THROW(parseReportReply(base + R"({"state": "pending"}})"), InvalidInput);
  EXPECT_THROW(parseReportReply(base + R"({"state": "running", "job_id": 3, "nodes": []}})"),
               InvalidInput);
  // The nodes whose workers leave are some, not all, of the part's.
  const std::string leaving = R"({"state": "leaving", "job_id": 3, "nodes": ["n2", "n3"], )";
  EXPECT_THROW(parseReportReply(base + leaving + R"("leaving_nodes": ["n4"]}})"), InvalidInput);
  EXPECT_THROW(parseReportReply(base + leaving + R"("leaving_nodes": ["n2", "n3"]}})"),
               InvalidInput);
  EXPECT_THROW(parseReportReply(base + leaving + R"("gpus_per_node": 0}})"), InvalidInput);
  // From plugins older than the key: as many as the job has on each node.
  EXPECT_EQ(parseReportReply(base + leaving + "}}").part->gpus_per_node, 0);
  EXPECT_TRUE(parseReportReply(base + leaving + "}}").part->gpu_type.empty());
  EXPECT_THROW(parseReportReply(base + leaving + R"("gpu_type": 2}})"), InvalidInput);
}

TEST(GoodputReportTest, ReplyCarriesDecisionAndAllocation) {
  const ReportReply reply{1024, 64, 1, 2.5, policy::Allocation{"a100", {{"n1", 4}, {"n2", 4}}}};
  const Json::Value json = replyToJson(reply);
  EXPECT_EQ(json["batch_size"].asInt64(), 1024);
  EXPECT_EQ(json["local_bsz"].asInt(), 64);
  EXPECT_EQ(json["accum_steps"].asInt(), 1);
  EXPECT_EQ(json["lr_scale"].asDouble(), 2.5);
  EXPECT_EQ(json["allocation"]["gpu_type"].asString(), "a100");
  EXPECT_EQ(json["allocation"]["nodes"]["n1"].asInt(), 4);
  EXPECT_EQ(json["allocation"]["nodes"]["n2"].asInt(), 4);
  EXPECT_EQ(json.size(), 5u);
}

TEST(GoodputReportTest, ReplyWithoutAllocationHasNull) {
  const Json::Value json = replyToJson(ReportReply{128, 32, 0, 1.0, std::nullopt});
  ASSERT_TRUE(json.isMember("allocation"));
  EXPECT_TRUE(json["allocation"].isNull());
}

TEST(GoodputReportTest, ReplyRoundTripsThroughParseReportReply) {
  const ReportReply reply{1024, 64, 1, 2.5, policy::Allocation{"a100", {{"n1", 4}, {"n2", 4}}}};
  const ReportReply parsed =
      parseReportReply(Json::writeString(Json::StreamWriterBuilder(), replyToJson(reply)));
  EXPECT_EQ(parsed.batch_size, 1024);
  EXPECT_EQ(parsed.local_bsz, 64);
  EXPECT_EQ(parsed.accum_steps, 1);
  EXPECT_DOUBLE_EQ(parsed.lr_scale, 2.5);
  ASSERT_TRUE(parsed.allocation);
  EXPECT_EQ(*parsed.allocation, *reply.allocation);
  EXPECT_FALSE(parseReportReply(R"({"batch_size": 128, "local_bsz": 32, "accum_steps": 0,
                                     "lr_scale": 1, "allocation": null, "later": 1})")
                   .allocation);
}

TEST(GoodputReportTest, JobStatusReadsAsAReply) {
  const ReportReply reply = parseReportReply(
      R"({"job_id": "1", "state": "running", "batch_size": 408, "local_bsz": 51,
          "accum_steps": 0, "lr_scale": 2.2,
          "allocation": {"gpu_type": "a100", "gpus": 8, "nodes": {"n1": 4, "n2": 4}}})");
  ASSERT_TRUE(reply.allocation);
  EXPECT_EQ(reply.allocation->totalGpus(), 8);
  EXPECT_THROW(parseReportReply(R"({"batch_size": 1, "local_bsz": 1, "accum_steps": 0,
      "lr_scale": 1, "allocation": {"gpu_type": "a100", "gpus": 9, "nodes": {"n1": 4}}})"),
               InvalidInput);
}

TEST(GoodputReportTest, MalformedReplyNamesTheKey) {
  try {
    parseReportReply(R"({"batch_size": 128, "local_bsz": -1, "accum_steps": 0, "lr_scale": 1})");
    FAIL() << "a negative local_bsz was accepted";
  } catch (const InvalidInput& error) {
    EXPECT_NE(std::string(error.what()).find("reply.local_bsz"), std::string::npos) << error.what();
  }
  EXPECT_THROW(parseReportReply("<html>busy</html>"), InvalidInput);
}

}  // namespace
}  // namespace pollux::schema
