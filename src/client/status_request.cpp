// SPDX-License-Identifier: GPL-2.0-or-later
#include "status_request.hpp"

#include "munge/munge_credential.hpp"

namespace pollux::client {

HttpResponse getStatus(HttpClient& client, const std::string& rest_url, const std::string& path,
                       const std::string& munge_socket) {
  const std::string credential =
      auth::encodeCredential(auth::statusPayload(path), munge_socket);
  return client.get(rest_url + path, {"X-Munge-Cred: " + credential});
}

}  // namespace pollux::client
