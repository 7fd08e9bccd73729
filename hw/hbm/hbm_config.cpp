#include "hw/hbm/hbm_config.h"

#include <fmt/format.h>

#include <cmath>
#include <stdexcept>

#include "hw/hbm/address_map.h"

namespace podsim::hbm {

namespace {

bool is_power_of_two(std::uint64_t n) { return n != 0 && (n & (n - 1)) == 0; }

int cycles_of(double ns, core::Duration tck) {
  const auto ps = static_cast<std::int64_t>(std::llround(ns * 1000));
  return static_cast<int>((ps + tck.ps - 1) / tck.ps);
}

HbmConfig with_stacks(HbmConfig config, int stacks, int rows, core::Duration tck) {
  config.geometry.stacks = stacks;
  config.geometry.rows = rows;
  config.timing = timing_at(hbm2e_timing_ns(), tck, config.geometry.burst_length);
  // The front end's 9 ns ([D], docs/hbm.md) at this clock.
  config.controller.frontend_cycles = cycles_of(9, tck);
  return config;
}

}  // namespace

std::uint64_t HbmGeometry::capacity() const {
  return static_cast<std::uint64_t>(pc_count()) * static_cast<std::uint64_t>(banks()) *
         static_cast<std::uint64_t>(rows) * row_bytes.bytes;
}

void HbmGeometry::check(core::ConfigChecks& c) const {
  if (burst_length % 2 != 0) c.fail("burst_length", "must be even (two beats per clock)");
  if ((bus_bits % 8) != 0) c.fail("bus_bits", "must be a whole number of bytes");
  if (row_bytes.bytes % burst_bytes() != 0 || !is_power_of_two(row_bytes.bytes / burst_bytes())) {
    c.fail("row_bytes", fmt::format("must be a power-of-two number of {}-byte bursts, got {}",
                                    burst_bytes(), core::to_string(row_bytes)));
  }
}

void HbmTiming::check(core::ConfigChecks& c) const {
  if (rc < ras + rp) c.fail("rc", fmt::format("must be at least ras + rp ({})", ras + rp));
  if (ccd_l < ccd_s) c.fail("ccd_l", "must be at least ccd_s");
  if (rrd_l < rrd_s) c.fail("rrd_l", "must be at least rrd_s");
  if (wtr_l < wtr_s) c.fail("wtr_l", "must be at least wtr_s");
  if (ccd_s < 1) c.fail("ccd_s", "must be at least one cycle");
  if (rrd_s < 1) c.fail("rrd_s", "must be at least one cycle");
  if (refi <= rfc) c.fail("refi", fmt::format("must exceed rfc ({})", rfc));
}

core::Bandwidth HbmConfig::peak_bandwidth() const {
  const double burst_seconds = (geometry.burst_length / 2) * timing.tck.seconds();
  return core::Bandwidth{static_cast<double>(geometry.pc_count()) *
                         static_cast<double>(geometry.burst_bytes()) * 8 / burst_seconds};
}

void HbmConfig::check(core::ConfigChecks& c) const {
  if (controller.write_low_watermark >= controller.write_high_watermark) {
    c.fail("controller.write_low_watermark", "must be below write_high_watermark");
  }
  if (controller.write_high_watermark > controller.write_queue) {
    c.fail("controller.write_high_watermark", "must not exceed write_queue");
  }
  try {
    AddressDecoder decoder(geometry, address_map);
  } catch (const std::invalid_argument& e) {
    c.fail("address_map.layout", e.what());
  }
}

TimingNs hbm2_timing_ns() {
  // [H2] DRAMsim3 configs/HBM2_8Gb_x128.ini at tCK = 1 ns; tRTP is the simulator's default (its
  // HBM file's tRTP_S/L are not read), tRFC 260 ns its 8 Gb value.
  return TimingNs{14, 4, 14, 14, 34, 1, 2, 4, 6, 30, 6, 8, 5, 16, 3900, 260};
}

TimingNs hbm2e_timing_ns() {
  TimingNs ns = hbm2_timing_ns();
  ns.rfc = 350;  // [H3] Ramulator2's HBM2 tRFC for the denser dies
  return ns;
}

HbmTiming timing_at(const TimingNs& ns, core::Duration tck, int burst_length) {
  if (tck.ps <= 0) throw std::invalid_argument("timing_at: tck must be positive");
  HbmTiming t;
  t.tck = tck;
  t.rl = cycles_of(ns.rl, tck);
  t.wl = cycles_of(ns.wl, tck);
  t.rcd = cycles_of(ns.rcd, tck);
  t.rp = cycles_of(ns.rp, tck);
  t.ras = cycles_of(ns.ras, tck);
  t.rc = t.ras + t.rp;
  t.ccd_s = cycles_of(ns.ccd_s, tck);
  t.ccd_l = cycles_of(ns.ccd_l, tck);
  t.rrd_s = cycles_of(ns.rrd_s, tck);
  t.rrd_l = cycles_of(ns.rrd_l, tck);
  t.faw = cycles_of(ns.faw, tck);
  t.wtr_s = cycles_of(ns.wtr_s, tck);
  t.wtr_l = cycles_of(ns.wtr_l, tck);
  // [H2] src/timing.cc: read_to_write = RL + burst - WL + tRTRS, tRTRS = 2 cycles.
  t.rtw = t.rl + burst_length / 2 - t.wl + 2;
  t.rtp = cycles_of(ns.rtp, tck);
  t.wr = cycles_of(ns.wr, tck);
  t.refi = cycles_of(ns.refi, tck);
  t.rfc = cycles_of(ns.rfc, tck);
  return t;
}

HbmConfig hbm2() {
  HbmConfig config;
  config.geometry.stacks = 4;    // [S1]
  config.geometry.rows = 32768;  // 8 GiB stacks: 4 x 8 GiB = 32 GiB [S1]
  config.timing = timing_at(hbm2_timing_ns(), core::Duration{1000}, config.geometry.burst_length);
  config.controller.frontend_cycles = cycles_of(9, config.timing.tck);
  return config;
}

HbmConfig hbm2e() { return with_stacks(HbmConfig{}, 6, 65536, core::Duration{625}); }

HbmConfig hbm2e_gaudi3() { return with_stacks(HbmConfig{}, 8, 65536, core::Duration{556}); }

HbmConfig preset_for_chip(std::string_view chip) {
  if (chip == "gaudi1") return hbm2();
  if (chip == "gaudi2") return hbm2e();
  if (chip == "gaudi3") return hbm2e_gaudi3();
  throw std::invalid_argument(
      fmt::format("hbm preset: no chip '{}' (gaudi1, gaudi2, gaudi3)", chip));
}

}  // namespace podsim::hbm
