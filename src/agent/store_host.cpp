// SPDX-License-Identifier: GPL-2.0-or-later
#include "store_host.hpp"

#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <regex>
#include <thread>

namespace pollux::agent {
namespace {

bool accepts(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(static_cast<uint16_t>(port));
  const bool connected =
      connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
  close(fd);
  return connected;
}

}  // namespace

bool isPythonInterpreter(const std::string& program) {
  static const std::regex kInterpreter(R"((.*/)?python(\d+(\.\d+)?)?)");
  return std::regex_match(program, kInterpreter);
}

StoreHost::StoreHost(const std::string& python, int port, std::chrono::milliseconds timeout)
    : process_(std::make_unique<ChildProcess>(
          std::vector<std::string>{python, "-m", "pollux.store", std::to_string(port)},
          std::map<std::string, std::string>{})) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (exited()) return;  // the port was taken, or there is no pollux package
    if (accepts(port)) {
      ready_ = true;
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

StoreHost::~StoreHost() {
  if (exited()) return;
  process_->signal(SIGTERM);
  for (int waited_ms = 0; waited_ms < 5000; waited_ms += 50) {
    if (exited()) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  process_->signal(SIGKILL);
  while (!exited()) std::this_thread::sleep_for(std::chrono::milliseconds(10));
}

bool StoreHost::exited() {
  if (!exited_ && process_->poll()) exited_ = true;
  return exited_;
}

}  // namespace pollux::agent
