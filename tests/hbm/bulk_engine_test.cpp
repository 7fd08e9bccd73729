#include "hw/hbm/bulk_engine.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace podsim::hbm {
namespace {

constexpr core::TimePs kNs = 1000;

TEST(BulkEngine, OneBurstOnAnIdleMemoryPaysFrontEndActivateAndReadLatency) {
  BulkEngine e(hbm2());
  EXPECT_EQ(e.access(false, 0, 32, 0), (9 + 14 + 14 + 2) * kNs);
  EXPECT_EQ(e.access(false, 128, 32, 100 * kNs), 100 * kNs + (9 + 14 + 2) * kNs);  // row hit
  EXPECT_EQ(e.channel_stats(0).row_misses.value(), 1u);
  EXPECT_EQ(e.channel_stats(0).row_hits.value(), 1u);
}

TEST(BulkEngine, ARowConflictPaysPrechargeToo) {
  const HbmConfig c = hbm2();
  BulkEngine e(c);
  Location other_row;
  other_row.row = 1;
  const std::uint64_t conflict = e.decoder().encode(other_row);
  e.access(false, 0, 32, 0);
  EXPECT_EQ(e.access(false, conflict, 32, 1000 * kNs), 1000 * kNs + (9 + 14 + 14 + 14 + 2) * kNs);
  EXPECT_EQ(e.channel_stats(0).row_conflicts.value(), 1u);
}

TEST(BulkEngine, ABulkTransferSpreadsOverEveryChannel) {
  const HbmConfig c = hbm2e();
  BulkEngine e(c);
  const std::uint64_t bytes = 96 * 256 * 4;
  e.access(true, 0, bytes, 0);
  for (int ch = 0; ch < c.geometry.channel_count(); ++ch) {
    EXPECT_EQ(e.channel_stats(ch).bytes_written.value(), bytes / 48) << ch;
    EXPECT_EQ(e.channel_stats(ch).writes.value(), bytes / 48 / 32) << ch;
  }
}

TEST(BulkEngine, PartialBurstsCountWholeAndBytesExactly) {
  BulkEngine e(hbm2());
  e.access(false, 30, 4, 0);  // straddles two bursts
  EXPECT_EQ(e.channel_stats(0).reads.value(), 2u);
  EXPECT_EQ(e.channel_stats(0).bytes_read.value(), 4u);
}

TEST(BulkEngine, StreamingReachesMostOfPeakOnHbm2) {
  const HbmConfig c = hbm2();
  BulkEngine e(c);
  const std::uint64_t tx = 1 << 20;
  core::TimePs done = 0;
  for (int i = 0; i < 256; ++i) done = std::max(done, e.access(false, i * tx, tx, 0));
  const double fraction =
      256.0 * tx / (static_cast<double>(done) * 1e-12) / c.peak_bandwidth().bytes_per_second();
  EXPECT_GT(fraction, 0.85);
  EXPECT_LT(fraction, 0.95);  // refresh alone takes 6.7%
}

TEST(BulkEngine, RefreshesFallDueAcrossIdleTime) {
  const HbmConfig c = hbm2();
  BulkEngine e(c);
  e.access(false, 0, 32, 0);
  // Ten intervals later: the first refresh waits for the open row, the rest were idle.
  const core::TimePs later = 10 * 3900 * kNs + 300 * kNs;  // after the last one's tRFC
  EXPECT_EQ(e.access(false, 0, 32, later), later + (9 + 14 + 14 + 2) * kNs);  // rows closed
  EXPECT_EQ(e.channel_stats(0).refreshes.value(), 10u);
}

TEST(BulkEngine, ATransactionArrivingDuringRefreshWaitsTrfc) {
  BulkEngine e(hbm2());
  e.access(false, 0, 32, 0);
  const core::TimePs at = 3900 * kNs - 9 * kNs;  // reaches the controller at the refresh
  EXPECT_EQ(e.access(false, 0, 32, at), 3900 * kNs + (14 + 260 + 14 + 14 + 2) * kNs);  // PRE first
}

}  // namespace
}  // namespace podsim::hbm
