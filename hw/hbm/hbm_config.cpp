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

HbmConfig with_stacks(HbmConfig config, int stacks, int rows, core::Duration tck,
                      const TimingNs& ns) {
  config.geometry.stacks = stacks;
  config.geometry.rows = rows;
  config.timing = timing_at(ns, tck, config.geometry.burst_length);
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

HbmConfig for_part(std::string_view generation, int stacks, std::uint64_t capacity,
                   core::Bandwidth peak) {
  const HbmGeometry g;
  if (generation != "HBM2" && generation != "HBM2E") {
    throw std::invalid_argument(
        fmt::format("hbm: generation '{}' has no timing (HBM2, HBM2E)", generation));
  }
  if (stacks < 1) throw std::invalid_argument("hbm: needs at least one stack");
  const std::uint64_t row_set = static_cast<std::uint64_t>(stacks) * g.channels_per_stack *
                                g.pseudo_channels * g.banks() * g.row_bytes.bytes;
  const std::uint64_t rows = capacity / row_set;
  if (rows < 1 || rows > (1u << 24)) {
    throw std::invalid_argument(
        fmt::format("hbm: capacity {} over {} stacks gives {} rows per bank (1..16M)",
                    core::to_string(core::ByteSize{capacity}), stacks, rows));
  }
  const double pins =
      static_cast<double>(stacks) * g.channels_per_stack * g.pseudo_channels * g.bus_bits;
  const double pin_rate = peak.bits_per_second / pins;  // bits per second per pin
  if (!(pin_rate > 0)) throw std::invalid_argument("hbm: bandwidth must be positive");
  // Two beats per clock.
  const core::Duration tck{static_cast<std::int64_t>(std::llround(2e12 / pin_rate))};
  if (tck.ps < 1) throw std::invalid_argument("hbm: bandwidth gives a clock under 1 ps");
  return with_stacks(HbmConfig{}, stacks, static_cast<int>(rows), tck,
                     generation == "HBM2" ? hbm2_timing_ns() : hbm2e_timing_ns());
}

namespace {

// The peak of `stacks` of 1024 pins at `gbps` per pin.
core::Bandwidth pins_at(int stacks, double gbps) {
  return core::Bandwidth{stacks * 1024.0 * gbps * 1e9};
}

}  // namespace

// [S1] 4 stacks, 32 GiB, 2 Gb/s per pin (1.024 TB/s).
HbmConfig hbm2() { return for_part("HBM2", 4, 32ull << 30, pins_at(4, 2.0)); }

// [S6] 6 stacks of 16 GiB at 3.2 Gb/s per pin (2.458 TB/s).
HbmConfig hbm2e() { return for_part("HBM2E", 6, 96ull << 30, pins_at(6, 3.2)); }

// [S4] 8 stacks of 16 GiB at 3.6 Gb/s per pin (3.686 TB/s).
HbmConfig hbm2e_gaudi3() { return for_part("HBM2E", 8, 128ull << 30, pins_at(8, 3.6)); }

HbmConfig preset_for_chip(std::string_view chip) {
  if (chip == "gaudi1") return hbm2();
  if (chip == "gaudi2") return hbm2e();
  if (chip == "gaudi3") return hbm2e_gaudi3();
  throw std::invalid_argument(
      fmt::format("hbm preset: no chip '{}' (gaudi1, gaudi2, gaudi3)", chip));
}

}  // namespace podsim::hbm
