#include "hw/pcie/pcie_timing.h"

#include <gtest/gtest.h>

#include <stdexcept>

namespace podsim::pcie {
namespace {

constexpr std::uint64_t kBulk = 64ull << 20;

double rate(const PcieLinkConfig& c, Direction d) { return dma_rate(c, d, kBulk); }

TEST(PcieTiming, SignallingRateEncodingAndSkp) {
  PcieLinkConfig c;
  c.generation = Generation::kGen1;
  c.lanes = 1;
  EXPECT_DOUBLE_EQ(LinkTiming(c).data_rate(), 2.5e9 * 0.8 / 8 * (1 - 4.0 / 1538));
  c.generation = Generation::kGen3;
  EXPECT_DOUBLE_EQ(LinkTiming(c).data_rate(), 8e9 * 128 / 130 / 8 * (1 - 1.0 / 376));
  c.generation = Generation::kGen4;
  c.lanes = 16;
  EXPECT_NEAR(LinkTiming(c).data_rate(), 31.42e9, 0.01e9);
}

// Gen4 x16, 256 B payload: 4 B framing and sequence, 16 B header, 4 B LCRC = 280 B, rounded to
// 320 B of 64-byte datapath, plus a quarter of an ACK and of an UpdateFC (2 B each).
TEST(PcieTiming, WriteTlpCostsItsHeaderFramingCrcAndDllpShare) {
  const LinkTiming t(gen4_x16());
  EXPECT_DOUBLE_EQ(t.tlp_link_bytes(TlpKind::kMemoryWrite, 256), 324);
  EXPECT_DOUBLE_EQ(t.tlp_link_bytes(TlpKind::kCompletion, 256), 324);
  EXPECT_DOUBLE_EQ(t.tlp_link_bytes(TlpKind::kMemoryRead, 0), 68);
  // 1000 bytes: three full TLPs and one of 232 bytes (256 B of datapath).
  EXPECT_DOUBLE_EQ(t.write_link_bytes(1000), 3 * 324 + 260);
  EXPECT_EQ(t.read_requests(1000), 2u);
}

TEST(PcieTiming, Gen4X16DmaIsAbout24To26GBPerSecondEachWay) {
  const double down = rate(gen4_x16(), Direction::kHostToDevice);
  const double up = rate(gen4_x16(), Direction::kDeviceToHost);
  EXPECT_GT(down, 24e9);
  EXPECT_LT(down, 26e9);
  EXPECT_GT(up, 24e9);
  EXPECT_LT(up, 26e9);
}

TEST(PcieTiming, Gen5X16IsAboutDouble) {
  for (Direction d : {Direction::kHostToDevice, Direction::kDeviceToHost}) {
    const double ratio = rate(gen5_x16(), d) / rate(gen4_x16(), d);
    EXPECT_GT(ratio, 1.95);
    EXPECT_LT(ratio, 2.01);
  }
}

// Each overhead term, changed on its own, moves the rate the way it should.
void expect_lower(const PcieLinkConfig& changed, Direction d) {
  EXPECT_LT(rate(changed, d), rate(gen4_x16(), d) * 0.999);
}
void expect_higher(const PcieLinkConfig& changed, Direction d) {
  EXPECT_GT(rate(changed, d), rate(gen4_x16(), d) * 1.001);
}

TEST(PcieTiming, EachOverheadTermChangesTheRate) {
  const auto up = Direction::kDeviceToHost, down = Direction::kHostToDevice;
  PcieLinkConfig c = gen4_x16();
  c.ecrc = true;
  c.tlp_granularity = 4;
  EXPECT_LT(rate(c, up), [] {
    PcieLinkConfig g = gen4_x16();
    g.tlp_granularity = 4;
    return rate(g, Direction::kDeviceToHost);
  }());
  c = gen4_x16();
  c.tlp_granularity = 4;
  expect_higher(c, up);
  c = gen4_x16();
  c.tlp_granularity = 4;
  c.address_64bit = false;
  EXPECT_GT(rate(c, up), [] {
    PcieLinkConfig g = gen4_x16();
    g.tlp_granularity = 4;
    return rate(g, Direction::kDeviceToHost);
  }());
  c = gen4_x16();
  c.tlps_per_ack = 1;
  expect_lower(c, up);
  c = gen4_x16();
  c.tlps_per_fc_update = 1;
  expect_lower(c, down);
  c = gen4_x16();
  c.max_payload = 128;
  expect_lower(c, up);
  expect_lower(c, down);
  c.max_payload = 512;
  expect_higher(c, up);
  c = gen4_x16();
  c.completions_at_rcb = true;
  expect_lower(c, down);
  c.read_completion_boundary = 128;
  EXPECT_GT(rate(c, down), [] {
    PcieLinkConfig g = gen4_x16();
    g.completions_at_rcb = true;
    return rate(g, Direction::kHostToDevice);
  }());
  c = gen4_x16();
  c.lanes = 8;
  EXPECT_NEAR(rate(c, up) / rate(gen4_x16(), up), 0.5, 0.01);
  c = gen4_x16();
  c.generation = Generation::kGen3;
  EXPECT_NEAR(rate(c, up) / rate(gen4_x16(), up), 0.5, 0.01);
}

TEST(PcieTiming, ReadRequestSizeSetsTheRequestTraffic) {
  PcieLinkConfig c = gen4_x16();
  const double requests_512 = LinkTiming(c).read_request_link_bytes(kBulk);
  c.max_read_request = 4096;
  EXPECT_DOUBLE_EQ(LinkTiming(c).read_request_link_bytes(kBulk), requests_512 / 8);
}

TEST(PcieTiming, PostedCreditsLimitWritesInFlight) {
  PcieLinkConfig c = gen4_x16();
  c.posted_header_credits = 8;  // 2 KiB in flight over a 400 ns credit loop: 5.1 GB/s
  const double limited = rate(c, Direction::kDeviceToHost);
  EXPECT_NEAR(limited, 2048 / 400e-9, 0.1e9);
  c.posted_header_credits = 0;
  c.posted_data_credits = 0;
  EXPECT_DOUBLE_EQ(rate(c, Direction::kDeviceToHost), rate(gen4_x16(), Direction::kDeviceToHost));
}

TEST(PcieTiming, TagsLimitOutstandingReads) {
  PcieLinkConfig c = gen4_x16();
  c.read_tags = 4;  // 2 KiB per round trip of a little over 300 ns
  const double limited = rate(c, Direction::kHostToDevice);
  EXPECT_LT(limited, 4 * 512 / 300e-9);
  EXPECT_GT(limited, 4 * 512 / 400e-9);
}

TEST(PcieTiming, LatencyCostsSmallTransfersMost) {
  const LinkTiming t(gen4_x16());
  EXPECT_EQ(t.write_time(4), t.serialize(t.tlp_link_bytes(TlpKind::kMemoryWrite, 4)) + 150000);
  EXPECT_LT(dma_rate(gen4_x16(), Direction::kDeviceToHost, 1024),
            rate(gen4_x16(), Direction::kDeviceToHost) / 2);
  PcieLinkConfig c = gen4_x16();
  c.latency = core::Duration{300000};
  EXPECT_EQ(LinkTiming(c).read_time(64) - t.read_time(64), 2 * 150000u);
}

TEST(PcieTiming, BadConfigurationsNameTheKey) {
  PcieLinkConfig c = gen4_x16();
  c.lanes = 3;
  EXPECT_THROW(
      try { LinkTiming{c}; } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("lanes"), std::string::npos);
        throw;
      },
      std::invalid_argument);
  c = gen4_x16();
  c.max_payload = 300;
  EXPECT_THROW(LinkTiming{c}, std::invalid_argument);
  c = gen4_x16();
  c.read_completion_boundary = 96;
  EXPECT_THROW(LinkTiming{c}, std::invalid_argument);
  EXPECT_THROW(dma_rate(gen4_x16(), Direction::kDeviceToHost, 0), std::invalid_argument);
}

}  // namespace
}  // namespace podsim::pcie
