// The launchers' first-fit allocator: alignment, exhaustion, and merging on release.
#include "hw/core/range_allocator.h"

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

}  // namespace
}  // namespace podsim::core
