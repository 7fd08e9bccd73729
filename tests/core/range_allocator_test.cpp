// The launchers' first-fit allocator: alignment, exhaustion, and merging on release.
#include "core/range_allocator.h"

#include <gtest/gtest.h>

namespace podsim::core {
namespace {

TEST(RangeAllocator, FirstFitAlignedAndMergedOnRelease) {
  RangeAllocator a(100, 1000);
  EXPECT_EQ(a.allocate(10), 100u);
  EXPECT_EQ(a.allocate(10, 128), 128u);  // 110..127 stay free
  EXPECT_EQ(a.allocate(18), 110u);       // fits the gap exactly
  EXPECT_EQ(a.allocate(2000), std::nullopt);
  EXPECT_EQ(a.largest(), 1100u - 138u);
  a.release(128, 10);
  a.release(100, 10);
  a.release(110, 18);
  EXPECT_EQ(a.largest(), 1000u);  // whole again
  EXPECT_EQ(a.allocate(1000), 100u);
  EXPECT_EQ(a.allocate(1), std::nullopt);
}

TEST(RangeAllocator, TakeClaimsAnExactFreeRangeOrNothing) {
  RangeAllocator a(0, 100);
  EXPECT_TRUE(a.take(40, 10));
  EXPECT_FALSE(a.take(45, 10));  // overlaps what was taken
  EXPECT_FALSE(a.take(95, 10));  // runs past the end
  EXPECT_FALSE(a.take(0, 0));
  EXPECT_TRUE(a.take(50, 50));  // the free range right after, to its end
  EXPECT_EQ(a.allocate(41), std::nullopt);
  EXPECT_EQ(a.allocate(40), 0u);
  a.release(40, 10);
  EXPECT_EQ(a.largest(), 10u);
}

}  // namespace
}  // namespace podsim::core
