// TCP's congestion window: slow start, Reno's and CUBIC's avoidance, one cut per window of data,
// the loss window after a timeout, the restart after idle, the receiver's cap and the RTT.
#include "hw/roce/congestion_window.h"

#include <gtest/gtest.h>

#include <cmath>

namespace podsim::roce {
namespace {

constexpr core::TimePs kUs = 1000000;
constexpr std::uint32_t kMss = 1024;

WindowConfig reno() {
  WindowConfig c;
  c.algorithm = WindowAlgorithm::kReno;
  return c;
}

// The sender fills its window at `now` (a retransmission, so that nothing is timed): the next
// ACK may grow it.
void fill(CongestionWindow& w, core::TimePs now) { w.on_send(0, w.allowed() - 1, true, now); }

// An ACK of `acked` packets up to `una` after the sender filled its window.
void ack_full(CongestionWindow& w, std::uint64_t una, std::uint64_t acked, core::TimePs now) {
  fill(w, now);
  w.on_ack(una, acked, now);
}

// Sends the whole window at `now` from `next` on, and returns one past the last sequence sent.
std::uint64_t send_window(CongestionWindow& w, std::uint64_t una, std::uint64_t next,
                          core::TimePs now) {
  while (next - una < w.allowed()) {
    w.on_send(next + 1, next - una, false, now);
    ++next;
  }
  return next;
}

TEST(CongestionWindow, SlowStartDoublesTheWindowEachRoundTrip) {
  CongestionWindow w(reno(), kMss);
  EXPECT_EQ(w.allowed(), 10u);  // RFC 6928
  std::uint64_t una = 0, next = 0;
  for (int round = 1; round <= 4; ++round) {
    next = send_window(w, una, next, round * 10 * kUs);
    w.on_ack(next, next - una, round * 10 * kUs + 5 * kUs);
    una = next;
    EXPECT_EQ(w.allowed(), 10u << round);
  }
  EXPECT_EQ(w.srtt_ps(), 5 * kUs);  // every timed packet came back after 5 us
}

TEST(CongestionWindow, RenoAddsOneSegmentPerWindowAfterACut) {
  CongestionWindow w(reno(), kMss);
  ack_full(w, 10, 10, kUs);  // 20
  ASSERT_TRUE(w.on_congestion(10, 30, 2 * kUs));
  EXPECT_EQ(w.cwnd(), 10);  // halved
  EXPECT_EQ(w.ssthresh(), 10);
  // Nothing grows until the data sent before the cut is acknowledged.
  ack_full(w, 20, 10, 3 * kUs);
  EXPECT_EQ(w.cwnd(), 10);
  ack_full(w, 30, 10, 4 * kUs);  // una reaches the recovery point: these count
  EXPECT_NEAR(w.cwnd(), 11, 0.05);
  ack_full(w, 41, 11, 5 * kUs);
  EXPECT_NEAR(w.cwnd(), 12, 0.05);
  // An ACK while the sender did not fill the window (it had less to send) grows nothing.
  w.on_ack(50, 9, 6 * kUs);
  EXPECT_NEAR(w.cwnd(), 12, 0.05);
}

TEST(CongestionWindow, OneCutPerWindowOfData) {
  CongestionWindow w(reno(), kMss);
  ack_full(w, 30, 30, kUs);  // 40
  EXPECT_TRUE(w.on_congestion(30, 70, 2 * kUs));
  EXPECT_FALSE(w.on_congestion(40, 75, 3 * kUs));  // the same window: no second cut
  EXPECT_EQ(w.cwnd(), 20);
  EXPECT_TRUE(w.on_congestion(70, 90, 4 * kUs));
  EXPECT_EQ(w.cwnd(), 10);
  // A late echo for data already cut for, with nothing sent since: no cut.
  EXPECT_FALSE(w.on_congestion(90, 90, 5 * kUs));
  EXPECT_EQ(w.reductions(), 2);
}

TEST(CongestionWindow, ATimeoutLeavesOneSegmentAndSlowStartsToHalfTheWindow) {
  CongestionWindow w(reno(), kMss);
  ack_full(w, 30, 30, kUs);  // 40
  w.on_timeout(70, 2 * kUs);
  EXPECT_EQ(w.allowed(), 1u);
  EXPECT_EQ(w.ssthresh(), 20);
  // Slow start resends the lost data: the window grows with each ACK, up to ssthresh.
  ack_full(w, 31, 1, 3 * kUs);
  EXPECT_EQ(w.allowed(), 2u);
  ack_full(w, 33, 2, 4 * kUs);
  EXPECT_EQ(w.allowed(), 4u);
  ack_full(w, 60, 27, 5 * kUs);
  EXPECT_NEAR(w.cwnd(), 20 + 11.0 / 20, 1e-9);  // 16 to reach ssthresh, 11 in avoidance
}

// CUBIC [RFC 9438]: the cut keeps 0.7 of the window, and the curve climbs back to the old
// window W_max at K = cbrt(W_max (1 - beta) / C) seconds, flat around it.
TEST(CongestionWindow, CubicClimbsBackToItsOldWindowAfterK) {
  WindowConfig c;
  c.initial_window = 1000;
  c.receive_window = core::ByteSize{1ull << 40};
  CongestionWindow w(c, kMss);
  ASSERT_TRUE(w.on_congestion(0, 1000, 0));
  EXPECT_DOUBLE_EQ(w.cwnd(), 700);
  const double k = std::cbrt(1000 * 0.3 / 0.4);  // 9.09 s
  EXPECT_NEAR(w.cubic_at(0), 700, 1e-9);
  EXPECT_NEAR(w.cubic_at(k), 1000, 1e-9);
  EXPECT_NEAR(w.cubic_at(k + 1), 1000.4, 1e-9);
  // Acknowledging a window each 100 ms brings it back near W_max by K, no faster than Reno.
  std::uint64_t una = 1000;
  for (core::TimePs t = 100000 * kUs; t <= static_cast<core::TimePs>(k * 1e12); t += 100000 * kUs) {
    const auto acked = static_cast<std::uint64_t>(w.cwnd());
    una += acked;
    ack_full(w, una, acked, t);
  }
  EXPECT_NEAR(w.cwnd(), 1000, 15);
  EXPECT_GT(w.cwnd(), 700 + 90);  // more than Reno's segment per round trip
}

// After a timeout CUBIC's avoidance starts a curve of its own, flat at the window slow start
// reached, not the one of the cut before [RFC 9438 4.8].
TEST(CongestionWindow, CubicStartsAFreshCurveAfterATimeout) {
  WindowConfig c;
  c.initial_window = 100;
  CongestionWindow w(c, kMss);
  w.on_timeout(100, 0);  // ssthresh 70
  EXPECT_EQ(w.allowed(), 1u);
  std::uint64_t una = 100;
  for (core::TimePs t = kUs; w.cwnd() < 70; t += kUs) {
    const auto acked = static_cast<std::uint64_t>(w.cwnd());
    una += acked;
    ack_full(w, una, acked, t);
  }
  // The ACK that reached ssthresh began avoidance: W_max = 70 there and K = 0, so a second on
  // the curve is 70.4, where the curve of the cut (W_max 100, K = 4.2 s) would be at 86.7.
  EXPECT_NEAR(w.cubic_at(1.0), 70.4, 1e-9);
  EXPECT_LT(w.cwnd(), 72);
}

TEST(CongestionWindow, CubicFastConvergenceGivesUpMoreBelowTheLastPeak) {
  WindowConfig c;
  c.initial_window = 100;
  CongestionWindow w(c, kMss);
  w.on_congestion(0, 100, 0);  // 70, W_max 100
  w.on_congestion(100, 200, kUs);
  EXPECT_DOUBLE_EQ(w.cwnd(), 49);
  // Cut below its last peak (100): the new W_max is 70 (1 + 0.7) / 2, so K is smaller.
  EXPECT_NEAR(w.cubic_at(0), 49, 1e-9);
  EXPECT_NEAR(w.cubic_at(std::cbrt((59.5 - 49) / 0.4)), 59.5, 1e-9);
}

TEST(CongestionWindow, AnIdleConnectionRestartsFromTheInitialWindow) {
  CongestionWindow w(reno(), kMss);
  w.on_send(1, 0, false, 0);
  ack_full(w, 1, 1, kUs);
  ack_full(w, 50, 49, 2 * kUs);
  EXPECT_GT(w.allowed(), 10u);
  w.on_send(51, 0, false, 100000 * kUs);  // 100 ms idle: less than the RTO
  EXPECT_GT(w.allowed(), 10u);
  w.on_ack(51, 1, 100001 * kUs);
  w.on_send(52, 0, false, 400000 * kUs);  // 300 ms idle
  EXPECT_EQ(w.allowed(), 10u);
  WindowConfig keep = reno();
  keep.restart_after_idle = false;
  CongestionWindow k(keep, kMss);
  k.on_send(1, 0, false, 0);
  ack_full(k, 50, 50, kUs);
  k.on_send(51, 0, false, 400000 * kUs);
  EXPECT_EQ(k.allowed(), 60u);
}

TEST(CongestionWindow, TheReceiversWindowCapsIt) {
  WindowConfig c = reno();
  c.receive_window = core::ByteSize{16 * kMss};
  CongestionWindow w(c, kMss);
  ack_full(w, 100, 100, kUs);
  EXPECT_EQ(w.cwnd(), 16);  // not beyond the receiver's window, so a cut takes effect at once
  EXPECT_EQ(w.allowed(), 16u);
}

// Karn: a retransmitted packet is not timed; a go-back drops the timing in progress.
TEST(CongestionWindow, RetransmissionsAreNotTimed) {
  CongestionWindow w(reno(), kMss);
  w.on_send(1, 0, true, 0);
  w.on_ack(1, 1, 7 * kUs);
  EXPECT_EQ(w.srtt_ps(), 0u);
  w.on_send(2, 0, false, 10 * kUs);
  w.forget_timing();
  w.on_ack(2, 1, 30 * kUs);
  EXPECT_EQ(w.srtt_ps(), 0u);
  w.on_send(3, 0, false, 40 * kUs);
  w.on_ack(3, 1, 48 * kUs);
  EXPECT_EQ(w.srtt_ps(), 8 * kUs);
  w.on_send(4, 0, false, 50 * kUs);
  w.on_ack(4, 1, 66 * kUs);
  EXPECT_EQ(w.srtt_ps(), 9 * kUs);  // 7/8 of 8 us + 1/8 of 16 us
}

}  // namespace
}  // namespace podsim::roce
