// SPDX-License-Identifier: GPL-2.0-or-later
// The plugin's HTTP(S) endpoint: a libmicrohttpd daemon that buffers each request, size-limited,
// and hands complete requests to one handler. Routing, authentication and JSON are the handler's.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <string>

namespace pollux::service {

struct HttpRequest {
  std::string method;                          // "GET", "POST"
  std::string path;                            // "/v1/jobs/42/report" (no query string)
  std::map<std::string, std::string> headers;  // names lower-cased; repeated headers joined by ", "
  std::string body;
  std::string peer;                            // "127.0.0.1"
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
};

// Called from several server threads at once: it must be thread-safe. Anything it throws
// becomes a 500 reply.
using HttpHandler = std::function<HttpResponse(const HttpRequest&)>;

struct RestServerOptions {
  std::string address = "127.0.0.1";          // numeric IPv4 or IPv6 address, bound exactly
  int port = 6830;                             // 0 = any free port (tests): see boundPort()
  size_t max_body_bytes = 64 * 1024;           // larger bodies get 413 without being stored
  int threads = 2;
  int connection_timeout_s = 10;               // idle or stalled connections are closed after it
  int max_connections = 256;
  int max_connections_per_ip = 64;
  std::string tls_cert_pem, tls_key_pem;       // both empty = plain HTTP
  // libmicrohttpd's messages and handler failures, one line each; empty = stderr
  std::function<void(const std::string&)> log_error;
};

class RestServer {
 public:
  // Listens before returning; throws std::runtime_error saying why it cannot.
  RestServer(const RestServerOptions& options, HttpHandler handler);
  ~RestServer();  // waits for handler calls in progress, then closes every connection

  RestServer(const RestServer&) = delete;
  RestServer& operator=(const RestServer&) = delete;

  int boundPort() const;
  std::string url() const;  // "http://127.0.0.1:6830", "https://[::1]:6830"

 private:
  class Daemon;  // libmicrohttpd's state and callbacks, kept out of this header
  std::unique_ptr<Daemon> daemon_;
};

}  // namespace pollux::service
