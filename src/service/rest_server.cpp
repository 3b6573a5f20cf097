// SPDX-License-Identifier: GPL-2.0-or-later
#include "rest_server.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <microhttpd.h>

#include <algorithm>
#include <cctype>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <stdexcept>
#include <vector>

namespace pollux::service {

namespace {

const char kInternalErrorBody[] = R"({"error":"internal error"})";

struct ListenAddress {
  sockaddr_storage storage{};
  bool ipv6 = false;
};

ListenAddress parseListenAddress(const std::string& address, int port) {
  ListenAddress listen;
  auto* v4 = reinterpret_cast<sockaddr_in*>(&listen.storage);
  if (inet_pton(AF_INET, address.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(static_cast<uint16_t>(port));
    return listen;
  }
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&listen.storage);
  if (inet_pton(AF_INET6, address.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(static_cast<uint16_t>(port));
    listen.ipv6 = true;
    return listen;
  }
  throw std::runtime_error("cannot listen on '" + address +
                           "': not a numeric IPv4 or IPv6 address");
}

std::string hostAndPort(const std::string& address, int port) {
  const bool ipv6 = address.find(':') != std::string::npos;
  return (ipv6 ? "[" + address + "]" : address) + ":" + std::to_string(port);
}

void requireAtLeast(int value, int minimum, const char* what) {
  if (value < minimum) {
    throw std::runtime_error(std::string("REST server: ") + what + " must be at least " +
                             std::to_string(minimum) + ", not " + std::to_string(value));
  }
}

const RestServerOptions& validated(const RestServerOptions& options) {
  if (options.port < 0 || options.port > 65535) {
    throw std::runtime_error("REST server: port " + std::to_string(options.port) +
                             " is outside 0..65535");
  }
  requireAtLeast(options.threads, 1, "threads");
  requireAtLeast(options.connection_timeout_s, 1, "connection timeout (s)");
  requireAtLeast(options.max_connections, options.threads, "max connections (one per thread)");
  requireAtLeast(options.max_connections_per_ip, 1, "max connections per IP");
  if (options.tls_cert_pem.empty() != options.tls_key_pem.empty()) {
    throw std::runtime_error("REST server: TLS needs both a certificate and a key");
  }
  if (!options.tls_cert_pem.empty() && MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES) {
    throw std::runtime_error("REST server: this libmicrohttpd was built without TLS");
  }
  // Inside slurmctld a peer closing early must never raise SIGPIPE.
  if (MHD_is_feature_supported(MHD_FEATURE_AUTOSUPPRESS_SIGPIPE) != MHD_YES) {
    throw std::runtime_error("REST server: this libmicrohttpd cannot suppress SIGPIPE");
  }
  return options;
}

std::string currentExceptionMessage() {
  try {
    throw;
  } catch (const std::exception& error) {
    return error.what();
  } catch (...) {
    return "unknown exception";
  }
}

std::string toLower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

// An allocation failure here leaves headers out; the handler then rejects the request.
MHD_Result collectHeader(void* headers, MHD_ValueKind, const char* name,
                         const char* value) noexcept {
  try {
    auto& collected = *static_cast<std::map<std::string, std::string>*>(headers);
    const auto [entry, inserted] = collected.emplace(toLower(name), value ? value : "");
    if (!inserted) entry->second += std::string(", ") + (value ? value : "");
    return MHD_YES;
  } catch (...) {
    return MHD_NO;
  }
}

std::map<std::string, std::string> requestHeaders(MHD_Connection* connection) {
  std::map<std::string, std::string> headers;
  MHD_get_connection_values(connection, MHD_HEADER_KIND, &collectHeader, &headers);
  return headers;
}

std::string peerAddress(MHD_Connection* connection) {
  const MHD_ConnectionInfo* info =
      MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
  if (info == nullptr || info->client_addr == nullptr) return "";
  char text[INET6_ADDRSTRLEN] = "";
  const sockaddr* peer = info->client_addr;
  const void* address =
      peer->sa_family == AF_INET6
          ? static_cast<const void*>(&reinterpret_cast<const sockaddr_in6*>(peer)->sin6_addr)
          : static_cast<const void*>(&reinterpret_cast<const sockaddr_in*>(peer)->sin_addr);
  return inet_ntop(peer->sa_family, address, text, sizeof text) ? text : "";
}

// The Content-Length the client announced; 0 without one (libmicrohttpd has checked its syntax).
uint64_t declaredBodyLength(MHD_Connection* connection) {
  const char* length =
      MHD_lookup_connection_value(connection, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
  return length ? std::strtoull(length, nullptr, 10) : 0;
}

MHD_Result queueResponse(MHD_Connection* connection, const HttpResponse& reply,
                         bool close_connection) {
  MHD_Response* response = MHD_create_response_from_buffer(
      reply.body.size(), const_cast<char*>(reply.body.data()), MHD_RESPMEM_MUST_COPY);
  if (response == nullptr) return MHD_NO;
  MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE, reply.content_type.c_str());
  if (close_connection) MHD_add_response_header(response, MHD_HTTP_HEADER_CONNECTION, "close");
  const MHD_Result queued =
      MHD_queue_response(connection, static_cast<unsigned int>(reply.status), response);
  MHD_destroy_response(response);
  return queued;
}

}  // namespace

class RestServer::Daemon {
 public:
  Daemon(const RestServerOptions& options, HttpHandler handler);
  ~Daemon() { MHD_stop_daemon(daemon_); }

