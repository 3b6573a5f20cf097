// SPDX-License-Identifier: GPL-2.0-or-later
#include "state_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "common/invalid_input.hpp"
#include "common/schema/json_reader.hpp"
#include "text_file.hpp"

namespace pollux::io {

namespace {

[[noreturn]] void failWithErrno(const std::string& what, const std::string& path) {
  throw std::runtime_error(what + " " + path + ": " + std::strerror(errno));
}

void writeAll(int fd, const std::string& data, const std::string& path) {
  size_t written = 0;
  while (written < data.size()) {
    const ssize_t n = ::write(fd, data.data() + written, data.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) failWithErrno("cannot write", path);
    written += static_cast<size_t>(n);
  }
}

}  // namespace

namespace {

std::string stateText(const Json::Value& state) {
  Json::StreamWriterBuilder writer;
  writer["indentation"] = "";
  return Json::writeString(writer, state) + "\n";
}

void writeStateFile(const std::string& path, const std::string& data) {
  const std::string temporary = path + ".new";
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) failWithErrno("cannot create", temporary);
  try {
    writeAll(fd, data, temporary);
    if (::fsync(fd) != 0) failWithErrno("cannot sync", temporary);
  } catch (...) {
    ::close(fd);
    ::unlink(temporary.c_str());
    throw;
  }
  ::close(fd);
  if (::rename(temporary.c_str(), path.c_str()) != 0) failWithErrno("cannot replace", path);
}

}  // namespace

size_t saveState(const std::string& path, const Json::Value& state) {
  const std::string data = stateText(state);
  writeStateFile(path, data);
  return data.size();
}

SaveResult saveStateIfChanged(const std::string& path, const Json::Value& state,
                              std::string& last_written) {
  std::string data = stateText(state);
  SaveResult result{data.size(), false};
  if (data == last_written) return result;
  last_written.clear();  // a failed write leaves nothing known written
  writeStateFile(path, data);
  last_written = std::move(data);
  result.written = true;
  return result;
}

std::optional<Json::Value> loadState(const std::string& path) {
  const auto text = readTextFile(path);
  if (!text) {
    if (errno == ENOENT) return std::nullopt;
    failWithErrno("cannot read", path);
  }
  try {
    Json::Value state = schema::JsonField::parseDocument(*text);
    if (!state.isObject()) throw InvalidInput("not a JSON object");
    return state;
  } catch (const InvalidInput& error) {
    throw InvalidInput(path + ": " + error.what());
  }
}

}  // namespace pollux::io
