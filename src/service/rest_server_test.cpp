// SPDX-License-Identifier: GPL-2.0-or-later
#include "rest_server.hpp"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <vector>

namespace pollux::service {
namespace {

using namespace std::chrono_literals;

struct CurlReply {
  CURLcode code = CURLE_OK;
  long status = 0;
  std::string body;
  std::string content_type;
};

struct CurlRequest {
  std::string url;
  std::string method = "GET";
  std::string body;
  std::vector<std::string> headers;
  bool chunked = false;   // send the body with Transfer-Encoding: chunked
  std::string ca_file;    // for https: the server's self-signed certificate
};

size_t appendToString(char* data, size_t size, size_t count, void* target) {
  static_cast<std::string*>(target)->append(data, size * count);
  return size * count;
}

// Feeds a chunked upload 100 bytes at a time.
size_t readFromString(char* buffer, size_t size, size_t count, void* source) {
  auto& remaining = *static_cast<std::string*>(source);
  const size_t length = std::min({size * count, remaining.size(), size_t{100}});
  std::copy_n(remaining.data(), length, buffer);
  remaining.erase(0, length);
  return length;
}

CurlReply perform(const CurlRequest& request) {
  CURL* curl = curl_easy_init();
  curl_slist* headers = nullptr;
  for (const std::string& header : request.headers) {
    headers = curl_slist_append(headers, header.c_str());
  }
  std::string unsent_body = request.body;
  CurlReply reply;
  curl_easy_setopt(curl, CURLOPT_URL, request.url.c_str());
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_TIMEOUT, 10L);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, &appendToString);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &reply.body);
  if (request.method == "POST" && request.chunked) {
    headers = curl_slist_append(headers, "Transfer-Encoding: chunked");
    curl_easy_setopt(curl, CURLOPT_POST, 1L);
    curl_easy_setopt(curl, CURLOPT_READFUNCTION, &readFromString);
    curl_easy_setopt(curl, CURLOPT_READDATA, &unsent_body);
  } else if (request.method == "POST") {
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, request.body.c_str());
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE,
                     static_cast<curl_off_t>(request.body.size()));
  }
  if (!request.ca_file.empty()) curl_easy_setopt(curl, CURLOPT_CAINFO, request.ca_file.c_str());
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  reply.code = curl_easy_perform(curl);
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &reply.status);
  const char* content_type = nullptr;
  curl_easy_getinfo(curl, CURLINFO_CONTENT_TYPE, &content_type);
  if (content_type != nullptr) reply.content_type = content_type;
  curl_slist_free_all(headers);
  curl_easy_cleanup(curl);
  return reply;
}

CurlReply get(const std::string& url) { return perform({url, "GET", "", {}, false, ""}); }

CurlReply post(const std::string& url, const std::string& body, bool chunked = false) {
  return perform({url, "POST", body, {}, chunked, ""});
}

// A raw TCP client, for what curl will not do: stall, lie about lengths, hang up early.
class RawClient {
 public:
  RawClient(const std::string& address, int port) : fd_(socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in server{};
    server.sin_family = AF_INET;
    server.sin_port = htons(static_cast<uint16_t>(port));
    inet_pton(AF_INET, address.c_str(), &server.sin_addr);
    connected_ = connect(fd_, reinterpret_cast<sockaddr*>(&server), sizeof server) == 0;
    connect_errno_ = errno;
    const timeval receive_timeout{5, 0};
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &receive_timeout, sizeof receive_timeout);
  }
  ~RawClient() { close(fd_); }

  bool connected() const { return connected_; }
  int connectErrno() const { return connect_errno_; }

  bool send(const std::string& data) {
    const ssize_t sent = ::send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
    return sent == static_cast<ssize_t>(data.size());
  }

  // Everything the server sends until it closes; nullopt if it is still open after 5 s.
  std::optional<std::string> receiveUntilClosed() {
    std::string received;
    char buffer[4096];
    for (;;) {
      const ssize_t count = recv(fd_, buffer, sizeof buffer, 0);
      if (count > 0) {
        received.append(buffer, static_cast<size_t>(count));
      } else if (count == 0 || errno == ECONNRESET) {
        return received;
      } else {
        return std::nullopt;
      }
    }
  }

 private:
  int fd_;
  bool connected_ = false;
  int connect_errno_ = 0;
};

