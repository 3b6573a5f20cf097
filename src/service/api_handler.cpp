// SPDX-License-Identifier: GPL-2.0-or-later
#include "api_handler.hpp"

#include <cctype>
#include <regex>

#include "munge/munge_credential.hpp"
#include "common/invalid_input.hpp"
#include "common/schema/goodput_report.hpp"
#include "status_view.hpp"

namespace pollux::service {

namespace {

const std::regex kReportPath(R"(^/v1/jobs/([0-9]{1,10})/report$)");
const std::regex kJobPath(R"(^/v1/jobs/([0-9]{1,10})$)");

HttpResponse jsonResponse(int status, const Json::Value& body) {
  Json::StreamWriterBuilder writer;
  writer["indentation"] = "";
  return {status, "application/json", Json::writeString(writer, body) + "\n"};
}

}  // namespace

HttpResponse errorResponse(int status, const std::string& message) {
  Json::Value body;
  body["error"] = message;
  return jsonResponse(status, body);
}

HttpResponse ApiHandler::operator()(const HttpRequest& request) const {
  std::smatch match;
  if (std::regex_match(request.path, match, kReportPath)) {
    if (request.method != "POST") return errorResponse(405, "use POST for reports");
    HttpResponse response = report(request, match[1]);
    context_.metrics.countReport(response.status);
    return response;
  }
  if (request.method != "GET") return errorResponse(405, "method not allowed");
  if (request.path == "/v1/status") return statusRead(request, "");
  if (std::regex_match(request.path, match, kJobPath)) return statusRead(request, match[1]);
  if (request.path == "/metrics") {
    return {200, "application/openmetrics-text; version=1.0.0; charset=utf-8",
            context_.metrics.render()};
  }
  return errorResponse(404, "no such resource: " + request.path);
}

HttpResponse ApiHandler::report(const HttpRequest& request, const std::string& job_id) const {
  if (!context_.report_limiter.tryAcquire()) {
    return errorResponse(429, "too many reports; retry later");
  }
  const auto credential = request.headers.find("x-munge-cred");
  if (credential == request.headers.end()) return errorResponse(401, "missing X-Munge-Cred");
  uid_t uid;
  try {
    uid = auth::verifyReportCredential(credential->second, job_id, request.body,
                                       context_.munge_socket);
  } catch (const auth::CredentialError& error) {
    return errorResponse(401, std::string("credential rejected: ") + error.what());
  }
  uint32_t owner = 0;
  const JobLookup lookup = context_.store.lookup(job_id, &owner);
  if (lookup == JobLookup::kUnknown) return errorResponse(404, "no pending or running job " + job_id);
  if (lookup == JobLookup::kNotAdaptive) return errorResponse(404, "job " + job_id + " is not adaptive");
  if (uid != owner && uid != context_.slurm_user_id) {
    return errorResponse(403, "job " + job_id + " belongs to another user");
  }
  try {
    const schema::GoodputReport parsed = schema::parseGoodputReport(request.body);
    if (parsed.job_id != job_id) {
      return errorResponse(400, "job_id " + parsed.job_id + " does not match the URL");
    }
    return jsonResponse(200, schema::replyToJson(context_.store.acceptReport(parsed)));
  } catch (const InvalidInput& error) {
    return errorResponse(400, error.what());
  }
}

HttpResponse ApiHandler::statusRead(const HttpRequest& request, const std::string& job_id) const {
  const auto credential = request.headers.find("x-munge-cred");
  if (credential == request.headers.end()) {
    return errorResponse(401, "missing X-Munge-Cred (payload '" +
                                  auth::statusPayload(request.path) + "')");
  }
  uid_t uid;
  try {
    uid = auth::verifyStatusCredential(credential->second, request.path, context_.munge_socket);
  } catch (const auth::CredentialError& error) {
    return errorResponse(401, std::string("credential rejected: ") + error.what());
  }
  const Viewer viewer{uid, uid == 0 || uid == context_.slurm_user_id, context_.private_jobs};
  const Json::Value status = context_.published_status();
  if (job_id.empty()) return jsonResponse(200, statusFor(status, viewer));
  for (const auto& job : status["jobs"]) {
    if (job["job_id"].asString() != job_id) continue;
    if (auto shown = jobFor(job, viewer)) return jsonResponse(200, *shown);
    break;
  }
  return errorResponse(404, "job " + job_id + " is not known to sched/pollux");
}

}  // namespace pollux::service
