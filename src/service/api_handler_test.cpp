// SPDX-License-Identifier: GPL-2.0-or-later
// The REST handler's checks and their order, with credentials from a REAL private munged.
#include "api_handler.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "munge/munge_credential.hpp"
#include "testing/private_munged.hpp"

namespace pollux::service {
namespace {

constexpr uint32_t kOwner = 1000;  // the adaptive job's owner (the test runs as root)
constexpr uid_t kNobody = 65534;

std::string reportBody(const std::string& id) {
  return R"({"job_id": ")" + id + R"(", "gpu_type": "a100", "num_nodes": 1, "num_replicas": 1,
    "perf_params": {}, "grad_params": {"sqr": 1, "var": 3}, "init_batch_size": 64,
    "max_batch_size": 1024, "local_bsz_bounds": [16, 128], "accumulation": false,
    "progress": {"examples": 10, "epochs": 0}})";
}

class ApiHandlerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { munged_ = std::make_unique<auth::testing::PrivateMunged>(); }
  static void TearDownTestSuite() { munged_.reset(); }

  void SetUp() override {
    ASSERT_TRUE(munged_->error().empty()) << munged_->error();
    SlurmJob adaptive, rigid, own;
    adaptive.id = 7;
    adaptive.uid = kOwner;
    adaptive.state = JobState::kRunning;
    adaptive.adaptive = schema::AdaptiveRequest{};
    rigid = adaptive;
    rigid.id = 8;
    rigid.adaptive.reset();
    own = adaptive;
    own.id = 9;
    own.uid = geteuid();
    store_.observe({adaptive, rigid, own}, 0);
  }

  ApiHandler handler(uint32_t slurm_user, double rate = 1000, bool private_jobs = false) {
    limiter_ = std::make_unique<RateLimiter>(rate);
    status_["jobs"][0]["job_id"] = "9";
    status_["jobs"][0]["user_id"] = kOwner;
    status_["jobs"][0]["batch_size"] = 512;
    status_["jobs"][0]["progress"]["examples"] = 1000;
    return ApiHandler(ApiContext{store_, metrics_, *limiter_, slurm_user, private_jobs,
                                 munged_->socket(), [this] { return status_; }});
  }

  // A status credential for `path`, encoded by root (the test's user) or, with `uid`, by a
  // child process that has become that user.
  static std::string statusCredential(const std::string& path, uid_t uid = 0) {
    const std::string payload = auth::statusPayload(path);
    if (uid == 0) return auth::encodeCredential(payload, munged_->socket());
    int pipe_ends[2];
    if (pipe(pipe_ends) != 0) return "";
    const pid_t child = fork();
    if (child == 0) {
      close(pipe_ends[0]);
      if (setuid(uid) != 0) _exit(1);
      const std::string encoded = auth::encodeCredential(payload, munged_->socket());
      _exit(write(pipe_ends[1], encoded.data(), encoded.size()) ==
                    static_cast<ssize_t>(encoded.size()) ? 0 : 1);
    }
    close(pipe_ends[1]);
    std::string encoded;
    char buffer[512];
    for (ssize_t got; (got = read(pipe_ends[0], buffer, sizeof buffer)) > 0;) {
      encoded.append(buffer, static_cast<size_t>(got));
    }
    close(pipe_ends[0]);
    int status = 0;
    waitpid(child, &status, 0);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? encoded : "";
  }

  static HttpRequest get(const std::string& path, uid_t uid = 0) {
    return {"GET", path, {{"x-munge-cred", statusCredential(path, uid)}}, "", "127.0.0.1"};
  }

  static std::string credential(const std::string& id, const std::string& body) {
    return auth::encodeCredential(auth::reportPayload(id, body), munged_->socket());
  }

  static HttpRequest post(const std::string& id, const std::string& body,
                          const std::string& cred) {
    HttpRequest request{"POST", "/v1/jobs/" + id + "/report", {}, body, "127.0.0.1"};
    if (!cred.empty()) request.headers["x-munge-cred"] = cred;
    return request;
  }

  // A signed report for `id`, as its owner would send it.
  static HttpRequest signedPost(const std::string& id, const std::string& body) {
    return post(id, body, credential(id, body));
  }

  static inline std::unique_ptr<auth::testing::PrivateMunged> munged_;
  JobStore store_;
  Metrics metrics_;
  std::unique_ptr<RateLimiter> limiter_;
  Json::Value status_;
};

