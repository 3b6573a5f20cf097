// SPDX-License-Identifier: GPL-2.0-or-later
#include "text_file.hpp"

#include <fstream>
#include <sstream>

namespace pollux::io {

std::optional<std::string> readTextFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace pollux::io