HttpResponse ok(const std::string& body) {
  HttpResponse response;
  response.body = body;
  return response;
}

RestServerOptions testOptions() {
  RestServerOptions options;
  options.port = 0;
  options.max_body_bytes = 1024;
  return options;
}

class RestServerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { curl_global_init(CURL_GLOBAL_DEFAULT); }
};

TEST_F(RestServerTest, GetReachesTheHandlerWithPathHeadersAndPeer) {
  HttpRequest seen;
  RestServer server(testOptions(), [&](const HttpRequest& request) {
    seen = request;
    HttpResponse response = ok("pong");
    response.content_type = "text/plain";
    return response;
  });
  const CurlReply reply = perform({server.url() + "/v1/status?verbose=1", "GET", "",
                                   {"X-Munge-Cred: MUNGE:abc", "X-Twice: a", "X-Twice: b"},
                                   false, ""});
  ASSERT_EQ(reply.code, CURLE_OK) << curl_easy_strerror(reply.code);
  EXPECT_EQ(reply.status, 200);
  EXPECT_EQ(reply.body, "pong");
  EXPECT_EQ(reply.content_type, "text/plain");
  EXPECT_EQ(seen.method, "GET");
  EXPECT_EQ(seen.path, "/v1/status");
  EXPECT_EQ(seen.headers["x-munge-cred"], "MUNGE:abc");
  EXPECT_EQ(seen.headers["x-twice"], "a, b");
  EXPECT_EQ(seen.peer, "127.0.0.1");
  EXPECT_TRUE(seen.body.empty());
}

TEST_F(RestServerTest, PostBodyReachesTheHandlerAndTheReplyComesBack) {
  HttpRequest seen;
  RestServer server(testOptions(), [&](const HttpRequest& request) {
    seen = request;
    HttpResponse response = ok(R"({"batch_size":256})");
    response.status = 202;
    return response;
  });
  const std::string report = R"({"job_id":42,"gpu_type":"t4"})";
  const CurlReply reply = perform({server.url() + "/v1/jobs/42/report", "POST", report,
                                   {"Content-Type: application/json"}, false, ""});
  ASSERT_EQ(reply.code, CURLE_OK) << curl_easy_strerror(reply.code);
  EXPECT_EQ(reply.status, 202);
  EXPECT_EQ(reply.body, R"({"batch_size":256})");
  EXPECT_EQ(reply.content_type, "application/json");
  EXPECT_EQ(seen.method, "POST");
  EXPECT_EQ(seen.path, "/v1/jobs/42/report");
  EXPECT_EQ(seen.body, report);
  EXPECT_EQ(seen.headers["content-type"], "application/json");
}

TEST_F(RestServerTest, ChunkedBodyWithinTheLimitArrivesWhole) {
  std::string seen_body;
  RestServer server(testOptions(), [&](const HttpRequest& request) {
    seen_body = request.body;
    return ok("{}");
  });
  const std::string body(1000, 'x');
  const CurlReply reply = post(server.url() + "/v1/jobs/1/report", body, true);
  ASSERT_EQ(reply.code, CURLE_OK) << curl_easy_strerror(reply.code);
  EXPECT_EQ(reply.status, 200);
  EXPECT_EQ(seen_body, body);
}

TEST_F(RestServerTest, BodyOverTheLimitByContentLengthGets413) {
  std::atomic<int> handled{0};
  RestServer server(testOptions(), [&](const HttpRequest&) {
    ++handled;
    return ok("{}");
  });
  const CurlReply reply = post(server.url() + "/v1/jobs/1/report", std::string(4096, 'x'));
  EXPECT_EQ(reply.status, 413) << curl_easy_strerror(reply.code);
  EXPECT_EQ(reply.body, R"({"error":"request body larger than 1024 bytes"})");
  EXPECT_EQ(reply.content_type, "application/json");
  EXPECT_EQ(handled, 0);
}

