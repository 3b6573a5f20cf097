// SPDX-License-Identifier: GPL-2.0-or-later
#include "auth_info.hpp"

#include <strings.h>

#include <sstream>

namespace pollux::auth {

std::string mungeSocketFromAuthInfo(const std::string& auth_info) {
  static const std::string kOption = "socket=";
  std::istringstream options(auth_info);
  std::string option, socket;
  while (std::getline(options, option, ',')) {
    if (option.size() >= kOption.size() &&
        strncasecmp(option.c_str(), kOption.c_str(), kOption.size()) == 0) {
      socket = option.substr(kOption.size());
    }
  }
  return socket;
}

}  // namespace pollux::auth
