// SPDX-License-Identifier: GPL-2.0-or-later
#include "http_client.hpp"

#include <curl/curl.h>

#include <memory>

namespace pollux::client {
namespace {

size_t appendBody(char* data, size_t size, size_t count, void* body) {
  static_cast<std::string*>(body)->append(data, size * count);
  return size * count;
}

struct HeaderListDeleter {
  void operator()(curl_slist* list) const { curl_slist_free_all(list); }
};

}  // namespace

HttpClient::HttpClient(double timeout_s, std::string ca_file)
    : curl_(curl_easy_init()), timeout_ms_(static_cast<long>(timeout_s * 1000)),
      ca_file_(std::move(ca_file)) {
  if (!curl_) throw TransportError("cannot initialise libcurl");
}

HttpClient::~HttpClient() { curl_easy_cleanup(curl_); }

HttpResponse HttpClient::get(const std::string& url, const std::vector<std::string>& headers) {
  curl_easy_reset(curl_);
  curl_easy_setopt(curl_, CURLOPT_HTTPGET, 1L);
  return perform(url, headers);
}

HttpResponse HttpClient::post(const std::string& url, const std::string& body,
                              const std::vector<std::string>& headers) {
  curl_easy_reset(curl_);
  curl_easy_setopt(curl_, CURLOPT_POSTFIELDS, body.data());
  curl_easy_setopt(curl_, CURLOPT_POSTFIELDSIZE, static_cast<long>(body.size()));
  return perform(url, headers);
}

HttpResponse HttpClient::perform(const std::string& url, const std::vector<std::string>& headers) {
  std::unique_ptr<curl_slist, HeaderListDeleter> list;
  for (const std::string& header : headers) {
    curl_slist* extended = curl_slist_append(list.get(), header.c_str());
    if (!extended) throw TransportError("out of memory building request headers");
    list.release();
    list.reset(extended);
  }
  curl_easy_setopt(curl_, CURLOPT_HTTPHEADER, list.get());
  HttpResponse response{0, ""};
  curl_easy_setopt(curl_, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl_, CURLOPT_WRITEFUNCTION, appendBody);
  curl_easy_setopt(curl_, CURLOPT_WRITEDATA, &response.body);
  curl_easy_setopt(curl_, CURLOPT_TIMEOUT_MS, timeout_ms_);
  curl_easy_setopt(curl_, CURLOPT_NOSIGNAL, 1L);
  if (!ca_file_.empty()) curl_easy_setopt(curl_, CURLOPT_CAINFO, ca_file_.c_str());
  const CURLcode result = curl_easy_perform(curl_);
  if (result != CURLE_OK) throw TransportError(curl_easy_strerror(result));
  curl_easy_getinfo(curl_, CURLINFO_RESPONSE_CODE, &response.status);
  return response;
}

}  // namespace pollux::client
