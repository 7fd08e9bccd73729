#include "hw/ipulink/bsp_roofline.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <stdexcept>

namespace podsim::ipulink {
namespace {

using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

// The GC200's placeholders, written out so that the expectations below are hand arithmetic.
constexpr core::TimePs kExchangeLatency = 50000;
constexpr core::TimePs kSync = 200000;
constexpr core::TimePs kSyncLink = 1000000;

TEST(BspRoofline, PresetLatenciesAreTheOnesTheseTestsAssume) {
  const IpuConfig c = gc200();
  EXPECT_EQ(static_cast<core::TimePs>(c.exchange_latency.ps), kExchangeLatency);
  EXPECT_EQ(static_cast<core::TimePs>(c.sync_latency.ps), kSync);
  EXPECT_EQ(static_cast<core::TimePs>(c.sync_link_latency.ps), kSyncLink);
}

// 250 GFLOP at 250 TFLOPS is 1 ms; 1 GB of tile traffic at 47.5 TB/s only 21 us.
TEST(BspRoofline, ComputeBoundLayerTakesItsFlopsAtThePeak) {
  PhaseWork w;
  w.flops = 250e9;
  w.memory_bytes = 1e9;
  const PhaseTimes t = bsp_time(gc200(), w);
  EXPECT_EQ(t.compute_ps, 1000000000u);
  EXPECT_EQ(t.exchange_ps, 0u);
  EXPECT_EQ(t.sync_ps, kSync);
  EXPECT_EQ(t.total_ps(), 1000000000u + kSync);
  EXPECT_EQ(t.limit, Limit::kFlops);

  w.efficiency = 0.5;
  EXPECT_EQ(bsp_time(gc200(), w).compute_ps, 2000000000u);
}

// 475 MB at 47.5 TB/s is 10 us; 1 GFLOP at the peak only 4 us.
TEST(BspRoofline, MemoryBoundLayerTakesItsBytesAtTheTilesBandwidth) {
  PhaseWork w;
  w.flops = 1e9;
  w.memory_bytes = 475e6;
  const PhaseTimes t = bsp_time(gc200(), w);
  EXPECT_EQ(t.compute_ps, 10000000u);
  EXPECT_EQ(t.limit, Limit::kMemory);
}

// 8 GB over the 8 TB/s exchange is 1 ms, and ten supersteps pay ten latencies and ten syncs.
TEST(BspRoofline, ExchangeBoundLayerPaysLatencyAndSyncPerSuperstep) {
  PhaseWork w;
  w.flops = 1e6;
  w.exchange_bytes = 8e9;
  w.supersteps = 10;
  const PhaseTimes t = bsp_time(gc200(), w);
  EXPECT_EQ(t.compute_ps, 4000u);
  EXPECT_EQ(t.exchange_ps, 1000000000u + 10 * kExchangeLatency);
  EXPECT_EQ(t.sync_ps, 10 * kSync);
  EXPECT_EQ(t.limit, Limit::kExchange);
}

TEST(BspRoofline, ManySmallSuperstepsAcrossChipsAreSyncBound) {
  PhaseWork w;
  w.flops = 1e6;
  w.exchange_bytes = 1e3;
  w.supersteps = 1000;
  w.sync = SyncScope::kSyncLink;
  const PhaseTimes t = bsp_time(gc200(), w);
  EXPECT_EQ(t.sync_ps, 1000 * kSyncLink);
  EXPECT_EQ(t.limit, Limit::kSync);
  w.sync = SyncScope::kChip;
  EXPECT_EQ(bsp_time(gc200(), w).sync_ps, 1000 * kSync);
}

// A 1024 x 1024 x 1024 FP16 matmul at 80% of the peak, over three supersteps:
//   flops    2 * 1024^3 = 2147483648 / (250e12 * 0.8) = 10737418.24 ps -> 10737419
//   memory   A, B read and C written, 2 MiB each: 6291456 B / 47.5 TB/s = 132452 ps (below)
//   exchange 16 MiB / 8 TB/s = 2097152 ps, + 3 * 50000 = 2247152
//   sync     3 * 200000 = 600000
TEST(BspRoofline, AMatmulWorkedByHand) {
  PhaseWork w;
  w.flops = 2.0 * 1024 * 1024 * 1024;
  w.efficiency = 0.8;
  w.memory_bytes = 3.0 * 2 * 1024 * 1024;
  w.exchange_bytes = 16.0 * 1024 * 1024;
  w.supersteps = 3;
  const PhaseTimes t = bsp_time(gc200(), w);
  EXPECT_EQ(t.compute_ps, 10737419u);
  EXPECT_EQ(t.exchange_ps, 2247152u);
  EXPECT_EQ(t.sync_ps, 600000u);
  EXPECT_EQ(t.total_ps(), 13584571u);
  EXPECT_EQ(t.limit, Limit::kFlops);

  // The Bow's 350 TFLOPS: 2147483648 / 280e12 = 7669584.457 ps.
  EXPECT_EQ(bsp_time(bow_ipu(), w).compute_ps, 7669585u);
}

TEST(BspRoofline, NoWorkIsOneSync) {
  const PhaseTimes t = bsp_time(gc200(), PhaseWork{});
  EXPECT_EQ(t.compute_ps, 0u);
  EXPECT_EQ(t.exchange_ps, 0u);
  EXPECT_EQ(t.total_ps(), kSync);
}

TEST(BspRoofline, BadWorkNamesTheField) {
  const auto fails = [](PhaseWork w, const char* message) {
    EXPECT_THAT([&] { bsp_time(gc200(), w); },
                ThrowsMessage<std::invalid_argument>(HasSubstr(message)));
  };
  PhaseWork w;
  w.supersteps = 0;
  fails(w, "supersteps");
  w = PhaseWork{};
  w.efficiency = 0;
  fails(w, "efficiency");
  w.efficiency = 1.5;
  fails(w, "efficiency");
  w = PhaseWork{};
  w.flops = -1;
  fails(w, "flops");
  w = PhaseWork{};
  w.exchange_bytes = -1;
  fails(w, "exchange_bytes");

  IpuConfig bad;
  bad.memory_bandwidth = core::Bandwidth{0};
  EXPECT_THAT([&] { bsp_time(bad, PhaseWork{}); },
              ThrowsMessage<std::invalid_argument>(HasSubstr("memory_bandwidth")));
}

// 940572672 B of In-Processor-Memory against 950 MB: 9427328 B over, which take
// 9427328 / 20 GB/s = 471366400 ps to stream in.
TEST(BspRoofline, WorkingSetFitsOrSaysWhatItCostsToStream) {
  WorkingSet set;
  set.weight_bytes = 500e6;
  set.activation_bytes = 300e6;
  set.optimizer_bytes = 100e6;
  set.code_bytes = 50e6;
  MemoryFit fit = memory_fit(gc200(), set);
  EXPECT_DOUBLE_EQ(fit.required_bytes, 950e6);
  EXPECT_DOUBLE_EQ(fit.available_bytes, 940572672.0);
  EXPECT_FALSE(fit.fits);
  EXPECT_DOUBLE_EQ(fit.excess_bytes, 9427328.0);
  EXPECT_EQ(fit.stream_ps, 471366400u);

  set.code_bytes = 0;
  fit = memory_fit(gc200(), set);
  EXPECT_TRUE(fit.fits);
  EXPECT_EQ(fit.excess_bytes, 0);
  EXPECT_EQ(fit.stream_ps, 0u);

  set.activation_bytes = -1;
  EXPECT_THAT([&] { memory_fit(gc200(), set); },
              ThrowsMessage<std::invalid_argument>(HasSubstr("activation_bytes")));
}

}  // namespace
}  // namespace podsim::ipulink
