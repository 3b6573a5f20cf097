// SPDX-License-Identifier: GPL-2.0-or-later
// A small blocking HTTP client over libcurl: one handle per client, so connections are reused.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

typedef void CURL;

namespace pollux::client {

// The request never got an HTTP answer (refused, timed out, TLS failure, ...).
class TransportError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct HttpResponse {
  long status;
  std::string body;
};

class HttpClient {
 public:
  // `ca_file`: CA bundle to verify an https endpoint with; empty for the system's.
  explicit HttpClient(double timeout_s = 10, std::string ca_file = "");
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  // Both throw TransportError when no HTTP answer arrives.
  HttpResponse get(const std::string& url, const std::vector<std::string>& headers = {});
  HttpResponse post(const std::string& url, const std::string& body,
                    const std::vector<std::string>& headers);

 private:
  HttpResponse perform(const std::string& url, const std::vector<std::string>& headers);
  CURL* curl_;
  long timeout_ms_;
  std::string ca_file_;
};

}  // namespace pollux::client
