#include "core/bandwidth_server.h"

#include <gtest/gtest.h>

#include <stdexcept>

#include "core/units.h"

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

// An initiator that runs ahead of the kernel (a core a quantum ahead, a QMAN fetching its next
// buffer) schedules a transfer in the future; one arriving earlier but called later takes the
// idle time before it instead of queueing behind it.
TEST(BandwidthServer, AnEarlierArrivalUsesIdleTimeBeforeATransferScheduledAhead) {
  BandwidthServer server(kBandwidth, kLatency);
  server.schedule(30000, 100);                 // 30000 .. 31000
  const auto early = server.schedule(0, 100);  // called later, arrives earlier
  EXPECT_EQ(early.start, 0u);
  EXPECT_EQ(early.end, 1000u);
  const auto tight = server.schedule(29500, 100);  // the gap before 30000 is too short
  EXPECT_EQ(tight.start, 31000u);
  const auto fits = server.schedule(29000, 100);  // exactly fills 29000 .. 30000
  EXPECT_EQ(fits.start, 29000u);
  EXPECT_EQ(server.busy_until(), 32000u);
  EXPECT_EQ(server.busy_ps(), 4000u);
  const auto after = server.schedule(29000, 200);  // 29000 .. 32000 is now one busy stretch
  EXPECT_EQ(after.start, 32000u);
}

TEST(BandwidthServer, TimeBeforeTheRememberedStretchesCountsAsBusy) {
  BandwidthServer server(kBandwidth, kLatency);
  for (int i = 0; i < BandwidthServer::kIntervals + 4; ++i) {
    server.schedule(static_cast<TimePs>(i) * 10000, 100);  // separate stretches, 9000 ps apart
  }
  // The first stretches are forgotten: an arrival in their gaps waits for the oldest remembered.
  const auto g = server.schedule(1000, 100);
  EXPECT_EQ(g.start, 3u * 10000 + 1000);  // the end of the last forgotten one
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
