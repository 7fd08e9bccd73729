// The responder's PSN verdicts, NAK rate limit and ACK coalescing.
#include "hw/roce/responder.h"

#include <gtest/gtest.h>

namespace podsim::roce {
namespace {

using V = Responder::Verdict;

TEST(Responder, InOrderPacketsAreNewAndAckedEachTime) {
  Responder r(1);
  for (std::uint32_t psn = 0; psn < 4; ++psn) {
    ASSERT_EQ(r.classify(psn, 0), V::kNew);
    EXPECT_TRUE(r.accept(false));
    EXPECT_EQ(r.ack_psn(), psn);
  }
  EXPECT_EQ(r.expected_psn(), 4u);
}

TEST(Responder, CoalescesAcksAndHonoursAckRequest) {
  Responder r(4);
  EXPECT_FALSE(r.accept(false));
  EXPECT_FALSE(r.accept(false));
  EXPECT_TRUE(r.accept(true));  // AckReq forces one
  EXPECT_FALSE(r.accept(false));
  EXPECT_FALSE(r.accept(false));
  EXPECT_FALSE(r.accept(false));
  EXPECT_TRUE(r.accept(false));  // the fourth since the last ACK
  EXPECT_EQ(r.ack_psn(), 6u);
}

TEST(Responder, NaksAGapOnceThenIgnoresUntilTheExpectedPsn) {
  Responder r;
  r.classify(0, 0);
  r.accept(false);
  EXPECT_EQ(r.classify(2, 0), V::kSequenceError);
  EXPECT_EQ(r.classify(3, 0), V::kIgnore);
  EXPECT_EQ(r.classify(4, 0), V::kIgnore);
  EXPECT_EQ(r.expected_psn(), 1u);  // what the NAK carries
  EXPECT_EQ(r.classify(1, 0), V::kNew);
  r.accept(false);
  // A new gap may be NAKed again.
  EXPECT_EQ(r.classify(5, 0), V::kSequenceError);
}

TEST(Responder, ReNaksAGapStillOpenAfterTheNakInterval) {
  Responder r(1, 500);
  EXPECT_EQ(r.classify(3, 1000), V::kSequenceError);
  EXPECT_EQ(r.classify(4, 1499), V::kIgnore);
  EXPECT_EQ(r.classify(5, 1500), V::kSequenceError);  // the NAK or its answer was lost
  EXPECT_EQ(r.classify(6, 1600), V::kIgnore);
  EXPECT_EQ(r.expected_psn(), 0u);
}

TEST(Responder, DuplicatesAreBehindAndReAcked) {
  Responder r;
  for (int i = 0; i < 5; ++i) r.accept(false);
  EXPECT_EQ(r.classify(3, 0), V::kDuplicate);
  EXPECT_EQ(r.classify(0, 0), V::kDuplicate);
  EXPECT_TRUE(r.duplicate(false));
  std::uint64_t seq = 0;
  ASSERT_TRUE(r.duplicate_seq(3, &seq));
  EXPECT_EQ(seq, 3u);
  // A PSN from before the first one is not a duplicate of anything of this connection.
  EXPECT_FALSE(r.duplicate_seq(0xFFFFF0, &seq));
}

TEST(Responder, WrapsAt2To24) {
  Responder r(1, 0, 0xFFFFFE);
  EXPECT_EQ(r.classify(0xFFFFFE, 0), V::kNew);
  r.accept(false);
  EXPECT_EQ(r.classify(0xFFFFFF, 0), V::kNew);
  r.accept(false);
  EXPECT_EQ(r.expected_psn(), 0u);
  EXPECT_EQ(r.ack_psn(), 0xFFFFFFu);
  EXPECT_EQ(r.classify(0xFFFFFE, 0), V::kDuplicate);
  EXPECT_EQ(r.classify(1, 0), V::kSequenceError);
  EXPECT_EQ(r.classify(0, 0), V::kNew);
  std::uint64_t seq = 0;
  ASSERT_TRUE(r.duplicate_seq(0xFFFFFF, &seq));
  EXPECT_EQ(seq, 1u);
}

TEST(Responder, ReadRequestTakesOnePsnPerResponse) {
  Responder r(8);
  r.accept(false);
  r.accept_read(5);
  EXPECT_EQ(r.expected_psn(), 6u);
  EXPECT_EQ(r.classify(6, 0), V::kNew);
  // The READ reset the coalescing count: seven more packets before an ACK is due.
  for (int i = 0; i < 7; ++i) EXPECT_FALSE(r.accept(false));
  EXPECT_TRUE(r.accept(false));
}

TEST(Responder, MessageSequenceNumberCounts) {
  Responder r;
  r.complete_message();
  r.complete_message();
  EXPECT_EQ(r.msn(), 2u);
}

}  // namespace
}  // namespace podsim::roce
