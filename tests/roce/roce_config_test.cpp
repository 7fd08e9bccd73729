// RoceConfig: defaults, validation, binding and schema.
#include "hw/roce/roce_config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/config_tree.h"

namespace podsim::roce {
namespace {

using ::testing::HasSubstr;

std::string problem(const RoceConfig& c) {
  try {
    core::validate_config(c);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return {};
}

TEST(RoceConfig, DefaultsAreValid) {
  const RoceConfig c;
  EXPECT_EQ(problem(c), "");
  EXPECT_EQ(c.mtu, 4096);
  EXPECT_EQ(c.ack_every, 1);
  EXPECT_EQ(c.retry_limit, 7);
  EXPECT_EQ(c.data_priority, 3);
  EXPECT_TRUE(c.dcqcn.enabled);
  EXPECT_DOUBLE_EQ(c.dcqcn.g, 1.0 / 256);
}

TEST(RoceConfig, TimeoutIs4096NanosecondsTimesTwoToT) {
  RoceConfig c;
  c.retransmit_timeout = 14;
  EXPECT_EQ(c.retransmit_timeout_ps(), 67108864000u);  // 67.1 ms
  c.retransmit_timeout = 0;
  EXPECT_EQ(c.retransmit_timeout_ps(), 0u);
  c.retransmit_timeout = 1;
  EXPECT_EQ(c.retransmit_timeout_ps(), 8192000u);
}

TEST(RoceConfig, RejectsBadValuesNamingTheKey) {
  RoceConfig c;
  c.mtu = 1000;
  EXPECT_THAT(problem(c), HasSubstr("mtu"));
  c.mtu = 8192;
  EXPECT_THAT(problem(c), HasSubstr("mtu"));
  c = RoceConfig{};
  c.data_priority = 8;
  EXPECT_THAT(problem(c), HasSubstr("data_priority"));
  c = RoceConfig{};
  c.dcqcn.g = 2;
  EXPECT_THAT(problem(c), HasSubstr("dcqcn.g"));
  c = RoceConfig{};
  c.retransmit_timeout = 32;
  EXPECT_THAT(problem(c), HasSubstr("retransmit_timeout"));
}

TEST(RoceConfig, BindsFromYaml) {
  const auto c = core::bind_config<RoceConfig>(core::parse_yaml(
      "mtu: 1024\nack_every: 4\ncnp_interval: 50us\ndcqcn:\n  fast_recovery_rounds: 5\n"
      "  rate_increase_period: 55us\n",
      "nic.yaml"));
  EXPECT_EQ(c.mtu, 1024);
  EXPECT_EQ(c.ack_every, 4);
  EXPECT_EQ(c.cnp_interval.ps, 50000000);
  EXPECT_EQ(c.dcqcn.fast_recovery_rounds, 5);
  EXPECT_EQ(c.dcqcn.rate_increase_period.ps, 55000000);
}

// The default is the nic profile; profile: paper sets the keys it decides, and a key given
// beside it overrides it, wherever it is in the file.
TEST(RoceConfig, AProfileSetsItsKeysAndGivenKeysWin) {
  const RoceConfig nic;
  EXPECT_EQ(nic.dcqcn.profile, DcqcnProfile::kNic);
  EXPECT_EQ(nic.dcqcn.clamp_target, ClampTarget::kAfterTimerIncrease);
  EXPECT_EQ(nic.dcqcn.alpha_update, AlphaUpdate::kPerPeriod);
  EXPECT_FALSE(nic.dcqcn.hyper_increase_grows);
  EXPECT_EQ(nic.dcqcn.byte_counter.bytes, 0u);
  EXPECT_EQ(nic.dcqcn.rate_increase_period.ps, 300000000);  // 300 us
  EXPECT_EQ(nic.dcqcn.fast_recovery_rounds, 1);
  const auto c = core::bind_config<RoceConfig>(
      core::parse_yaml("dcqcn:\n  fast_recovery_rounds: 3\n  profile: paper\n", "nic.yaml"));
  EXPECT_EQ(c.dcqcn.profile, DcqcnProfile::kPaper);
  EXPECT_EQ(c.dcqcn.clamp_target, ClampTarget::kEveryCut);
  EXPECT_EQ(c.dcqcn.alpha_update, AlphaUpdate::kPerCut);
  EXPECT_TRUE(c.dcqcn.hyper_increase_grows);
  EXPECT_EQ(c.dcqcn.byte_counter.bytes, 10000000u);
  EXPECT_EQ(c.dcqcn.rate_increase_period.ps, 55000000);  // 55 us
  EXPECT_EQ(c.dcqcn.fast_recovery_rounds, 3);            // given: overrides the profile's 5
  EXPECT_EQ(problem(c), "");  // validating the bound struct keeps its values
  EXPECT_EQ(c.dcqcn.fast_recovery_rounds, 3);
}

TEST(RoceConfig, EveryDefaultCitesASource) {
  for (const auto& row : core::config_schema<RoceConfig>("roce")) {
    if (row.path == "roce.dcqcn.enabled") continue;
    EXPECT_FALSE(row.source.empty()) << row.path;
  }
}

}  // namespace
}  // namespace podsim::roce
