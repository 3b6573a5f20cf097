// SPDX-License-Identifier: GPL-2.0-or-later
#include "channel_server.hpp"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <system_error>

namespace pollux::agent {
namespace {

constexpr size_t kMaxPacket = 4096;  // larger than any valid message, so overlong ones show

[[noreturn]] void throwErrno(const std::string& what) {
  throw std::system_error(errno, std::generic_category(), what);
}

}  // namespace

ChannelServer::ChannelServer(const std::string& parent) {
  std::string pattern = parent + "/pollux-agent-XXXXXX";
  if (!mkdtemp(pattern.data())) throwErrno("cannot create a directory in " + parent);
  directory_ = pattern;
  path_ = directory_ + "/channel";
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (path_.size() >= sizeof address.sun_path) {
    rmdir(directory_.c_str());
    throw std::system_error(ENAMETOOLONG, std::generic_category(), "socket path " + path_);
  }
  std::strcpy(address.sun_path, path_.c_str());
  listener_ = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (listener_ < 0 || bind(listener_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      listen(listener_, 16) != 0) {
    const int saved = errno;
    if (listener_ >= 0) close(listener_);
    rmdir(directory_.c_str());
    errno = saved;
    throwErrno("cannot listen on " + path_);
  }
}

ChannelServer::~ChannelServer() {
  for (const int fd : connections_) close(fd);
  close(listener_);
  unlink(path_.c_str());
  rmdir(directory_.c_str());
}

std::vector<int> ChannelServer::pollDescriptors() const {
  std::vector<int> descriptors{listener_};
  descriptors.insert(descriptors.end(), connections_.begin(), connections_.end());
  return descriptors;
}

bool ChannelServer::acceptConnection() {
  const int fd = accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
  if (fd < 0) return false;
  connections_.push_back(fd);
  return true;
}

bool ChannelServer::receive(int fd, std::string& message) {
  char packet[kMaxPacket];
  const ssize_t got = recv(fd, packet, sizeof packet, 0);
  if (got < 0 && (errno == EAGAIN || errno == EINTR)) {
    message.clear();
    return true;
  }
  if (got <= 0) {
    drop(fd);
    return false;
  }
  message.assign(packet, static_cast<size_t>(got));
  return true;
}

int ChannelServer::broadcast(std::string_view message) {
  int delivered = 0;
  for (const int fd : connections_) {
    if (send(fd, message.data(), message.size(), MSG_DONTWAIT | MSG_NOSIGNAL) ==
        static_cast<ssize_t>(message.size()))
      ++delivered;
  }
  return delivered;
}

void ChannelServer::drop(int fd) {
  close(fd);
  connections_.erase(std::remove(connections_.begin(), connections_.end(), fd), connections_.end());
}

}  // namespace pollux::agent
