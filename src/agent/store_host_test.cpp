// SPDX-License-Identifier: GPL-2.0-or-later
#include "store_host.hpp"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testing/temp_file.hpp"

namespace pollux::agent {
namespace {

TEST(StoreHost, KnowsAPythonInterpreter) {
  EXPECT_TRUE(isPythonInterpreter("python3"));
  EXPECT_TRUE(isPythonInterpreter("/usr/bin/python3.11"));
  EXPECT_TRUE(isPythonInterpreter("/opt/venv/bin/python"));
  EXPECT_FALSE(isPythonInterpreter("/usr/bin/bash"));
  EXPECT_FALSE(isPythonInterpreter("train.py"));
  EXPECT_FALSE(isPythonInterpreter("python3-config"));
}

// A stand-in for the interpreter: `FAKE -m pollux.store PORT` listens on PORT with Debian's
// python3 (the real module needs PyTorch; python/tests/test_elastic.py runs it), or exits at
// once, as when the port is taken.
const char* const kListens =
    "#!/bin/sh\n"
    "exec /usr/bin/python3 -c 'import socket, sys, time\n"
    "s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n"
    "s.bind((\"0.0.0.0\", int(sys.argv[1]))); s.listen(); time.sleep(60)' \"$3\"\n";
const char* const kExits = "#!/bin/sh\nexit 1\n";

// A port nothing listens on now (the kernel's choice).
int freePort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  socklen_t size = sizeof address;
  bind(fd, reinterpret_cast<sockaddr*>(&address), size);
  getsockname(fd, reinterpret_cast<sockaddr*>(&address), &size);
  close(fd);
  return ntohs(address.sin_port);
}

TEST(StoreHost, IsReadyOnceItsPortAcceptsAndStopsWithIt) {
  const testing::TempFile python("pollux-fake-python3", kListens);
  chmod(static_cast<const std::string&>(python).c_str(), 0755);
  const int port = freePort();
  {
    const StoreHost store(python, port, std::chrono::seconds(20));
    ASSERT_TRUE(store.ready());
  }
  // Stopped and reaped: the port is free again.
  const StoreHost again(python, port, std::chrono::seconds(20));
  EXPECT_TRUE(again.ready());
}

TEST(StoreHost, IsNotReadyWhenItExits) {
  const testing::TempFile python("pollux-fake-python3", kExits);
  chmod(static_cast<const std::string&>(python).c_str(), 0755);
  const StoreHost store(python, freePort(), std::chrono::seconds(20));
  EXPECT_FALSE(store.ready());
}

}  // namespace
}  // namespace pollux::agent
