// SPDX-License-Identifier: GPL-2.0-or-later
#include "auth_info.hpp"

#include <gtest/gtest.h>

namespace pollux::auth {
namespace {

TEST(AuthInfo, SocketOptionAmongOthers) {
  EXPECT_EQ(mungeSocketFromAuthInfo("socket=/run/m.sock"), "/run/m.sock");
  EXPECT_EQ(mungeSocketFromAuthInfo("cred_expire=120,Socket=/run/m.sock,ttl=60"), "/run/m.sock");
  EXPECT_EQ(mungeSocketFromAuthInfo("socket=/a,socket=/b"), "/b");  // the last one counts
}

TEST(AuthInfo, NoSocketOptionMeansTheDefault) {
  EXPECT_EQ(mungeSocketFromAuthInfo(""), "");
  EXPECT_EQ(mungeSocketFromAuthInfo("cred_expire=120"), "");
  EXPECT_EQ(mungeSocketFromAuthInfo("mysocket=/x"), "");  // not strstr: a whole option name
}

}  // namespace
}  // namespace pollux::auth
