// SPDX-License-Identifier: GPL-2.0-or-later
// MUNGE credentials of the REST API (docs/design.md sections 6.1 and 6.2). A goodput report's
// payload binds the job id and the SHA-256 of the body; a status read's payload binds the path
// it reads. The plugin decodes them through munged (which rejects expired and replayed
// credentials) and checks the payload against the request.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>

#include <munge.h>

namespace pollux::auth {

inline constexpr std::string_view kReportPayloadPrefix = "pollux-report/1";
inline constexpr std::string_view kStatusPayloadPrefix = "pollux-status/1";
// Bounds checked before and after asking munged: a report payload is ~81 bytes plus the job id.
inline constexpr std::size_t kMaxPayloadBytes = 256;
inline constexpr std::size_t kMaxCredentialBytes = 4096;

// A credential that cannot be used; what() says why. The REST handler answers 401.
class CredentialError : public std::runtime_error {
 public:
  CredentialError(const std::string& what, munge_err_t munge_status)
      : std::runtime_error(what), munge_status_(munge_status) {}

  // libmunge's verdict: EMUNGE_SOCKET means munged is unreachable (a server-side problem);
  // EMUNGE_SUCCESS means munged accepted the credential but it does not fit the request
  // (payload mismatch, size limits, empty credential).
  munge_err_t mungeStatus() const { return munge_status_; }

 private:
  munge_err_t munge_status_;
};

struct VerifiedCredential {
  uid_t uid;  // of the process that encoded the credential
  gid_t gid;
  std::string payload;
};

// "pollux-report/1 <job_id> <lowercase hex sha256 of body>"
std::string reportPayload(const std::string& job_id, std::string_view body);
// "pollux-status/1 <path>", e.g. "pollux-status/1 /v1/jobs/42"
std::string statusPayload(std::string_view path);

// `socket`: the munged socket path; empty means libmunge's default. Both throw CredentialError.
std::string encodeCredential(std::string_view payload, const std::string& socket);
VerifiedCredential decodeCredential(const std::string& credential, const std::string& socket);

// Decodes `credential` and requires its payload to be exactly reportPayload(url_job_id, body);
// returns the uid that encoded it. Throws CredentialError saying what is wrong (munged's
// verdict, or which of prefix, job id and body does not match).
uid_t verifyReportCredential(const std::string& credential, const std::string& url_job_id,
                             std::string_view body, const std::string& socket);

// Decodes `credential` and requires its payload to be exactly statusPayload(path); returns the
// uid that encoded it. Throws CredentialError as verifyReportCredential does.
uid_t verifyStatusCredential(const std::string& credential, std::string_view path,
                             const std::string& socket);

}  // namespace pollux::auth
