// The coarse chips' engine model: jobs cut as the command compiler cuts them, engines in
// parallel and each in order, a latency per slice.
#include "collectives/engine_timer.h"

#include <gtest/gtest.h>

namespace podsim::collectives {
namespace {

// Four engines of 125 GB/s, 100 ns per slice, slices of at least 64 KiB.
EngineTimer timer() { return EngineTimer(4, 125e9, 100000, 64 * 1024); }

TEST(EngineTimer, SmallJobsStayWholeOnTheirStreamsEngine) {
  EngineTimer t = timer();
  EXPECT_EQ(t.slices(1000), 1);
  // 1250 bytes at 125 GB/s: 10 ns.
  EXPECT_EQ(t.book(0, 1250, 1), 110000u);
  // Stream 5 shares engine 1 with stream 1: it waits; stream 2 does not.
  EXPECT_EQ(t.book(0, 1250, 5), 220000u);
  EXPECT_EQ(t.book(0, 1250, 2), 110000u);
}

TEST(EngineTimer, LargeJobsAreCutOnePerEngine) {
  EngineTimer t = timer();
  EXPECT_EQ(t.slices(128 * 1024), 2);
  EXPECT_EQ(t.slices(1 << 20), 4);
  // 1 MiB in four slices of 256 KiB: 2097152 ps each, side by side.
  EXPECT_EQ(t.book(0, 1 << 20, 0), 100000u + 2097152u);
  // The next job queues behind it on every engine.
  EXPECT_EQ(t.book(1000, 1 << 20, 0), 2 * (100000u + 2097152u));
  // Later than every engine is free: starts when issued.
  EXPECT_EQ(t.book(10000000, 1250, 3), 10110000u);
}

TEST(EngineTimer, UnevenCutsEndWithTheLongestSlice) {
  EngineTimer t(3, 1e12, 0, 1);  // 1 byte per ps
  EXPECT_EQ(t.slices(10), 3);
  EXPECT_EQ(t.book(0, 10, 0), 4u);  // 4 + 3 + 3
}

TEST(EngineTimer, NeedsEnginesAndARate) {
  EXPECT_THROW(EngineTimer(0, 1e9, 0, 0), std::invalid_argument);
  EXPECT_THROW(EngineTimer(2, 0, 0, 0), std::invalid_argument);
  EngineTimer whole(2, 1e12, 0, 0);
  EXPECT_EQ(whole.slices(1 << 30), 1);
}

}  // namespace
}  // namespace podsim::collectives
