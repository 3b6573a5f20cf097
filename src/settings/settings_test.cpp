// SPDX-License-Identifier: GPL-2.0-or-later
#include "settings.hpp"

#include <gtest/gtest.h>

namespace pollux::settings {
namespace {

TEST(ConfigTest, DefaultsWithoutAnyToken) {
  const ParsedConfig parsed = parseConfig("", "bf_interval=30,bf_max_job_test=100");
  EXPECT_TRUE(parsed.errors.empty());
  EXPECT_EQ(parsed.config.interval_s, 60);
  EXPECT_EQ(parsed.config.event_delay_s, 1);
  EXPECT_EQ(parsed.config.rest_addr, "127.0.0.1");
  EXPECT_EQ(parsed.config.rest_port, 6830);
  EXPECT_TRUE(parsed.config.backfill);
  EXPECT_EQ(parsed.config.placement_ms, 500);
  EXPECT_DOUBLE_EQ(parsed.config.policy.fairness_p, -1.0);
}

TEST(ConfigTest, SchedulerParametersOverridePolluxConf) {
  const ParsedConfig parsed = parseConfig(
      "# site settings\npollux_interval=30\npollux_rest_port = 7000  # comment\n"
      "pollux_speed_a100=3.5\n",
      "default_queue_depth=100,pollux_interval=10,pollux_backfill=0,pollux_speed_v100=1,"
      "pollux_rest_addr=0.0.0.0,pollux_fairness_p=-0.5,pollux_restart_threshold=0.1,"
      "pollux_min_change_interval=120,pollux_time_limit=2,pollux_rest_threads=8,"
      "pollux_report_rate=5000,pollux_dump_rounds=/var/tmp/rounds,pollux_placement_ms=0");
  EXPECT_TRUE(parsed.errors.empty()) << parsed.errors.front();
  const Config& c = parsed.config;
  EXPECT_EQ(c.interval_s, 10);
  EXPECT_EQ(c.rest_port, 7000);
  EXPECT_EQ(c.rest_addr, "0.0.0.0");
  EXPECT_FALSE(c.backfill);
  EXPECT_DOUBLE_EQ(c.policy.relative_speeds.at("a100"), 3.5);
  EXPECT_DOUBLE_EQ(c.policy.relative_speeds.at("v100"), 1.0);
  EXPECT_DOUBLE_EQ(c.policy.fairness_p, -0.5);
  EXPECT_DOUBLE_EQ(c.policy.restart_threshold, 0.1);
  EXPECT_DOUBLE_EQ(c.policy.min_change_interval_s, 120);
  EXPECT_DOUBLE_EQ(c.policy.time_limit_s, 2);
  EXPECT_EQ(c.rest_threads, 8);
  EXPECT_EQ(c.max_reports_per_s, 5000);
  EXPECT_EQ(c.dump_rounds_dir, "/var/tmp/rounds");
  EXPECT_EQ(c.placement_ms, 0);
}

TEST(ConfigTest, BadTokensFallBackToDefaultsWithOneMessageEach) {
  const ParsedConfig parsed = parseConfig(
      "pollux_interval=fast\nnot a token\n",
      "pollux_rest_port=70000,pollux_rest_addr=localhost,pollux_colour=red,pollux_backfill,"
      "pollux_speed_a100=-1,pollux_tls_cert=/etc/cert.pem,pollux_interval=0x10,"
      "pollux_placement_ms=-1");
  ASSERT_EQ(parsed.errors.size(), 10u);
  EXPECT_NE(parsed.errors[0].find("pollux.conf:1: pollux_interval=fast"), std::string::npos);
  EXPECT_NE(parsed.errors[1].find("pollux.conf:2"), std::string::npos);
  EXPECT_NE(parsed.errors[2].find("pollux_rest_port=70000: must be an integer in [1, 65535]"),
            std::string::npos);
  EXPECT_NE(parsed.errors[3].find("numeric IPv4"), std::string::npos);
  EXPECT_NE(parsed.errors[4].find("unknown key"), std::string::npos);
  EXPECT_NE(parsed.errors[5].find("needs KEY=VALUE"), std::string::npos);
  EXPECT_NE(parsed.errors[8].find("pollux_placement_ms=-1: must be an integer in [0, 60000]"),
            std::string::npos);
  EXPECT_NE(parsed.errors[9].find("set together"), std::string::npos);
  for (const auto& error : parsed.errors) EXPECT_NE(error.find("default"), std::string::npos);
  const Config defaults;
  EXPECT_EQ(parsed.config.interval_s, defaults.interval_s);
  EXPECT_EQ(parsed.config.rest_port, defaults.rest_port);
  EXPECT_EQ(parsed.config.rest_addr, defaults.rest_addr);
  EXPECT_EQ(parsed.config.placement_ms, defaults.placement_ms);
  EXPECT_TRUE(parsed.config.policy.relative_speeds.empty());
  EXPECT_TRUE(parsed.config.tls_cert.empty());
}

TEST(ConfigTest, OneSettingAppliesOrThrowsNamingIt) {
  Config config;
  applySetting(config, " pollux_fairness_p = -0.5 ");
  applySetting(config, "pollux_speed_a100=2");
  EXPECT_DOUBLE_EQ(config.policy.fairness_p, -0.5);
  EXPECT_DOUBLE_EQ(config.policy.relative_speeds.at("a100"), 2);
  try {
    applySetting(config, "pollux_interval=0");
    FAIL() << "pollux_interval=0 accepted";
  } catch (const std::invalid_argument& error) {
    EXPECT_EQ(std::string(error.what()).rfind("pollux_interval=0: ", 0), 0u) << error.what();
  }
  EXPECT_THROW(applySetting(config, "pollux_nosuch=1"), std::invalid_argument);
  EXPECT_THROW(applySetting(config, "pollux_interval"), std::invalid_argument);
  const Config defaults;
  EXPECT_EQ(config.interval_s, defaults.interval_s);
}

TEST(ConfigTest, EventDelayTakesZeroToAnHour) {
  EXPECT_EQ(parseConfig("pollux_event_delay=5\n", "").config.event_delay_s, 5);
  EXPECT_EQ(parseConfig("pollux_event_delay=5\n", "pollux_event_delay=0").config.event_delay_s, 0);
  const ParsedConfig bad = parseConfig("", "pollux_event_delay=-1,pollux_event_delay=3601");
  ASSERT_EQ(bad.errors.size(), 2u);
  EXPECT_NE(bad.errors[0].find("pollux_event_delay=-1: must be an integer in [0, 3600]"),
            std::string::npos) << bad.errors[0];
  EXPECT_EQ(bad.config.event_delay_s, 1);
}

}  // namespace
}  // namespace pollux::settings
