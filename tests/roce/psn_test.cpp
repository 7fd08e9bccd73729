// 24-bit PSN arithmetic and the mapping to 64-bit sequence numbers.
#include "hw/roce/psn.h"

#include <gtest/gtest.h>

namespace podsim::roce {
namespace {

TEST(Psn, AddWrapsAt2To24) {
  EXPECT_EQ(psn_add(0xFFFFFE, 1), 0xFFFFFFu);
  EXPECT_EQ(psn_add(0xFFFFFF, 1), 0u);
  EXPECT_EQ(psn_add(0xFFFFF0, 0x20), 0x10u);
  EXPECT_EQ(psn_add(5, kPsnModulus), 5u);
}

TEST(Psn, DistanceIsForwardModulo2To24) {
  EXPECT_EQ(psn_distance(10, 15), 5u);
  EXPECT_EQ(psn_distance(0xFFFFFE, 1), 3u);
  EXPECT_EQ(psn_distance(15, 10), kPsnModulus - 5);
}

TEST(Psn, HalfTheSpaceAheadIsAhead) {
  EXPECT_TRUE(psn_at_or_ahead(7, 7));
  EXPECT_TRUE(psn_at_or_ahead(2, 0xFFFFFF));
  EXPECT_FALSE(psn_at_or_ahead(0xFFFFFF, 2));
  EXPECT_TRUE(psn_at_or_ahead(kPsnHalf - 1, 0));
  EXPECT_FALSE(psn_at_or_ahead(kPsnHalf, 0));
}

TEST(PsnSpace, SequenceNumbersNeverWrap) {
  const PsnSpace space(0xFFFFF0);
  EXPECT_EQ(space.psn(0), 0xFFFFF0u);
  EXPECT_EQ(space.psn(0x10), 0u);
  EXPECT_EQ(space.psn(0x10 + kPsnModulus), 0u);
  // From sequence number 12 (PSN 0xFFFFFC), PSN 3 is 7 further on.
  EXPECT_EQ(space.seq_at_or_after(12, 3), 19u);
  EXPECT_EQ(space.seq_at_or_after(12, 0xFFFFFC), 12u);
  EXPECT_EQ(space.behind(19, 0xFFFFFC), 7u);
}

}  // namespace
}  // namespace podsim::roce
