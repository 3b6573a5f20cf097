// SPDX-License-Identifier: GPL-2.0-or-later
// A file of a test's text under /tmp, removed when the object goes: a temporary TempFile
// passed to a reader lives to the end of the statement that reads it.
#pragma once

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <string>

namespace pollux::testing {

class TempFile {
 public:
  TempFile(const std::string& prefix, const std::string& text) {
    std::string pattern = "/tmp/" + prefix + "-XXXXXX";
    const int fd = mkstemp(pattern.data());
    if (fd < 0) throw std::runtime_error("mkstemp " + pattern + " failed");
    close(fd);
    path_ = pattern;
    std::ofstream(path_) << text;
  }
  ~TempFile() { std::remove(path_.c_str()); }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;

  operator const std::string&() const { return path_; }

 private:
  std::string path_;
};

}  // namespace pollux::testing
