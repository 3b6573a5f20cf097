// SPDX-License-Identifier: GPL-2.0-or-later
// Runs against a REAL munged: the suite starts a private one as user munge (so it must run as
// root, as CI does) in a fresh temp dir, and stops it by its PID at the end.
#include "munge_credential.hpp"

#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "testing/private_munged.hpp"
#include "common/auth/sha256.hpp"

namespace pollux::auth {
namespace {

using testing::PrivateMunged;

// Expects `call` to throw CredentialError with `status` and a message containing `expected`.
template <typename Call>
void expectCredentialError(Call call, munge_err_t status, const std::string& expected) {
  try {
    call();
    ADD_FAILURE() << "no CredentialError (expected '" << expected << "')";
  } catch (const CredentialError& error) {
    EXPECT_EQ(error.mungeStatus(), status) << error.what();
    EXPECT_NE(std::string(error.what()).find(expected), std::string::npos)
        << "message '" << error.what() << "' lacks '" << expected << "'";
  }
}

const std::string kBody = R"({"job_id": "42", "gpu_type": "a100"})";

TEST(ReportPayloadTest, BindsJobIdAndBodyHash) {
  EXPECT_EQ(reportPayload("42", kBody), "pollux-report/1 42 " + sha256Hex(kBody));
  EXPECT_EQ(reportPayload("7", ""),
            "pollux-report/1 7 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

TEST(StatusPayloadTest, BindsThePath) {
  EXPECT_EQ(statusPayload("/v1/status"), "pollux-status/1 /v1/status");
  EXPECT_EQ(statusPayload("/v1/jobs/42"), "pollux-status/1 /v1/jobs/42");
}

TEST(ReportPayloadTest, RejectsOversizedInputWithoutMunged) {
  const std::string no_munged = "/nonexistent/munge.socket";
  expectCredentialError([&] { decodeCredential("", no_munged); }, EMUNGE_SUCCESS, "empty");
  expectCredentialError(
      [&] { decodeCredential(std::string(kMaxCredentialBytes + 1, 'A'), no_munged); },
      EMUNGE_SUCCESS, "exceeds the 4096-byte limit");
  expectCredentialError(
      [&] { encodeCredential(std::string(kMaxPayloadBytes + 1, 'p'), no_munged); },
      EMUNGE_SUCCESS, "exceeds the 256-byte limit");
}

class MungeCredentialTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { munged_ = std::make_unique<PrivateMunged>(); }
  static void TearDownTestSuite() { munged_.reset(); }

  void SetUp() override {
    if (!munged_->error().empty()) FAIL() << "cannot start a private munged: " << munged_->error();
  }

  static const std::string& socket() { return munged_->socket(); }
  static std::string reportCredential(const std::string& job_id, const std::string& body) {
    return encodeCredential(reportPayload(job_id, body), socket());
  }

  static inline std::unique_ptr<PrivateMunged> munged_;
};

TEST_F(MungeCredentialTest, RoundTripGivesCallersIdentity) {
  const std::string credential = reportCredential("42", kBody);
  EXPECT_EQ(verifyReportCredential(credential, "42", kBody, socket()), geteuid());

  const VerifiedCredential decoded =
      decodeCredential(encodeCredential("any payload", socket()), socket());
  EXPECT_EQ(decoded.uid, geteuid());
  EXPECT_EQ(decoded.gid, getegid());
  EXPECT_EQ(decoded.payload, "any payload");
}

TEST_F(MungeCredentialTest, EmptyPayloadDecodesToEmpty) {
  EXPECT_EQ(decodeCredential(encodeCredential("", socket()), socket()).payload, "");
}

TEST_F(MungeCredentialTest, RejectsAnotherJobsCredential) {
  const std::string credential = reportCredential("41", kBody);
  expectCredentialError([&] { verifyReportCredential(credential, "42", kBody, socket()); },
                        EMUNGE_SUCCESS, "issued for job '41', not job '42'");
}

TEST_F(MungeCredentialTest, RejectsCredentialOfAnotherBody) {
  const std::string credential = reportCredential("42", kBody);
  expectCredentialError(
      [&] { verifyReportCredential(credential, "42", kBody + " ", socket()); }, EMUNGE_SUCCESS,
      "does not match the request body");
}

TEST_F(MungeCredentialTest, RejectsAnotherPayloadPrefix) {
  const std::string credential =
      encodeCredential("pollux-report/2 42 " + sha256Hex(kBody), socket());
  expectCredentialError([&] { verifyReportCredential(credential, "42", kBody, socket()); },
                        EMUNGE_SUCCESS, "does not start with 'pollux-report/1 <jobid> '");
  const std::string bare = encodeCredential("pollux-report/1", socket());
  expectCredentialError([&] { verifyReportCredential(bare, "42", kBody, socket()); },
                        EMUNGE_SUCCESS, "does not start with");
}

TEST_F(MungeCredentialTest, RejectsTamperedCredential) {
  std::string credential = reportCredential("42", kBody);
  char& middle = credential[credential.size() / 2];
  middle = middle == 'A' ? 'B' : 'A';
  expectCredentialError([&] { verifyReportCredential(credential, "42", kBody, socket()); },
                        EMUNGE_CRED_INVALID, "invalid credential");
}

TEST_F(MungeCredentialTest, RejectsGarbageAndEmptyCredentials) {
  expectCredentialError([&] { verifyReportCredential("not a credential", "42", kBody, socket()); },
                        EMUNGE_BAD_CRED, "invalid credential");
  expectCredentialError([&] { verifyReportCredential("", "42", kBody, socket()); },
                        EMUNGE_SUCCESS, "empty munge credential");
}

TEST_F(MungeCredentialTest, RejectsReplayedCredential) {
  const std::string credential = reportCredential("42", kBody);
  EXPECT_EQ(verifyReportCredential(credential, "42", kBody, socket()), geteuid());
  expectCredentialError([&] { verifyReportCredential(credential, "42", kBody, socket()); },
                        EMUNGE_CRED_REPLAYED, "credential replayed");
}

TEST_F(MungeCredentialTest, StatusCredentialGivesCallersIdentity) {
  const std::string credential = encodeCredential(statusPayload("/v1/jobs/42"), socket());
  EXPECT_EQ(verifyStatusCredential(credential, "/v1/jobs/42", socket()), geteuid());
}

TEST_F(MungeCredentialTest, RejectsStatusCredentialOfAnotherPath) {
  const std::string credential = encodeCredential(statusPayload("/v1/jobs/41"), socket());
  expectCredentialError([&] { verifyStatusCredential(credential, "/v1/jobs/42", socket()); },
                        EMUNGE_SUCCESS, "issued to read '/v1/jobs/41', not '/v1/jobs/42'");
}

TEST_F(MungeCredentialTest, ReportCredentialIsNoStatusCredential) {
  const std::string credential = reportCredential("42", kBody);
  expectCredentialError([&] { verifyStatusCredential(credential, "/v1/status", socket()); },
                        EMUNGE_SUCCESS, "not a status credential");
}

TEST_F(MungeCredentialTest, ReportsUnreachableMunged) {
  const std::string nowhere = munged_->baseDir() + "/no-munged.socket";
  expectCredentialError([&] { encodeCredential("payload", nowhere); }, EMUNGE_SOCKET,
                        "cannot reach munged");
  const std::string credential = reportCredential("42", kBody);
  expectCredentialError([&] { verifyReportCredential(credential, "42", kBody, nowhere); },
                        EMUNGE_SOCKET, nowhere);
}

}  // namespace
}  // namespace pollux::auth