TEST_F(RestServerTest, DeclaredOversizeBodyIsRefusedWithoutWaitingForIt) {
  RestServer server(testOptions(), [](const HttpRequest&) { return ok("{}"); });
  RawClient client("127.0.0.1", server.boundPort());
  ASSERT_TRUE(client.send("POST /v1/jobs/1/report HTTP/1.1\r\nHost: x\r\n"
                          "Content-Length: 100000000\r\n\r\n"));
  const std::optional<std::string> reply = client.receiveUntilClosed();
  ASSERT_TRUE(reply.has_value()) << "server waited for the body";
  EXPECT_EQ(reply->rfind("HTTP/1.1 413", 0), 0u) << *reply;
}

TEST_F(RestServerTest, ChunkedBodyGrowingOverTheLimitGets413) {
  std::atomic<int> handled{0};
  RestServer server(testOptions(), [&](const HttpRequest&) {
    ++handled;
    return ok("{}");
  });
  const CurlReply reply = post(server.url() + "/v1/jobs/1/report", std::string(1500, 'x'), true);
  EXPECT_EQ(reply.status, 413) << curl_easy_strerror(reply.code);
  EXPECT_EQ(reply.body, R"({"error":"request body larger than 1024 bytes"})");
  EXPECT_EQ(handled, 0);
}

TEST_F(RestServerTest, EndlessChunkedUploadIsCutOff) {
  RestServerOptions options = testOptions();
  options.connection_timeout_s = 60;  // the cut must come from the size, not the timeout
  std::string logged;
  std::mutex logged_mutex;
  options.log_error = [&](const std::string& message) {
    const std::lock_guard<std::mutex> lock(logged_mutex);
    logged += message + "\n";
  };
  RestServer server(options, [](const HttpRequest&) { return ok("{}"); });
  RawClient client("127.0.0.1", server.boundPort());
  ASSERT_TRUE(client.send("POST /v1/jobs/1/report HTTP/1.1\r\nHost: x\r\n"
                          "Transfer-Encoding: chunked\r\n\r\n"));
  const std::string chunk = "400\r\n" + std::string(1024, 'x') + "\r\n";
  for (int sent = 0; sent < 64 && client.send(chunk); ++sent) {
  }
  EXPECT_TRUE(client.receiveUntilClosed().has_value()) << "server kept reading";
  const std::lock_guard<std::mutex> lock(logged_mutex);
  EXPECT_NE(logged.find("closing a connection whose chunked body passed"), std::string::npos)
      << logged;
}

TEST_F(RestServerTest, ThrowingHandlerGives500AndTheServerKeepsServing) {
  std::vector<std::string> logged;
  std::mutex logged_mutex;
  RestServerOptions options = testOptions();
  options.log_error = [&](const std::string& message) {
    const std::lock_guard<std::mutex> lock(logged_mutex);
    logged.push_back(message);
  };
  RestServer server(options, [](const HttpRequest& request) -> HttpResponse {
    if (request.path == "/std") throw std::runtime_error("policy exploded");
    if (request.path == "/other") throw 42;
    if (request.path == "/bad-status") return HttpResponse{0, "text/plain", ""};
    return ok("{}");
  });
  for (const char* path : {"/std", "/other", "/bad-status"}) {
    const CurlReply reply = get(server.url() + path);
    EXPECT_EQ(reply.status, 500) << path;
    EXPECT_EQ(reply.body, R"({"error":"internal error"})") << path;
    EXPECT_EQ(reply.content_type, "application/json") << path;
  }
  EXPECT_EQ(get(server.url() + "/fine").status, 200);
  const std::lock_guard<std::mutex> lock(logged_mutex);
  ASSERT_EQ(logged.size(), 3u);
  EXPECT_EQ(logged[0], "handler failed on GET /std: policy exploded");
  EXPECT_EQ(logged[1], "handler failed on GET /other: unknown exception");
  EXPECT_EQ(logged[2], "handler answered GET /bad-status with HTTP status 0");
}