  Daemon(const Daemon&) = delete;
  Daemon& operator=(const Daemon&) = delete;

  int port() const { return bound_port_; }
  bool tls() const { return !options_.tls_cert_pem.empty(); }
  const std::string& address() const { return options_.address; }

 private:
  struct PendingRequest {
    std::string body;
    size_t bytes_received = 0;  // counts on past max_body_bytes, when the body is dropped
  };

  static MHD_Result onRequest(void* self, MHD_Connection* connection, const char* url,
                              const char* method, const char* version, const char* upload_data,
                              size_t* upload_data_size, void** request_state) noexcept;
  static void onRequestCompleted(void* self, MHD_Connection* connection, void** request_state,
                                 MHD_RequestTerminationCode code) noexcept;
  static void onLibraryMessage(void* self, const char* format, va_list arguments) noexcept;

  unsigned int daemonFlags() const;
  std::vector<MHD_OptionItem> daemonSettings() const;
  void finishStartup();

  MHD_Result startRequest(MHD_Connection* connection, void** request_state);
  MHD_Result receiveBody(PendingRequest& pending, const char* data, size_t* size);
  MHD_Result finishRequest(MHD_Connection* connection, const char* url, const char* method,
                           PendingRequest& pending);
  MHD_Result refuseBodyTooLarge(MHD_Connection* connection) const;
  HttpResponse callHandler(const HttpRequest& request) const;

  void recordLibraryMessage(const std::string& message);
  void logError(const std::string& message) const noexcept;
  void logCurrentException(const std::string& context) const noexcept;

