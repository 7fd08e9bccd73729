// The arithmetic of sync objects, monitors, PQ ring indices and fences, without the kernel.
#include "hw/chip/sync_monitor.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

#include "hw/chip/qman.h"
#include "hw/chip/qman_ring.h"
#include "hw/chip/sync_manager.h"
#include "hw/chip/sync_register_access.h"
#include "podsim/spec/gaudi1.h"

namespace podsim::chip {
namespace {

using spec::MonitorArm;
using spec::MonitorOp;
using spec::SobWrite;

TEST(SyncObject, SetsAddsAndWrapsWithinItsBits) {
  EXPECT_EQ(apply_sob_write(7, SobWrite{3, false, false}), 3u);
  EXPECT_EQ(apply_sob_write(7, SobWrite{3, true, false}), 10u);
  EXPECT_EQ(apply_sob_write(PODSIM_GAUDI1_SOB_OBJ_VAL_MASK, SobWrite{2, true, false}), 1u);
}

TEST(Monitor, WatchesTheObjectsItsMaskLeavesIn) {
  std::vector<std::uint32_t> sobs(64, 0);
  MonitorArm arm;
  arm.group = 2;    // objects 16..23
  arm.mask = 0xFC;  // 16 and 17 watched
  arm.op = MonitorOp::kGreaterOrEqual;
  arm.value = 2;
  EXPECT_EQ(monitor_pending(arm, sobs), 0x3);
  sobs[16] = 2;
  EXPECT_EQ(monitor_pending(arm, sobs), 0x2);
  EXPECT_FALSE(monitor_met(arm, sobs));
  sobs[18] = 0;  // masked out: does not matter
  sobs[17] = 5;  // >= 2
  EXPECT_TRUE(monitor_met(arm, sobs));
  sobs[8] = 100;  // another group
  EXPECT_TRUE(monitor_met(arm, sobs));
}

TEST(Monitor, EqualNeedsTheExactValue) {
  std::vector<std::uint32_t> sobs(16, 0);
  const MonitorArm arm = MonitorArm::single(9, 5, MonitorOp::kEqual);
  sobs[9] = 6;
  EXPECT_FALSE(monitor_met(arm, sobs));
  sobs[9] = 5;
  EXPECT_TRUE(monitor_met(arm, sobs));
  const MonitorArm ge = MonitorArm::single(9, 5, MonitorOp::kGreaterOrEqual);
  sobs[9] = 6;
  EXPECT_TRUE(monitor_met(ge, sobs));
  sobs[9] = 4;
  EXPECT_FALSE(monitor_met(ge, sobs));
}

TEST(Monitor, ObjectsBeyondTheManagerNeverMeet) {
  const std::vector<std::uint32_t> sobs(8, 100);
  EXPECT_FALSE(monitor_met(MonitorArm::single(12, 0, MonitorOp::kGreaterOrEqual), sobs));
}

TEST(PqRing, IndicesWrapAtTwiceTheSize) {
  const std::uint32_t log2 = 2;  // four entries
  std::uint32_t index = 0;
  for (int i = 0; i < 7; ++i) index = pq_next(index, log2);
  EXPECT_EQ(index, 7u);
  EXPECT_EQ(pq_slot(index, log2), 3u);
  index = pq_next(index, log2);
  EXPECT_EQ(index, 0u);
  EXPECT_EQ(pq_pending(4, 0, log2), 4u);  // full, not empty
  EXPECT_EQ(pq_pending(0, 0, log2), 0u);
  EXPECT_EQ(pq_pending(1, 6, log2), 3u);  // across the wrap
}

TEST(PqRing, EntriesRoundTrip) {
  PqEntry e;
  e.address = 0x8000001234;
  e.length = 96;
  e.control = PqEntry::kRepeatValid | 3;
  std::uint8_t bytes[PODSIM_GAUDI1_PQ_ENTRY_SIZE];
  encode_pq_entry(e, bytes);
  const PqEntry back = decode_pq_entry(bytes);
  EXPECT_EQ(back.address, e.address);
  EXPECT_EQ(back.length, 96u);
  EXPECT_EQ(back.repeat(), 3u);
  e.control = 3;  // count without its valid bit
  EXPECT_EQ(e.repeat(), 0u);
}

TEST(Fence, PassesAtItsTargetAndTakesItsDecrement) {
  std::uint32_t counter = 0;
  EXPECT_FALSE(fence_pass(counter, 1, 1));
  counter = fence_add(counter, 2);
  EXPECT_TRUE(fence_pass(counter, 2, 1));
  EXPECT_EQ(counter, 1u);
  EXPECT_TRUE(fence_pass(counter, 0, 5));  // never below zero
  EXPECT_EQ(counter, 0u);
  EXPECT_EQ(fence_add(PODSIM_GAUDI1_QMAN_CP_FENCE_CNT_VAL_MASK, 1), 0u);
}

TEST(Config, BadValuesAreRejectedByName) {
  SyncManagerConfig sync;
  core::validate_config(sync);
  sync.sobs = 12;  // not whole groups
  EXPECT_THROW(core::validate_config(sync), std::invalid_argument);
  sync.sobs = 4096;
  EXPECT_THROW(core::validate_config(sync), std::invalid_argument);
  QmanConfig qman;
  core::validate_config(qman);
  qman.max_cb_size = core::ByteSize{4};
  EXPECT_THROW(core::validate_config(qman), std::invalid_argument);
}

// A burst of words waits as one entry and is applied word by word at its time, in arrival order
// with single writes of the same time; the callback is re-armed only for an earlier time.
TEST(TimedRegisterWrites, ABurstIsAppliedWordByWordInArrivalOrder) {
  TimedRegisterWrites writes;
  const std::uint32_t burst[] = {1, 2, 3};
  EXPECT_TRUE(writes.push(200, 0x100, 9));
  EXPECT_FALSE(writes.push(300, 0x0, burst, 3));
  EXPECT_FALSE(writes.push(200, 0x8, 7));
  EXPECT_TRUE(writes.push(100, 0x4, 5));
  std::vector<std::pair<std::uint64_t, std::uint32_t>> applied;
  auto apply = [&](std::uint64_t offset, std::uint32_t value) {
    applied.emplace_back(offset, value);
  };
  writes.apply_due(100, apply);
  EXPECT_EQ(writes.rearm(), 200u);
  writes.apply_due(250, apply);
  EXPECT_EQ(writes.rearm(), 300u);
  writes.apply_due(300, apply);
  EXPECT_TRUE(writes.empty());
  EXPECT_EQ(writes.rearm(), std::nullopt);
  const std::vector<std::pair<std::uint64_t, std::uint32_t>> expected{
      {0x4, 5}, {0x100, 9}, {0x8, 7}, {0x0, 1}, {0x4, 2}, {0x8, 3}};
  EXPECT_EQ(applied, expected);
}

}  // namespace
}  // namespace podsim::chip
