// SPDX-License-Identifier: GPL-2.0-or-later
#include "munge_credential.hpp"

#include <cstdlib>
#include <memory>
#include <type_traits>

#include "common/auth/sha256.hpp"

namespace pollux::auth {

namespace {

const char* describe(munge_err_t status) {
  switch (status) {
    case EMUNGE_SOCKET: return "cannot reach munged";
    case EMUNGE_CRED_EXPIRED: return "credential expired";
    case EMUNGE_CRED_REWOUND: return "credential encoded in the future (clock skew?)";
    case EMUNGE_CRED_REPLAYED: return "credential replayed (it was already used once)";
    case EMUNGE_CRED_UNAUTHORIZED: return "not authorized to decode this credential";
    case EMUNGE_BAD_LENGTH: return "credential or payload too long for munged";
    case EMUNGE_BAD_CRED:
    case EMUNGE_BAD_VERSION:
    case EMUNGE_BAD_CIPHER:
    case EMUNGE_BAD_MAC:
    case EMUNGE_BAD_ZIP:
    case EMUNGE_BAD_REALM:
    case EMUNGE_CRED_INVALID: return "invalid credential";
    default: return "munge failure";
  }
}

struct ContextDeleter {
  void operator()(munge_ctx_t context) const { munge_ctx_destroy(context); }
};

// One libmunge context bound to a munged socket; a fresh one per call, as libmunge advises
// against sharing contexts between encode and decode or between threads.
class MungeContext {
 public:
  explicit MungeContext(const std::string& socket) : context_(munge_ctx_create()) {
    if (!context_) {
      throw CredentialError("cannot create a munge context: out of memory", EMUNGE_NO_MEMORY);
    }
    if (!socket.empty()) {
      check(munge_ctx_set(get(), MUNGE_OPT_SOCKET, socket.c_str()), "setting the munged socket");
    }
  }

  munge_ctx_t get() const { return context_.get(); }

  // Throws CredentialError for any status but success, with libmunge's detailed message.
  void check(munge_err_t status, const char* operation) const {
    if (status == EMUNGE_SUCCESS) return;
    const char* detail = munge_ctx_strerror(get());
    throw CredentialError(std::string(operation) + ": " + describe(status) + " (" +
                              (detail != nullptr ? detail : munge_strerror(status)) + ")",
                          status);
  }

 private:
  std::unique_ptr<std::remove_pointer_t<munge_ctx_t>, ContextDeleter> context_;
};

struct FreeDeleter {
  void operator()(void* memory) const { std::free(memory); }
};

[[noreturn]] void rejectRequest(const std::string& what) {
  throw CredentialError(what, EMUNGE_SUCCESS);
}

void requireBoundedPayload(std::size_t size) {
  if (size > kMaxPayloadBytes) {
    rejectRequest("credential payload of " + std::to_string(size) + " bytes exceeds the " +
                  std::to_string(kMaxPayloadBytes) + "-byte limit");
  }
}

// Quotes untrusted text for an error message, replacing bytes that are not printable ASCII.
std::string quoted(std::string_view text) {
  std::string out = "'";
  for (const char c : text) out += (c >= 0x20 && c < 0x7f) ? c : '?';
  return out + "'";
}

// Which part of `payload` differs from reportPayload(url_job_id, body)?
std::string describeMismatch(std::string_view payload, const std::string& url_job_id) {
  const std::size_t first_space = payload.find(' ');
  const std::size_t last_space = payload.rfind(' ');
  if (first_space == std::string_view::npos || first_space == last_space ||
      payload.substr(0, first_space) != kReportPayloadPrefix) {
    return "credential payload does not start with '" + std::string(kReportPayloadPrefix) +
           " <jobid> ': it is not a goodput report credential";
  }
  const std::string_view job_id = payload.substr(first_space + 1, last_space - first_space - 1);
  if (job_id != url_job_id) {
    return "credential was issued for job " + quoted(job_id) + ", not job " + quoted(url_job_id);
  }
  return "credential does not match the request body (its SHA-256 differs)";
}

}  // namespace

std::string reportPayload(const std::string& job_id, std::string_view body) {
  return std::string(kReportPayloadPrefix) + " " + job_id + " " + sha256Hex(body);
}

std::string statusPayload(std::string_view path) {
  return std::string(kStatusPayloadPrefix) + " " + std::string(path);
}

std::string encodeCredential(std::string_view payload, const std::string& socket) {
  requireBoundedPayload(payload.size());
  const MungeContext context(socket);
  char* raw_credential = nullptr;
  const munge_err_t status = munge_encode(&raw_credential, context.get(), payload.data(),
                                          static_cast<int>(payload.size()));
  const std::unique_ptr<char, FreeDeleter> credential(raw_credential);
  context.check(status, "encoding a munge credential");
  return credential.get();
}

VerifiedCredential decodeCredential(const std::string& credential, const std::string& socket) {
  if (credential.empty()) rejectRequest("empty munge credential");
  if (credential.size() > kMaxCredentialBytes) {
    rejectRequest("munge credential of " + std::to_string(credential.size()) +
                  " bytes exceeds the " + std::to_string(kMaxCredentialBytes) + "-byte limit");
  }
  const MungeContext context(socket);
  void* raw_payload = nullptr;
  int payload_size = 0;
  VerifiedCredential verified{};
  const munge_err_t status = munge_decode(credential.c_str(), context.get(), &raw_payload,
                                          &payload_size, &verified.uid, &verified.gid);
  const std::unique_ptr<void, FreeDeleter> payload(raw_payload);  // allocated on some errors too
  context.check(status, "decoding the munge credential");
  requireBoundedPayload(static_cast<std::size_t>(payload_size));
  if (payload_size > 0) {
    verified.payload.assign(static_cast<const char*>(payload.get()),
                            static_cast<std::size_t>(payload_size));
  }
  return verified;
}

uid_t verifyReportCredential(const std::string& credential, const std::string& url_job_id,
                             std::string_view body, const std::string& socket) {
  const VerifiedCredential verified = decodeCredential(credential, socket);
  if (verified.payload != reportPayload(url_job_id, body)) {
    rejectRequest(describeMismatch(verified.payload, url_job_id));
  }
  return verified.uid;
}

uid_t verifyStatusCredential(const std::string& credential, std::string_view path,
                             const std::string& socket) {
  const VerifiedCredential verified = decodeCredential(credential, socket);
  if (verified.payload == statusPayload(path)) return verified.uid;
  const std::string prefix = std::string(kStatusPayloadPrefix) + " ";
  if (verified.payload.compare(0, prefix.size(), prefix) != 0) {
    rejectRequest("credential payload does not start with '" + prefix +
                  "': it is not a status credential");
  }
  rejectRequest("credential was issued to read " + quoted(verified.payload.substr(prefix.size())) +
                ", not " + quoted(path));
}

}  // namespace pollux::auth
