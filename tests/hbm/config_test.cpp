#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "hw/hbm/hbm_config.h"

namespace podsim::hbm {
namespace {

constexpr std::uint64_t kGiB = 1ULL << 30;

TEST(HbmConfig, PresetsGiveTheChipsCapacityAndBandwidth) {
  EXPECT_EQ(hbm2().capacity(), 32 * kGiB);
  EXPECT_DOUBLE_EQ(hbm2().peak_bandwidth().bytes_per_second(), 1024e9);
  EXPECT_EQ(hbm2e().capacity(), 96 * kGiB);
  EXPECT_NEAR(hbm2e().peak_bandwidth().bytes_per_second(), 2.45e12, 0.01e12);
  EXPECT_EQ(hbm2e_gaudi3().capacity(), 128 * kGiB);
  EXPECT_NEAR(hbm2e_gaudi3().peak_bandwidth().bytes_per_second(), 3.67e12, 0.02e12);
}

TEST(HbmConfig, Hbm2TimingIsDramsim3sInCycles) {
  const HbmTiming t = hbm2().timing;
  EXPECT_EQ(t.tck.ps, 1000);
  EXPECT_EQ(std::vector<int>({t.rl, t.wl, t.rcd, t.rp, t.ras, t.rc, t.ccd_s, t.ccd_l, t.rrd_s,
                              t.rrd_l, t.faw, t.wtr_s, t.wtr_l, t.rtw, t.rtp, t.wr, t.refi, t.rfc}),
            std::vector<int>({14, 4, 14, 14, 34, 48, 1, 2, 4, 6, 30, 6, 8, 14, 5, 16, 3900, 260}));
}

TEST(HbmConfig, StructDefaultsAreTheGaudi2Preset) {
  const HbmConfig defaults;
  const HbmConfig preset = hbm2e();
  EXPECT_EQ(defaults.capacity(), preset.capacity());
  const HbmTiming& a = defaults.timing;
  const HbmTiming& b = preset.timing;
  EXPECT_EQ(
      std::vector<int>({a.rl, a.wl, a.rcd, a.rp, a.ras, a.rc, a.ccd_s, a.ccd_l, a.rrd_s, a.rrd_l,
                        a.faw, a.wtr_s, a.wtr_l, a.rtw, a.rtp, a.wr, a.refi, a.rfc}),
      std::vector<int>({b.rl, b.wl, b.rcd, b.rp, b.ras, b.rc, b.ccd_s, b.ccd_l, b.rrd_s, b.rrd_l,
                        b.faw, b.wtr_s, b.wtr_l, b.rtw, b.rtp, b.wr, b.refi, b.rfc}));
  EXPECT_EQ(a.tck, b.tck);
  EXPECT_EQ(defaults.controller.frontend_cycles, preset.controller.frontend_cycles);
}

// A chip's published summary gives the same HBM as the presets: the clock from the bandwidth
// over 1024 pins a stack, the rows from the capacity, the timing from the generation.
TEST(HbmConfig, APartSummaryGivesClockRowsAndTiming) {
  const HbmConfig gaudi2 = for_part("HBM2E", 6, 96 * kGiB, core::Bandwidth{2.45e12 * 8});
  EXPECT_EQ(gaudi2.timing.tck.ps, 627);  // 3.19 Gb/s per pin
  EXPECT_EQ(gaudi2.geometry.rows, 65536);
  EXPECT_EQ(gaudi2.timing.rfc, 559);  // HBM2E's 350 ns
  EXPECT_EQ(for_part("HBM2", 4, 32 * kGiB, hbm2().peak_bandwidth()).timing.rfc, 260);
  const auto fails = [](auto&& make, const char* message) {
    EXPECT_THAT(make,
                ::testing::ThrowsMessage<std::invalid_argument>(::testing::HasSubstr(message)));
  };
  fails([] { for_part("HBM3", 6, 96 * kGiB, core::Bandwidth{1e12}); }, "generation 'HBM3'");
  fails([] { for_part("HBM2", 4, 1 << 19, core::Bandwidth{1e12}); }, "gives 0 rows");
  fails([] { for_part("HBM2", 4, 32 * kGiB, core::Bandwidth{0}); }, "bandwidth");
}

TEST(HbmConfig, EveryKeyCitesASource) {
  for (const auto& row : core::config_schema<HbmConfig>()) {
    EXPECT_FALSE(row.source.empty()) << row.path;
  }
}

TEST(HbmConfig, BadValuesNameTheirKey) {
  HbmConfig c;
  c.controller.write_low_watermark = 30;
  EXPECT_THAT([&] { core::validate_config(c); }, ::testing::ThrowsMessage<std::invalid_argument>(
                                                     ::testing::HasSubstr("write_low_watermark")));
  c = HbmConfig{};
  c.timing.rc = 10;
  EXPECT_THAT([&] { core::validate_config(c); },
              ::testing::ThrowsMessage<std::invalid_argument>(::testing::HasSubstr("rc")));
  c = HbmConfig{};
  c.address_map.layout = "bank,row";
  EXPECT_THAT([&] { core::validate_config(c); },
              ::testing::ThrowsMessage<std::invalid_argument>(::testing::HasSubstr("layout")));
  EXPECT_THROW(preset_for_chip("gaudi9"), std::invalid_argument);
  EXPECT_EQ(preset_for_chip("gaudi1").geometry.stacks, 4);
}

}  // namespace
}  // namespace podsim::hbm
