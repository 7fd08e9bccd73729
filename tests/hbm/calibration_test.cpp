// The FR-FCFS controller on one HBM2 channel (1 GHz, two pseudo-channels, 32-byte requests, open
// page, the default interleaved map) against the calibration figures (docs/hbm.md): the issue's
// targets and what DRAMsim3 ([H2]) gives for the same setup, run here (commands in docs/hbm.md).
// No public simulator run here reproduces the 85/15 and random figures (Ramulator v1 [H4]
// gives 91.5 / 85.2 / 37.0% in HBM1 legacy mode; docs/hbm.md), so DRAMsim3 is the reference.
#include <gtest/gtest.h>

#include "tests/hbm/traffic.h"

namespace podsim::hbm {
namespace {

using testing::run_traffic;
using testing::Stream;

constexpr int kOutstanding = 64;  // both pseudo-channels' read queues full
constexpr Cycle kCycles = 100000;
constexpr double kPoints = 0.05;  // five percentage points

TEST(Calibration, SequentialReads) {
  const auto r = run_traffic(testing::one_channel(), Stream::kSequential, 0, kOutstanding, kCycles);
  EXPECT_NEAR(r.fraction_of_peak, 0.88, kPoints);  // the target
  EXPECT_NEAR(r.fraction_of_peak, 0.92, kPoints);  // DRAMsim3 HBM2, same pattern
}

TEST(Calibration, SequentialReadsAndWrites85To15) {
  const auto r =
      run_traffic(testing::one_channel(), Stream::kSequential, 0.15, kOutstanding, kCycles);
  EXPECT_NEAR(r.fraction_of_peak, 0.853, kPoints);  // DRAMsim3; the 50% is not met
  EXPECT_GT(r.stats.writes, 0u);
}

TEST(Calibration, RandomReads) {
  const auto r = run_traffic(testing::one_channel(), Stream::kRandom, 0, kOutstanding, kCycles);
  EXPECT_NEAR(r.fraction_of_peak, 0.246, kPoints);  // DRAMsim3; tFAW caps it at 26.7%
  EXPECT_LT(r.stats.row_hits, r.stats.reads / 100);
}

TEST(Calibration, UnloadedRowHitLatency) {
  // One request every 200 cycles: rows stay open between refreshes.
  const auto r = run_traffic(testing::one_channel(), Stream::kSequential, 0, 1, 40000, 200);
  ASSERT_GT(r.stats.row_hits, 0u);
  // A row hit: front end 9 + RL 14 + BL/2 2 = 25 ns, the target; the mean mixes in misses.
  const HbmConfig c = testing::one_channel();
  EXPECT_EQ(c.controller.frontend_cycles + c.timing.rl + c.geometry.burst_length / 2, 25);
  EXPECT_GT(r.mean_read_latency, 25);
  EXPECT_LT(r.mean_read_latency, 25 + c.timing.rcd + 10);
}

TEST(Calibration, UnloadedRandomLatency) {
  const auto r = run_traffic(testing::one_channel(), Stream::kRandom, 0, 1, 400000, 200);
  // Target 47 ns; misses take 39, conflicts 53, and refreshes add their share.
  EXPECT_NEAR(r.mean_read_latency, 47, 10);
}

}  // namespace
}  // namespace podsim::hbm