TEST_F(RestServerTest, ListensOnlyOnTheConfiguredAddress) {
  RestServer server(testOptions(), [](const HttpRequest&) { return ok("{}"); });
  EXPECT_EQ(server.url(), "http://127.0.0.1:" + std::to_string(server.boundPort()));
  EXPECT_TRUE(RawClient("127.0.0.1", server.boundPort()).connected());
  // 127.0.0.2 is this machine too (all of 127/8 is loopback), but not the bound address.
  RawClient other_address("127.0.0.2", server.boundPort());
  EXPECT_FALSE(other_address.connected());
  EXPECT_EQ(other_address.connectErrno(), ECONNREFUSED);
}

TEST_F(RestServerTest, ServesIpv6) {
  RestServerOptions options = testOptions();
  options.address = "::1";
  std::unique_ptr<RestServer> server;
  try {
    server = std::make_unique<RestServer>(options, [](const HttpRequest& request) {
      return ok(request.peer);
    });
  } catch (const std::runtime_error& error) {
    GTEST_SKIP() << "no IPv6 loopback here: " << error.what();
  }
  EXPECT_EQ(server->url(), "http://[::1]:" + std::to_string(server->boundPort()));
  const CurlReply reply = get(server->url() + "/peer");
  EXPECT_EQ(reply.status, 200) << curl_easy_strerror(reply.code);
  EXPECT_EQ(reply.body, "::1");
}

std::string constructionError(const RestServerOptions& options) {
  try {
    RestServer server(options, [](const HttpRequest&) { return ok("{}"); });
  } catch (const std::runtime_error& error) {
    return error.what();
  }
  return "";
}

TEST_F(RestServerTest, PortInUseThrowsSayingWhy) {
  RestServer first(testOptions(), [](const HttpRequest&) { return ok("{}"); });
  RestServerOptions options = testOptions();
  options.port = first.boundPort();
  const std::string error = constructionError(options);
  EXPECT_NE(error.find("cannot listen on 127.0.0.1:" + std::to_string(first.boundPort()) + ": "),
            std::string::npos) << error;
  EXPECT_NE(error.find("Address already in use"), std::string::npos) << error;
}

TEST_F(RestServerTest, BadOptionsThrowSayingWhy) {
  RestServerOptions options = testOptions();
  options.address = "localhost";
  EXPECT_EQ(constructionError(options),
            "cannot listen on 'localhost': not a numeric IPv4 or IPv6 address");
  options = testOptions();
  options.port = 70000;
  EXPECT_EQ(constructionError(options), "REST server: port 70000 is outside 0..65535");
  options = testOptions();
  options.tls_cert_pem = "-----BEGIN CERTIFICATE-----";
  EXPECT_EQ(constructionError(options), "REST server: TLS needs both a certificate and a key");
  options.tls_key_pem = "not a key";
  const std::string bad_tls = constructionError(options);
  EXPECT_EQ(bad_tls.rfind("cannot listen on 127.0.0.1:0: ", 0), 0u) << bad_tls;
}

TEST_F(RestServerTest, StalledClientIsDisconnectedAfterTheTimeout) {
  RestServerOptions options = testOptions();
  options.connection_timeout_s = 1;
  RestServer server(options, [](const HttpRequest&) { return ok("{}"); });
  RawClient client("127.0.0.1", server.boundPort());
  ASSERT_TRUE(client.send("POST /v1/jobs/1/report HTTP/1.1\r\nHost: x\r\n"));  // and no more
  const auto start = std::chrono::steady_clock::now();
  const std::optional<std::string> received = client.receiveUntilClosed();
  const auto waited = std::chrono::steady_clock::now() - start;
  ASSERT_TRUE(received.has_value()) << "still connected after 5 s";
  EXPECT_GE(waited, 500ms);
  EXPECT_LE(waited, 3s);
}

