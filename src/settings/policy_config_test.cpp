// SPDX-License-Identifier: GPL-2.0-or-later
#include "policy_config.hpp"

#include <gtest/gtest.h>

namespace pollux::config {
namespace {

TEST(PolicyConfigTest, PolicyKeysApplyOthersAreNotTheirs) {
  PolicyConfig config;
  EXPECT_TRUE(applyPolicySetting(config, splitSetting(" pollux_fairness_p = -0.5 ")));
  EXPECT_TRUE(applyPolicySetting(config, splitSetting("pollux_speed_a100=2")));
  EXPECT_TRUE(applyPolicySetting(config, splitSetting("pollux_default_speed=0.5")));
  EXPECT_DOUBLE_EQ(config.policy.fairness_p, -0.5);
  EXPECT_DOUBLE_EQ(config.policy.relative_speeds.at("a100"), 2);
  EXPECT_DOUBLE_EQ(config.default_speed, 0.5);
  EXPECT_FALSE(applyPolicySetting(config, splitSetting("pollux_rest_port=7000")));
  EXPECT_FALSE(applyPolicySetting(config, splitSetting("pollux_speed_=2")));
}

TEST(PolicyConfigTest, BadValuesAndTokensThrowLeavingTheConfig) {
  PolicyConfig config;
  EXPECT_THROW(applyPolicySetting(config, splitSetting("pollux_fairness_p=2")), std::invalid_argument);
  EXPECT_THROW(applyPolicySetting(config, splitSetting("pollux_time_limit=inf")), std::invalid_argument);
  EXPECT_THROW(splitSetting("pollux_fairness_p"), std::invalid_argument);
  EXPECT_DOUBLE_EQ(config.policy.fairness_p, PolicyConfig{}.policy.fairness_p);
  EXPECT_EQ(parseIntIn("12", 1, 20), 12);
  EXPECT_THROW(parseIntIn("1.5", 1, 20), std::invalid_argument);
  EXPECT_EQ(trim("  a b \t"), "a b");
}

}  // namespace
}  // namespace pollux::config
