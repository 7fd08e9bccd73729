#include "hw/core/bandwidth_server.h"

#include <gtest/gtest.h>

#include <stdexcept>

#include "hw/core/units.h"

namespace podsim::core {
namespace {

using namespace literals;

// 800 Gbps is 100 GB/s: exactly 10 ps per byte, so expected times are plain integers.
constexpr TimePs kPsPerByte = 10;
const Bandwidth kBandwidth = 800_Gbps;
const Duration kLatency = 50_ns;
constexpr TimePs kLatencyPs = 50000;

TEST(BandwidthServer, IdleServerStartsAtArrival) {
  BandwidthServer server(kBandwidth, kLatency);
  const auto grant = server.schedule(1000, 4096);
  EXPECT_EQ(grant.start, 1000u);
  EXPECT_EQ(grant.end, 1000u + 4096 * kPsPerByte);
  EXPECT_EQ(grant.done, grant.end + kLatencyPs);
  EXPECT_EQ(server.busy_until(), grant.end);
}

TEST(BandwidthServer, TransfersArrivingTogetherSerialize) {
  BandwidthServer server(kBandwidth, kLatency);
  const auto first = server.schedule(0, 1 << 20);
  const auto second = server.schedule(0, 1 << 20);
  EXPECT_EQ(second.start, first.end);
  EXPECT_EQ(second.end, 2u * (1 << 20) * kPsPerByte);
  // Latency overlaps the next transfer rather than adding to the server's occupancy.
  EXPECT_EQ(second.done, second.end + kLatencyPs);
  EXPECT_EQ(server.busy_ps(), 2u * (1 << 20) * kPsPerByte);
}

TEST(BandwidthServer, LateArrivalAfterIdleGapStartsAtArrival) {
  BandwidthServer server(kBandwidth, kLatency);
  server.schedule(0, 100);  // busy until 1000 ps
  const auto grant = server.schedule(5000, 100);
  EXPECT_EQ(grant.start, 5000u);
  EXPECT_EQ(grant.end, 6000u);
  EXPECT_EQ(server.busy_ps(), 2000u);
}

TEST(BandwidthServer, ArrivalDuringTransferWaits) {
  BandwidthServer server(kBandwidth, kLatency);
  server.schedule(0, 1000);  // busy until 10000 ps
  const auto grant = server.schedule(4000, 10);
  EXPECT_EQ(grant.start, 10000u);
  EXPECT_EQ(grant.end, 10100u);
}

TEST(BandwidthServer, ZeroBytesTakeOnlyLatency) {
  BandwidthServer server(kBandwidth, kLatency);
  const auto grant = server.schedule(700, 0);
  EXPECT_EQ(grant.start, 700u);
  EXPECT_EQ(grant.end, 700u);
  EXPECT_EQ(grant.done, 700u + kLatencyPs);
}

TEST(BandwidthServer, FractionalPicosecondsRoundUp) {
  // 3 bytes at 7 Gbps is 3428.57 ps.
  BandwidthServer server(7_Gbps, Duration{0});
  const auto grant = server.schedule(0, 3);
  EXPECT_EQ(grant.end, 3429u);
}

TEST(BandwidthServer, ManySmallTransfersAddUpExactly) {
  BandwidthServer server(kBandwidth, kLatency);
  BandwidthServer::Grant last{};
  for (int i = 0; i < 1000; ++i) last = server.schedule(0, 64);
  EXPECT_EQ(last.end, 1000u * 64 * kPsPerByte);
}

TEST(BandwidthServer, RejectsNonPositiveBandwidth) {
  EXPECT_THROW(BandwidthServer(Bandwidth{0}, kLatency), std::invalid_argument);
  EXPECT_THROW(BandwidthServer(Bandwidth{-1}, kLatency), std::invalid_argument);
}

TEST(BandwidthServer, RejectsNegativeLatency) {
  EXPECT_THROW(BandwidthServer(kBandwidth, Duration{-1}), std::invalid_argument);
}

}  // namespace
}  // namespace podsim::core
