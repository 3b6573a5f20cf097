// SPDX-License-Identifier: GPL-2.0-or-later
// scontrol wrapper: answers `scontrol show pollux [job=ID] [--json]` from sched/pollux's REST
// endpoint and hands every other command to the real scontrol unchanged.
#include <strings.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include <json/json.h>

#include "client/endpoint.hpp"
#include "client/http_client.hpp"
#include "client/status_request.hpp"
#include "client/status_text.hpp"
#include "munge/munge_credential.hpp"
#include "common/schema/json_reader.hpp"

#ifndef REAL_SCONTROL
#error "REAL_SCONTROL must name the real scontrol (set by configure)"
#endif

namespace {

struct Query {
  std::string job_id;  // empty: everything
  bool json = false;
};

// `scontrol [options] show pollux ...`: the arguments after "pollux", or false.
bool isShowPollux(int argc, char** argv, int& first_argument) {
  int i = 1;
  while (i < argc && argv[i][0] == '-') ++i;
  if (i + 1 >= argc || strcasecmp(argv[i], "show") != 0 || strcasecmp(argv[i + 1], "pollux") != 0) {
    return false;
  }
  first_argument = i + 2;
  return true;
}

Query parseQuery(int argc, char** argv, int first) {
  Query query;
  for (int i = first; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--json") {
      query.json = true;
    } else if (strncasecmp(arg.c_str(), "job=", 4) == 0 && arg.size() > 4 &&
               arg.find_first_not_of("0123456789", 4) == std::string::npos) {
      query.job_id = arg.substr(4);
    } else {
      throw std::invalid_argument("unknown argument '" + arg + "' (usage: scontrol show pollux [job=ID] [--json])");
    }
  }
  return query;
}

int showPollux(const Query& query) {
  const pollux::client::SlurmSettings settings = pollux::client::readSlurmSettings();
  const std::string& base = settings.rest_url;
  const std::string path = query.job_id.empty() ? "/v1/status" : "/v1/jobs/" + query.job_id;
  const std::string url = base + path;
  pollux::client::HttpResponse response;
  try {
    pollux::client::HttpClient client;
    response = pollux::client::getStatus(client, base, path, settings.munge_socket);
  } catch (const pollux::auth::CredentialError& error) {
    std::cerr << "scontrol show pollux: cannot get a MUNGE credential: " << error.what() << "\n";
    return 1;
  } catch (const std::exception& error) {
    std::cerr << "scontrol show pollux: cannot reach sched/pollux at " << base << ": " << error.what()
              << "\n";
    return 1;
  }
  Json::Value document;
  try {
    document = pollux::schema::JsonField::parseDocument(response.body);
  } catch (const std::exception& error) {
    std::cerr << "scontrol show pollux: bad answer from " << url << ": " << error.what() << "\n";
    return 1;
  }
  if (response.status != 200) {
    std::cerr << "scontrol show pollux: "
              << document.get("error", "HTTP " + std::to_string(response.status)).asString()
              << "\n";
    return 1;
  }
  if (query.json) {
    std::cout << document << "\n";
  } else if (query.job_id.empty()) {
    std::cout << pollux::client::statusText(document);
  } else {
    std::cout << pollux::client::jobText(document);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  int first = 0;
  if (!isShowPollux(argc, argv, first)) {
    argv[0] = const_cast<char*>(REAL_SCONTROL);
    execv(REAL_SCONTROL, argv);
    std::cerr << "scontrol wrapper: cannot run " << REAL_SCONTROL << ": " << std::strerror(errno) << "\n";
    return 1;
  }
  try {
    return showPollux(parseQuery(argc, argv, first));
  } catch (const std::exception& error) {
    std::cerr << "scontrol show pollux: " << error.what() << "\n";
    return 1;
  }
}