TEST_F(ApiHandlerTest, OwnersReportGetsTheDecision) {
  const HttpResponse response = handler(12345)(signedPost("9", reportBody("9")));
  ASSERT_EQ(response.status, 200) << response.body;
  for (const char* key : {"batch_size", "local_bsz", "accum_steps", "lr_scale", "allocation"}) {
    EXPECT_NE(response.body.find(key), std::string::npos) << key;
  }
}

TEST_F(ApiHandlerTest, SlurmUserMayReportForAnyJob) {
  EXPECT_EQ(handler(geteuid())(signedPost("7", reportBody("7"))).status, 200);
}

TEST_F(ApiHandlerTest, ChecksRunInTheDocumentedOrder) {
  ApiHandler api = handler(12345);
  const std::string body = reportBody("7");
  // 401 before 404 and 403: an unauthenticated caller learns nothing about jobs.
  EXPECT_EQ(api(post("424242", reportBody("424242"), "")).status, 401);
  EXPECT_EQ(api(post("7", body, "garbage")).status, 401);
  EXPECT_EQ(api(post("7", body, credential("9", body))).status, 401);          // other job
  EXPECT_EQ(api(post("7", body, credential("7", body + " "))).status, 401);    // other body
  const std::string replayed = credential("9", reportBody("9"));
  EXPECT_EQ(api(post("9", reportBody("9"), replayed)).status, 200);
  EXPECT_EQ(api(post("9", reportBody("9"), replayed)).status, 401);            // replay
  // 404 before 403: unknown and rigid jobs.
  EXPECT_EQ(api(signedPost("424242", reportBody("424242"))).status, 404);
  EXPECT_EQ(api(signedPost("8", reportBody("8"))).status, 404);
  // 403 before 400: another user's job, even with a malformed body.
  EXPECT_EQ(api(signedPost("7", "{not json")).status, 403);
  // 400: malformed body, or a body for another job.
  EXPECT_EQ(api(signedPost("9", "{not json")).status, 400);
  EXPECT_EQ(api(signedPost("9", reportBody("7"))).status, 400);
}

std::string withLength(const std::string& body, const std::string& length) {
  std::string text = body;
  return text.insert(text.rfind('}'), ", \"length\": " + length);
}

TEST_F(ApiHandlerTest, DeclaredLengthIsOptionalAndMalformedOnesGet400NamingTheKey) {
  const ApiHandler api = handler(0);
  EXPECT_EQ(api(signedPost("9", reportBody("9"))).status, 200);  // an older agent's report
  EXPECT_FALSE(store_.records().at("9").report->length.has_value());
  const std::string declared =
      withLength(reportBody("9"), R"({"progress": 640, "target_progress": 64000})");
  EXPECT_EQ(api(signedPost("9", declared)).status, 200);
  ASSERT_TRUE(store_.records().at("9").report->length.has_value());
  EXPECT_EQ(store_.records().at("9").report->length->target, 64000);
  for (const auto& [length, message] : std::vector<std::pair<std::string, std::string>>{
           {R"({"progress": -1, "target_progress": 10})", "length.progress: must be >= 0"},
           {R"({"progress": 1, "target_progress": 0})", "length.target_progress: must be > 0"},
           {R"({"progress": 1})", "length: missing required key 'target_progress'"},
           {R"("long")", "length: must be an object"}}) {
    const HttpResponse response = api(signedPost("9", withLength(reportBody("9"), length)));
    EXPECT_EQ(response.status, 400) << length;
    EXPECT_NE(response.body.find(message), std::string::npos) << response.body;
  }
  // A refused report changes nothing: the last accepted declaration stands.
  EXPECT_EQ(store_.records().at("9").report->length->target, 64000);
}