  const RestServerOptions options_;
  const HttpHandler handler_;
  const ListenAddress listen_address_;
  MHD_Daemon* daemon_ = nullptr;
  int bound_port_ = 0;
  std::mutex startup_mutex_;
  bool starting_ = true;
  std::vector<std::string> startup_messages_;  // libmicrohttpd's, held for the exception
};

RestServer::Daemon::Daemon(const RestServerOptions& options, HttpHandler handler)
    : options_(validated(options)),
      handler_(std::move(handler)),
      listen_address_(parseListenAddress(options_.address, options_.port)) {
  const std::vector<MHD_OptionItem> settings = daemonSettings();
  daemon_ = MHD_start_daemon(
      daemonFlags(), static_cast<uint16_t>(options_.port), nullptr, nullptr, &onRequest, this,
      MHD_OPTION_EXTERNAL_LOGGER, static_cast<MHD_LogCallback>(&onLibraryMessage), this,
      MHD_OPTION_NOTIFY_COMPLETED, static_cast<MHD_RequestCompletedCallback>(&onRequestCompleted),
      this, MHD_OPTION_ARRAY, settings.data(), MHD_OPTION_END);
  finishStartup();
}

unsigned int RestServer::Daemon::daemonFlags() const {
  // MHD_USE_AUTO picks epoll: slurmctld holds many descriptors and select() stops at 1024.
  unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO | MHD_USE_ERROR_LOG;
  if (listen_address_.ipv6) flags |= MHD_USE_IPv6;
  if (tls()) flags |= MHD_USE_TLS;
  return flags;
}

std::vector<MHD_OptionItem> RestServer::Daemon::daemonSettings() const {
  std::vector<MHD_OptionItem> settings = {
      {MHD_OPTION_SOCK_ADDR, 0, const_cast<sockaddr_storage*>(&listen_address_.storage)},
      {MHD_OPTION_CONNECTION_TIMEOUT, options_.connection_timeout_s, nullptr},
      {MHD_OPTION_CONNECTION_LIMIT, options_.max_connections, nullptr},
      {MHD_OPTION_PER_IP_CONNECTION_LIMIT, options_.max_connections_per_ip, nullptr},
  };
  // libmicrohttpd rejects a pool of one thread; one thread is its plain internal thread.
  if (options_.threads > 1) {
    settings.push_back({MHD_OPTION_THREAD_POOL_SIZE, options_.threads, nullptr});
  }
  if (tls()) {
    settings.push_back(
        {MHD_OPTION_HTTPS_MEM_CERT, 0, const_cast<char*>(options_.tls_cert_pem.c_str())});
    settings.push_back(
        {MHD_OPTION_HTTPS_MEM_KEY, 0, const_cast<char*>(options_.tls_key_pem.c_str())});
  }
  settings.push_back({MHD_OPTION_END, 0, nullptr});
  return settings;
}

void RestServer::Daemon::finishStartup() {
  std::vector<std::string> messages;
  {
    const std::lock_guard<std::mutex> lock(startup_mutex_);
    starting_ = false;
    messages.swap(startup_messages_);
  }
  if (daemon_ == nullptr) {
    std::string reasons;
    for (const std::string& message : messages) {
      reasons += (reasons.empty() ? "" : "; ") + message;
    }
    throw std::runtime_error("cannot listen on " + hostAndPort(options_.address, options_.port) +
                             ": " + (reasons.empty() ? "libmicrohttpd failed to start" : reasons));
  }
  for (const std::string& message : messages) logError(message);
  const MHD_DaemonInfo* info = MHD_get_daemon_info(daemon_, MHD_DAEMON_INFO_BIND_PORT);
  bound_port_ = info != nullptr && info->port != 0 ? info->port : options_.port;
}

MHD_Result RestServer::Daemon::onRequest(void* self, MHD_Connection* connection, const char* url,
                                         const char* method, const char*,
                                         const char* upload_data, size_t* upload_data_size,
                                         void** request_state) noexcept {
  auto& daemon = *static_cast<Daemon*>(self);
  try {
    if (*request_state == nullptr) return daemon.startRequest(connection, request_state);
    auto& pending = *static_cast<PendingRequest*>(*request_state);
    if (*upload_data_size != 0) return daemon.receiveBody(pending, upload_data, upload_data_size);
    return daemon.finishRequest(connection, url, method, pending);
  } catch (...) {
    daemon.logCurrentException("dropping a connection");
    return MHD_NO;
  }
}

void RestServer::Daemon::onRequestCompleted(void*, MHD_Connection*, void** request_state,
                                            MHD_RequestTerminationCode) noexcept {
  delete static_cast<PendingRequest*>(*request_state);
  *request_state = nullptr;
}

void RestServer::Daemon::onLibraryMessage(void* self, const char* format,
                                          va_list arguments) noexcept {
  char text[512];
  std::vsnprintf(text, sizeof text, format, arguments);
  try {
    std::string message = text;
    while (!message.empty() && std::isspace(static_cast<unsigned char>(message.back()))) {
      message.pop_back();
    }
    static_cast<Daemon*>(self)->recordLibraryMessage(message);
  } catch (...) {
    // Out of memory while logging: the message is lost, the server goes on.
  }
}

void RestServer::Daemon::recordLibraryMessage(const std::string& message) {
  {
    const std::lock_guard<std::mutex> lock(startup_mutex_);
    if (starting_) {
      startup_messages_.push_back(message);
      return;
    }
  }
  logError(message);
}

void RestServer::Daemon::logError(const std::string& message) const noexcept {
  try {
    if (options_.log_error) {
      options_.log_error(message);
    } else {
      std::fprintf(stderr, "sched/pollux: REST: %s\n", message.c_str());
    }
  } catch (...) {
    // A failing log sink must not take the connection thread down.
  }
}

void RestServer::Daemon::logCurrentException(const std::string& context) const noexcept {
  try {
    logError(context + ": " + currentExceptionMessage());
  } catch (...) {
    logError(context);
  }
}

MHD_Result RestServer::Daemon::startRequest(MHD_Connection* connection, void** request_state) {
  // Refused before the body is read (and before "100 Continue" is sent to a client expecting it).
  if (declaredBodyLength(connection) > options_.max_body_bytes) {
    return refuseBodyTooLarge(connection);
  }
  *request_state = new PendingRequest();
  return MHD_YES;
}

MHD_Result RestServer::Daemon::receiveBody(PendingRequest& pending, const char* data,
                                           size_t* size) {
  const size_t chunk_size = *size;
  *size = 0;
  pending.bytes_received += chunk_size;
  if (pending.bytes_received <= options_.max_body_bytes) {
    pending.body.append(data, chunk_size);
    return MHD_YES;
  }
  // Only a chunked body gets here. libmicrohttpd 0.9 can reply only once the request is
  // complete, so drain up to max_body_bytes more for the client to read its 413, then hang up.
  pending.body.clear();
  const size_t bytes_over_limit = pending.bytes_received - options_.max_body_bytes;
  if (bytes_over_limit <= options_.max_body_bytes) return MHD_YES;
  logError("closing a connection whose chunked body passed " +
           std::to_string(pending.bytes_received) + " bytes");
  return MHD_NO;
}

MHD_Result RestServer::Daemon::finishRequest(MHD_Connection* connection, const char* url,
                                             const char* method, PendingRequest& pending) {
  if (pending.bytes_received > options_.max_body_bytes) return refuseBodyTooLarge(connection);
  HttpRequest request;
  request.method = method;
  request.path = url;
  request.headers = requestHeaders(connection);
  request.body = std::move(pending.body);
  request.peer = peerAddress(connection);
  return queueResponse(connection, callHandler(request), false);
}

MHD_Result RestServer::Daemon::refuseBodyTooLarge(MHD_Connection* connection) const {
  HttpResponse reply;
  reply.status = MHD_HTTP_CONTENT_TOO_LARGE;
  reply.body = R"({"error":"request body larger than )" + std::to_string(options_.max_body_bytes) +
               R"( bytes"})";
  return queueResponse(connection, reply, true);
}

HttpResponse RestServer::Daemon::callHandler(const HttpRequest& request) const {
  const std::string what = request.method + " " + request.path;
  try {
    HttpResponse response = handler_(request);
    if (response.status >= 100 && response.status <= 599) return response;
    logError("handler answered " + what + " with HTTP status " + std::to_string(response.status));
  } catch (...) {
    logCurrentException("handler failed on " + what);
  }
  HttpResponse internal_error;
  internal_error.status = MHD_HTTP_INTERNAL_SERVER_ERROR;
  internal_error.body = kInternalErrorBody;
  return internal_error;
}

RestServer::RestServer(const RestServerOptions& options, HttpHandler handler)
    : daemon_(std::make_unique<Daemon>(options, std::move(handler))) {}

RestServer::~RestServer() = default;

int RestServer::boundPort() const { return daemon_->port(); }

std::string RestServer::url() const {
  return (daemon_->tls() ? "https://" : "http://") + hostAndPort(daemon_->address(), boundPort());
}

}  // namespace pollux::service
