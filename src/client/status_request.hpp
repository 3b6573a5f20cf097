// SPDX-License-Identifier: GPL-2.0-or-later
// Reads of sched/pollux's status (GET /v1/status, /v1/jobs/<id>), which the plugin answers only
// with a MUNGE credential whose payload is "pollux-status/1 <path>".
#pragma once

#include <string>

#include "http_client.hpp"

namespace pollux::client {

// `path` is "/v1/status" or "/v1/jobs/<id>". Throws TransportError, or auth::CredentialError
// when munged cannot encode the credential.
HttpResponse getStatus(HttpClient& client, const std::string& rest_url, const std::string& path,
                       const std::string& munge_socket);

}  // namespace pollux::client
