// SPDX-License-Identifier: GPL-2.0-or-later
#include "node_list.hpp"

namespace pollux {

std::string commaJoined(const std::vector<std::string>& names) {
  std::string text;
  for (const auto& name : names) text += (text.empty() ? "" : ",") + name;
  return text;
}

}  // namespace pollux
