// SPDX-License-Identifier: GPL-2.0-or-later
// The agent's end of the local channel: a UNIX SOCK_SEQPACKET socket in a private directory;
// each accepted trainer connection delivers one message per packet.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace pollux::agent {

class ChannelServer {
 public:
  // Creates a 0700 directory under `parent` holding the socket. Throws std::system_error.
  explicit ChannelServer(const std::string& parent);
  ~ChannelServer();
  ChannelServer(const ChannelServer&) = delete;
  ChannelServer& operator=(const ChannelServer&) = delete;

  const std::string& path() const { return path_; }
  // Descriptors to poll for input: the listening socket first, then the connections.
  std::vector<int> pollDescriptors() const;
  // Accepts a pending connection; returns false if there was none.
  bool acceptConnection();
  // Reads one packet from connection `fd`; false when the peer has gone (it is then dropped).
  bool receive(int fd, std::string& message);
  // Sends `message` to every connection, without blocking; returns how many took it.
  int broadcast(std::string_view message);

 private:
  void drop(int fd);
  std::string directory_;
  std::string path_;
  int listener_;
  std::vector<int> connections_;
};

}  // namespace pollux::agent
