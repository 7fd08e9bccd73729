#include "hw/hbm/bulk_engine.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

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

TEST(BulkEngine, StreamingReachesMostOfPeakOnHbm2e) {
  for (const char* chip : {"gaudi2", "gaudi3"}) {
    const HbmConfig c = preset_for_chip(chip);
    BulkEngine e(c);
    const std::uint64_t tx = 1 << 20;
    core::TimePs done = 0;
    for (int i = 0; i < 256; ++i) done = std::max(done, e.access(i % 2 == 0, i * tx, tx, 0));
    const double fraction =
        256.0 * tx / (static_cast<double>(done) * 1e-12) / c.peak_bandwidth().bytes_per_second();
    EXPECT_GT(fraction, 0.85) << chip;  // row switches overlapped: one bank's rows at a time
    EXPECT_LT(fraction, 0.92) << chip;  // all-bank refresh alone takes 9%
  }
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

// The closed form (bursts after a chunk's first round placed by column_rotation) against every
// burst evaluated by every rule: identical completion times and statistics, on sequential and
// random traffic of both directions, aligned and not, idle gaps and back-to-back bursts.
void expect_closed_form_matches_per_burst(const HbmConfig& c, bool random, std::uint64_t seed) {
  BulkEngine fast(c, BulkEngine::Evaluation::kClosedForm);
  BulkEngine slow(c, BulkEngine::Evaluation::kPerBurst);
  std::mt19937_64 rng(seed);
  const std::uint64_t capacity = fast.decoder().capacity();
  std::uint64_t next = 0;
  core::TimePs arrival = 0;
  for (int i = 0; i < 4000; ++i) {
    const std::uint64_t length = 1 + rng() % 8192;
    const std::uint64_t address = random ? rng() % (capacity - length) : next % (capacity - length);
    next += length;
    const bool write = rng() % 4 == 0;
    arrival += static_cast<core::TimePs>(rng() % 3 == 0 ? rng() % 2000 * kNs : 0);
    ASSERT_EQ(fast.access(write, address, length, arrival),
              slow.access(write, address, length, arrival))
        << "transaction " << i;
  }
  for (int ch = 0; ch < c.geometry.channel_count(); ++ch) {
    const ChannelStats& f = fast.channel_stats(ch);
    const ChannelStats& s = slow.channel_stats(ch);
    EXPECT_EQ(f.row_hits.value(), s.row_hits.value()) << ch;
    EXPECT_EQ(f.row_conflicts.value(), s.row_conflicts.value()) << ch;
    EXPECT_EQ(f.reads.value(), s.reads.value()) << ch;
    EXPECT_EQ(f.refreshes.value(), s.refreshes.value()) << ch;
  }
}

TEST(BulkEngine, ClosedFormMatchesPerBurstOnSequentialTraffic) {
  for (const char* chip : {"gaudi1", "gaudi2", "gaudi3"}) {
    SCOPED_TRACE(chip);
    expect_closed_form_matches_per_burst(preset_for_chip(chip), false, 1);
  }
}

TEST(BulkEngine, ClosedFormMatchesPerBurstOnRandomTraffic) {
  for (const char* chip : {"gaudi1", "gaudi2", "gaudi3"}) {
    SCOPED_TRACE(chip);
    expect_closed_form_matches_per_burst(preset_for_chip(chip), true, 2);
  }
}

TEST(BulkEngine, ClosedFormMatchesPerBurstWithLongerChunks) {
  HbmConfig c = hbm2e();
  c.address_map.interleave = core::ByteSize{1024};  // 32 bursts, eight rounds per chunk
  ASSERT_EQ(BulkEngine(c).decoder().rotation_period(), 4);
  expect_closed_form_matches_per_burst(c, true, 3);
  expect_closed_form_matches_per_burst(c, false, 4);
}

TEST(BulkEngine, MapsWithoutARotationFallBackToPerBurst) {
  HbmConfig c = hbm2e();
  c.address_map.layout = "bank,bank_group,column,pseudo_channel,channel,stack,column,row";
  c.address_map.interleave = core::ByteSize{1024};
  EXPECT_EQ(BulkEngine(c).decoder().rotation_period(), 0);  // bank groups repeat within 16
  expect_closed_form_matches_per_burst(c, true, 5);
}

}  // namespace
}  // namespace podsim::hbm