TEST_F(ApiHandlerTest, FloodGets429BeforeAnyMungeWork) {
  ApiHandler api = handler(12345, 1);
  EXPECT_EQ(api(signedPost("9", reportBody("9"))).status, 200);
  EXPECT_EQ(api(post("9", reportBody("9"), "unchecked")).status, 429);
}

TEST_F(ApiHandlerTest, StatusJobAndMetricsEndpoints) {
  ApiHandler api = handler(12345);
  api(post("7", reportBody("7"), ""));
  EXPECT_EQ(api(get("/v1/status")).status, 200);
  const HttpResponse job = api(get("/v1/jobs/9"));
  EXPECT_EQ(job.status, 200);
  EXPECT_NE(job.body.find("\"job_id\":\"9\""), std::string::npos) << job.body;
  EXPECT_EQ(api(get("/v1/jobs/10")).status, 404);
  const HttpResponse metrics = api({"GET", "/metrics", {}, "", ""});
  EXPECT_EQ(metrics.status, 200);
  EXPECT_NE(metrics.body.find("pollux_reports_total{code=\"401\"} 1"), std::string::npos)
      << metrics.body;
  EXPECT_NE(metrics.body.find("# EOF"), std::string::npos);
  EXPECT_EQ(api({"GET", "/v1/jobs/9/report", {}, "", ""}).status, 405);
  EXPECT_EQ(api({"DELETE", "/v1/status", {}, "", ""}).status, 405);
  EXPECT_EQ(api({"GET", "/v1/nothing", {}, "", ""}).status, 404);
}

TEST_F(ApiHandlerTest, StatusReadsNeedACredentialForThePath) {
  ApiHandler api = handler(12345);
  EXPECT_EQ(api({"GET", "/v1/status", {}, "", ""}).status, 401);
  EXPECT_EQ(api({"GET", "/v1/jobs/9", {}, "", ""}).status, 401);
  EXPECT_EQ(api({"GET", "/v1/jobs/9", {{"x-munge-cred", "garbage"}}, "", ""}).status, 401);
  // A credential for another path, a report credential, a replayed one.
  EXPECT_EQ(api({"GET", "/v1/jobs/9", {{"x-munge-cred", statusCredential("/v1/status")}}, "", ""})
                .status, 401);
  EXPECT_EQ(api({"GET", "/v1/jobs/9", {{"x-munge-cred", credential("9", "")}}, "", ""}).status,
            401);
  const HttpRequest once = get("/v1/jobs/9");
  EXPECT_EQ(api(once).status, 200);
  EXPECT_EQ(api(once).status, 401);
}

TEST_F(ApiHandlerTest, OwnerSeesDetailsOtherUsersWhatSqueueShows) {
  ApiHandler api = handler(12345);
  const HttpResponse owner = api(get("/v1/jobs/9", kOwner));
  ASSERT_EQ(owner.status, 200) << owner.body;
  EXPECT_NE(owner.body.find("progress"), std::string::npos) << owner.body;
  const HttpResponse other = api(get("/v1/jobs/9", kNobody));
  ASSERT_EQ(other.status, 200) << other.body;
  EXPECT_EQ(other.body.find("progress"), std::string::npos) << other.body;
  EXPECT_NE(other.body.find("\"batch_size\":512"), std::string::npos) << other.body;
  const HttpResponse status = api(get("/v1/status", kNobody));
  ASSERT_EQ(status.status, 200) << status.body;
  EXPECT_EQ(status.body.find("progress"), std::string::npos) << status.body;
}

TEST_F(ApiHandlerTest, PrivateDataJobsHidesOtherUsersJobs) {
  ApiHandler api = handler(12345, 1000, true);
  EXPECT_EQ(api(get("/v1/jobs/9", kNobody)).status, 404);
  EXPECT_EQ(api(get("/v1/status", kNobody)).body.find("\"job_id\":\"9\""), std::string::npos);
  EXPECT_EQ(api(get("/v1/jobs/9", kOwner)).status, 200);
  EXPECT_EQ(api(get("/v1/jobs/9", 12345)).status, 200);  // SlurmUser
}

}  // namespace
}  // namespace pollux::service
