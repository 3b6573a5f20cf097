// SPDX-License-Identifier: GPL-2.0-or-later
#include "endpoint.hpp"

#include <strings.h>

#include <cstdlib>
#include <sstream>

#include "common/auth/auth_info.hpp"
#include "settings/settings.hpp"
#include "io/text_file.hpp"

namespace pollux::client {
namespace {

bool startsWithNoCase(const std::string& text, const std::string& prefix) {
  return text.size() >= prefix.size() &&
         strncasecmp(text.c_str(), prefix.c_str(), prefix.size()) == 0;
}

// The value of the last `key=` line (comments and leading blanks ignored), up to a blank.
std::string lastAssignment(const std::string& slurm_conf_text, const std::string& key) {
  std::istringstream lines(slurm_conf_text);
  std::string line, value;
  while (std::getline(lines, line)) {
    line = line.substr(0, line.find('#'));
    const auto start = line.find_first_not_of(" \t");
    if (start == std::string::npos) continue;
    line = line.substr(start);
    if (startsWithNoCase(line, key + "=")) value = line.substr(key.size() + 1);
  }
  return value.substr(0, value.find_first_of(" \t\r"));
}

std::string restUrl(const settings::Config& config) {
  std::string host = config.rest_addr;
  if (host == "0.0.0.0") host = "127.0.0.1";
  if (host == "::") host = "::1";
  if (host.find(':') != std::string::npos) host = "[" + host + "]";
  const std::string scheme = config.tls_cert.empty() ? "http" : "https";
  return scheme + "://" + host + ":" + std::to_string(config.rest_port);
}

}  // namespace

std::string schedulerParameters(const std::string& slurm_conf_text) {
  return lastAssignment(slurm_conf_text, "SchedulerParameters");
}

std::string mungeSocketFromAuthInfo(const std::string& slurm_conf_text) {
  return auth::mungeSocketFromAuthInfo(lastAssignment(slurm_conf_text, "AuthInfo"));
}

SlurmSettings readSlurmSettings() {
  const char* env = std::getenv("SLURM_CONF");
  const std::string slurm_conf = env && *env ? env : "/etc/slurm/slurm.conf";
  const auto slash = slurm_conf.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : slurm_conf.substr(0, slash);
  const std::string text = io::readTextFile(slurm_conf).value_or("");
  const auto parsed = settings::parseConfig(io::readTextFile(dir + "/pollux.conf").value_or(""),
                                          schedulerParameters(text));
  return {restUrl(parsed.config), mungeSocketFromAuthInfo(text)};
}

}  // namespace pollux::client