// A self-signed certificate for 127.0.0.1, made with the openssl command in a temporary folder.
class TemporaryCertificate {
 public:
  TemporaryCertificate() {
    char folder_template[] = "/tmp/rest_server_test.XXXXXX";
    if (mkdtemp(folder_template) == nullptr) throw std::runtime_error("mkdtemp failed");
    folder_ = folder_template;
    const std::string command =
        "openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=127.0.0.1"
        " -addext subjectAltName=IP:127.0.0.1 -keyout " + keyFile() + " -out " + certFile() +
        " 2>/dev/null";
    if (std::system(command.c_str()) != 0) throw std::runtime_error("openssl failed");
  }
  ~TemporaryCertificate() { std::filesystem::remove_all(folder_); }

  std::string certFile() const { return folder_ + "/cert.pem"; }
  std::string keyFile() const { return folder_ + "/key.pem"; }

 private:
  std::string folder_;
};

std::string readFile(const std::string& path) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

TEST_F(RestServerTest, ServesHttpsWithTheGivenCertificate) {
  const TemporaryCertificate certificate;
  RestServerOptions options = testOptions();
  options.tls_cert_pem = readFile(certificate.certFile());
  options.tls_key_pem = readFile(certificate.keyFile());
  options.log_error = [](const std::string&) {};  // the plain-HTTP probe below logs a TLS error
  RestServer server(options, [](const HttpRequest& request) { return ok(request.body); });
  EXPECT_EQ(server.url(), "https://127.0.0.1:" + std::to_string(server.boundPort()));
  const CurlReply reply = perform(
      {server.url() + "/v1/jobs/7/report", "POST", "secret", {}, false, certificate.certFile()});
  ASSERT_EQ(reply.code, CURLE_OK) << curl_easy_strerror(reply.code);
  EXPECT_EQ(reply.status, 200);
  EXPECT_EQ(reply.body, "secret");
  EXPECT_NE(get("http://127.0.0.1:" + std::to_string(server.boundPort()) + "/").status, 200);
}

TEST_F(RestServerTest, ConcurrentRequestsAreAllAnswered) {
  RestServerOptions options = testOptions();
  options.threads = 4;
  std::atomic<int> in_flight{0};
  std::atomic<int> most_in_flight{0};
  RestServer server(options, [&](const HttpRequest& request) {
    const int now = ++in_flight;
    int seen = most_in_flight.load();
    while (now > seen && !most_in_flight.compare_exchange_weak(seen, now)) {
    }
    std::this_thread::sleep_for(20ms);
    --in_flight;
    return ok(request.body);
  });
  constexpr int kClients = 8;
  constexpr int kRequestsPerClient = 10;
  std::atomic<int> answered{0};
  std::vector<std::thread> clients;
  for (int client = 0; client < kClients; ++client) {
    clients.emplace_back([&, client] {
      for (int request = 0; request < kRequestsPerClient; ++request) {
        const std::string body = std::to_string(client) + "/" + std::to_string(request);
        const CurlReply reply = post(server.url() + "/echo", body);
        if (reply.status == 200 && reply.body == body) ++answered;
      }
    });
  }
  for (std::thread& client : clients) client.join();
  EXPECT_EQ(answered, kClients * kRequestsPerClient);
  EXPECT_GT(most_in_flight, 1);
}

TEST_F(RestServerTest, ClientHangingUpMidReplyDoesNotRaiseSigpipe) {
  const auto previous_handler = std::signal(SIGPIPE, SIG_DFL);  // SIGPIPE would end this test
  RestServerOptions options = testOptions();
  options.log_error = [](const std::string&) {};  // the failed send is logged
  RestServer server(options, [](const HttpRequest& request) {
    std::this_thread::sleep_for(100ms);
    return ok(request.path == "/big" ? std::string(8 << 20, 'x') : "{}");
  });
  {
    RawClient client("127.0.0.1", server.boundPort());
    ASSERT_TRUE(client.send("GET /big HTTP/1.1\r\nHost: x\r\n\r\n"));
  }  // closed before the reply: the server's writes meet a reset connection
  std::this_thread::sleep_for(300ms);
  EXPECT_EQ(get(server.url() + "/small").status, 200);
  std::signal(SIGPIPE, previous_handler);
}

}  // namespace
}  // namespace pollux::service
