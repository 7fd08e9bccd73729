#include "hw/hbm/controller.h"

#include <gtest/gtest.h>

#include <vector>

#include "tests/hbm/traffic.h"

namespace podsim::hbm {
namespace {

Request at(std::uint64_t id, int bank_group, int bank, std::uint32_t row, bool write = false) {
  Request r;
  r.id = id;
  r.location.bank_group = bank_group;
  r.location.bank = bank;
  r.location.row = row;
  r.write = write;
  return r;
}

struct Served {
  std::vector<std::uint64_t> order;
  std::vector<Cycle> done;
};

void run(Controller& c, Cycle from, Cycle to, Served& out) {
  for (Cycle now = from; now < to; ++now) {
    c.tick(now, [&](std::uint64_t id, Cycle end) {
      out.order.push_back(id);
      out.done.push_back(end);
    });
  }
}

TEST(Controller, UnloadedReadTakesFrontEndActivateAndReadLatency) {
  const HbmConfig config = testing::one_channel();
  Controller c(config);
  Served r;
  ASSERT_TRUE(c.enqueue(at(1, 0, 0, 5), 0));
  run(c, 0, 200, r);
  ASSERT_EQ(r.done.size(), 1u);
  EXPECT_EQ(r.done[0], 9 + 14 + 14 + 2);  // front end, tRCD, RL, BL/2
  EXPECT_EQ(c.stats().row_misses, 1u);
}

TEST(Controller, RowHitOvertakesAnOlderConflict) {
  const HbmConfig config = testing::one_channel();
  Controller c(config);
  Served r;
  c.enqueue(at(1, 0, 0, 5), 0);
  run(c, 0, 100, r);               // row 5 open
  c.enqueue(at(2, 0, 0, 6), 100);  // conflict, older
  c.enqueue(at(3, 0, 0, 5), 100);  // hit, younger
  run(c, 100, 400, r);
  EXPECT_EQ(r.order, (std::vector<std::uint64_t>{1, 3, 2}));
  EXPECT_EQ(c.stats().row_conflicts, 1u);
  EXPECT_EQ(c.stats().row_hits, 1u);
}

TEST(Controller, WritesWaitBehindReadsUntilTheHighWatermark) {
  HbmConfig config = testing::one_channel();
  config.controller.write_high_watermark = 4;
  config.controller.write_low_watermark = 1;
  Controller c(config);
  std::uint64_t id = 0;
  for (int i = 0; i < 3; ++i) c.enqueue(at(id++, 1, 0, 9, true), 0);  // older than the reads
  for (int i = 0; i < 8; ++i) c.enqueue(at(id++, 0, 0, 5), 0);
  std::uint64_t reads_done = 0;
  for (Cycle now = 0; now < 400; ++now) {
    c.tick(now, [&](std::uint64_t, Cycle) {
      ++reads_done;
      EXPECT_EQ(c.stats().writes, 0u) << "a write went before read " << reads_done;
    });
  }
  EXPECT_EQ(reads_done, 8u);
  EXPECT_EQ(c.stats().writes, 3u);  // with no reads left, the writes drain
}

TEST(Controller, AtTheHighWatermarkWritesDrainToTheLowOneWhileReadsWait) {
  HbmConfig config = testing::one_channel();
  config.controller.write_high_watermark = 4;
  config.controller.write_low_watermark = 1;
  Controller c(config);
  std::uint64_t id = 0;
  for (int i = 0; i < 4; ++i) c.enqueue(at(id++, 1, 0, 9, true), 0);
  for (int i = 0; i < 8; ++i) c.enqueue(at(id++, 0, 0, 5), 0);
  std::vector<std::uint64_t> writes_at_read;
  for (Cycle now = 0; now < 600; ++now) {
    c.tick(now, [&](std::uint64_t, Cycle) { writes_at_read.push_back(c.stats().writes); });
  }
  ASSERT_EQ(writes_at_read.size(), 8u);
  EXPECT_EQ(writes_at_read.front(), 3u);  // drained to the low watermark before any read
  EXPECT_EQ(c.stats().writes, 4u);        // the last one once the reads were done
}

TEST(Controller, RefreshesEveryTrefiAndBlocksForTrfc) {
  const HbmConfig config = testing::one_channel();
  Controller c(config);
  Served r;
  run(c, 0, 3 * 3900 + 1, r);
  EXPECT_EQ(c.stats().refreshes, 3u);
  // A read arriving during the refresh at 3900 waits for tRFC.
  Controller d(config);
  run(d, 0, 3901, r);
  d.enqueue(at(7, 0, 0, 1), 3901);
  Served late;
  run(d, 3901, 5000, late);
  ASSERT_EQ(late.done.size(), 1u);
  EXPECT_EQ(late.done[0], 3900 + 260 + 14 + 14 + 2);
}

}  // namespace
}  // namespace podsim::hbm
