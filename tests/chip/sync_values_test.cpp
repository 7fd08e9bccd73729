#include "hw/chip/spec/sync_values.h"

#include <gtest/gtest.h>

#include <stdexcept>

namespace podsim::chip::spec {
namespace {

// Bit positions: value 14..0, trace_evict 30, inc 31 [C4] sob_objs_regs.h.
TEST(SyncValues, SobWriteDecodesValueAndMode) {
  const SobWrite add = decode_sob_write(0x80000003u);
  EXPECT_EQ(add.value, 3u);
  EXPECT_TRUE(add.increment);
  EXPECT_FALSE(add.trace_evict);
  const SobWrite set = decode_sob_write(0x40007FFFu);
  EXPECT_EQ(set.value, 0x7FFFu);
  EXPECT_FALSE(set.increment);
  EXPECT_TRUE(set.trace_evict);
}

TEST(SyncValues, SobWriteRoundTripsAndRejectsWideValues) {
  const SobWrite w{1234, true, false};
  EXPECT_EQ(encode_sob_write(w), 0x80000000u | 1234u);
  EXPECT_EQ(decode_sob_write(encode_sob_write(w)), w);
  EXPECT_THROW(encode_sob_write(SobWrite{0x8000, false, false}), std::invalid_argument);
}

// Bit positions: sid 7..0, mask 15..8, sop 16, sod 31..17 [C4]; user space arms a monitor on
// one SOB with group sob/8 and mask ~(1 << sob%8) [C8].
TEST(SyncValues, MonitorArmOnOneSobMatchesUserSpaceEncoding) {
  const MonitorArm arm = MonitorArm::single(147, 1, MonitorOp::kEqual);
  EXPECT_EQ(arm.group, 18u);
  EXPECT_EQ(arm.mask, 0xF7u);
  EXPECT_EQ(encode_monitor_arm(arm), 18u | 0xF7u << 8 | 1u << 16 | 1u << 17);
  EXPECT_EQ(arm.watched_sobs(), std::vector<std::uint32_t>{147});
  EXPECT_TRUE(arm.watches(147));
  EXPECT_FALSE(arm.watches(146));
  EXPECT_FALSE(arm.watches(147 + 8));
}

TEST(SyncValues, MonitorArmDecodesEveryField) {
  const MonitorArm arm = decode_monitor_arm(0xFFFE0000u | 0x3Cu << 8 | 0x05u);
  EXPECT_EQ(arm.group, 5u);
  EXPECT_EQ(arm.mask, 0x3Cu);
  EXPECT_EQ(arm.op, MonitorOp::kGreaterOrEqual);
  EXPECT_EQ(arm.value, 0x7FFFu);
  EXPECT_EQ(arm.watched_sobs(), (std::vector<std::uint32_t>{40, 41, 46, 47}));
  EXPECT_EQ(decode_monitor_arm(encode_monitor_arm(arm)), arm);
}

TEST(SyncValues, MonitorArmRejectsValuesThatDoNotFit) {
  MonitorArm arm;
  arm.value = 1u << 15;
  EXPECT_THROW(encode_monitor_arm(arm), std::invalid_argument);
  arm.value = 0;
  arm.group = 256;
  EXPECT_THROW(encode_monitor_arm(arm), std::invalid_argument);
}

}  // namespace
}  // namespace podsim::chip::spec
