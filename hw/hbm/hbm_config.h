// Configuration of an HBM model: geometry (stacks, channels, pseudo-channels, bank groups, banks,
// rows), the DRAM timing parameters in clock cycles, the address map, the per-pseudo-channel
// controller (queues, write-drain watermarks, front-end latency) and refresh.
// Captures: every number the model uses, each default with its source; presets for HBM2 (Gaudi1)
// and HBM2E (Gaudi2, Gaudi3) sized so the chips' published capacity and bandwidth come out.
// Ignores: power, self refresh, per-bank refresh, ECC and the PHY's training; per-die variation.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/config_binding.h"
#include "core/units.h"

namespace podsim::hbm {

// Organisation of the memory. A pseudo-channel (JESD235 pseudo-channel mode) is the unit with
// its own banks, data bus and controller; a channel holds `pseudo_channels` of them.
struct HbmGeometry {
  int stacks = 6;
  int channels_per_stack = 8;
  int pseudo_channels = 2;
  int bank_groups = 4;
  int banks_per_group = 4;
  int rows = 65536;
  core::ByteSize row_bytes{1024};  // one pseudo-channel's page
  int bus_bits = 64;               // data bus of one pseudo-channel
  int burst_length = 4;            // BL: beats per column access

  int pc_count() const { return stacks * channels_per_stack * pseudo_channels; }
  int channel_count() const { return stacks * channels_per_stack; }
  int banks() const { return bank_groups * banks_per_group; }
  std::uint64_t burst_bytes() const {
    return static_cast<std::uint64_t>(bus_bits) / 8 * static_cast<std::uint64_t>(burst_length);
  }
  std::uint64_t columns() const { return row_bytes.bytes / burst_bytes(); }  // bursts per row
  std::uint64_t capacity() const;

  template <class V>
  void describe(V& v) {
    v.field("stacks", stacks,
            core::Spec("HBM stacks")
                .range(1, 64)
                .source("[S6] Gaudi2 six stacks (Gaudi1 4 [S1], "
                        "Gaudi3 8 [S4])"));
    v.field("channels_per_stack", channels_per_stack,
            core::Spec("128-bit channels per stack").range(1, 64).source("[H1] 8 per stack"));
    v.field("pseudo_channels", pseudo_channels,
            core::Spec("pseudo-channels per channel (1: legacy mode)")
                .range(1, 2)
                .source("[H1] pseudo-channel mode: 2 x 64 bit"));
    v.field("bank_groups", bank_groups,
            core::Spec("bank groups per pseudo-channel").range(1, 16).source("[H1], [H2] 4"));
    v.field("banks_per_group", banks_per_group,
            core::Spec("banks per bank group").range(1, 16).source("[H1], [H2] 4"));
    v.field("rows", rows,
            core::Spec("rows per bank")
                .range(1, 1 << 24)
                .source("[D] capacity / (pseudo-channels x banks x row size): 16 GiB stacks "
                        "[S6] give 65536"));
    v.field("row_bytes", row_bytes,
            core::Spec("page size of one pseudo-channel")
                .positive()
                .source("[H1] 1 KiB in "
                        "pseudo-channel "
                        "mode"));
    v.field("bus_bits", bus_bits,
            core::Spec("data bus width of one pseudo-channel").range(8, 1024).source("[H1] 64"));
    v.field("burst_length", burst_length,
            core::Spec("BL: beats per column access (two per clock)")
                .range(2, 16)
                .source("[H1] BL4 in pseudo-channel mode; [H2] BL = 4"));
  }
  void check(core::ConfigChecks& c) const;
};

// DRAM timing in clock cycles of tCK. Rules are written once in channel_state.cpp.
struct HbmTiming {
  core::Duration tck{625};  // 1.6 GHz: 3.2 Gb/s per pin
  int rl = 23;              // read latency (CL, AL = 0)
  int wl = 7;               // write latency (CWL)
  int rcd = 23;             // ACT to column command
  int rp = 23;              // PRE to ACT
  int ras = 55;             // ACT to PRE
  int rc = 78;              // ACT to ACT, same bank
  int ccd_s = 2;            // column to column, different bank group
  int ccd_l = 4;            // column to column, same bank group
  int rrd_s = 7;            // ACT to ACT, different bank group
  int rrd_l = 10;           // ACT to ACT, same bank group
  int faw = 48;             // window holding at most four ACTs
  int wtr_s = 10;           // end of write data to RD, different bank group
  int wtr_l = 13;           // end of write data to RD, same bank group
  int rtw = 20;             // RD to WR
  int rtp = 8;              // RD to PRE
  int wr = 26;              // end of write data to PRE (write recovery)
  int refi = 6240;          // refresh interval
  int rfc = 560;            // refresh cycle time: all banks of the pseudo-channel blocked

  template <class V>
  void describe(V& v) {
    v.field("tck", tck,
            core::Spec("clock period; data moves on both edges")
                .positive()
                .source("[D] per-pin rate / 2: HBM2 2 Gb/s 1 ns (gaudi1 ~1 TB/s [S1]); HBM2E "
                        "3.2 Gb/s 625 ps (gaudi2 2.45 TB/s [S6]); 3.6 Gb/s 556 ps (gaudi3 "
                        "3.67 TB/s [S4])"));
    const auto cycles = [&](const char* key, int& value, const char* doc, const char* source) {
      v.field(key, value, core::Spec(doc).range(0, 1 << 20).source(source));
    };
    cycles("rl", rl, "RL: RD command to first data (CL)", "[H2] CL 14 ns");
    cycles("wl", wl, "WL: WR command to first data (CWL)", "[H2] CWL 4 ns");
    cycles("rcd", rcd, "tRCD: ACT to RD/WR", "[H2] tRCDRD = tRCDWR 14 ns");
    cycles("rp", rp, "tRP: PRE to ACT", "[H2] 14 ns");
    cycles("ras", ras, "tRAS: ACT to PRE", "[H2] 34 ns");
    cycles("rc", rc, "tRC: ACT to ACT in one bank", "[H2] tRAS + tRP = 48 ns");
    cycles("ccd_s", ccd_s, "tCCD_S: column commands, different bank groups", "[H2] 1 ns");
    cycles("ccd_l", ccd_l, "tCCD_L: column commands, same bank group", "[H2] 2 ns");
    cycles("rrd_s", rrd_s, "tRRD_S: ACTs, different bank groups", "[H2] 4 ns");
    cycles("rrd_l", rrd_l, "tRRD_L: ACTs, same bank group", "[H2] 6 ns");
    cycles("faw", faw, "tFAW: at most four ACTs in this window", "[H2] 30 ns");
    cycles("wtr_s", wtr_s, "tWTR_S: write data end to RD, different bank group", "[H2] 6 ns");
    cycles("wtr_l", wtr_l, "tWTR_L: write data end to RD, same bank group", "[H2] 8 ns");
    cycles("rtw", rtw, "tRTW: RD to WR",
           "[H2] RL + BL/2 - WL + tRTRS (2) = 14 cycles at 1 GHz (src/timing.cc)");
    cycles("rtp", rtp, "tRTP: RD to PRE", "[H2] tRTP 5 ns (the simulator's default)");
    cycles("wr", wr, "tWR: write data end to PRE", "[H2] 16 ns");
    cycles("refi", refi, "tREFI: one all-bank refresh per interval", "[H2] 3.9 us");
    cycles("rfc", rfc, "tRFC: refresh blocks the pseudo-channel",
           "[H2] 260 ns (8 Gb, HBM2); [H3] 350 ns (HBM2E)");
  }
  void check(core::ConfigChecks& c) const;
};

// Where an address lands. The address (an offset into the HBM) is cut, from the low end, into the
// byte within a burst and then the fields named in `layout`, lowest first. Each field takes its
// count's worth of the remaining value (a modulo, so six stacks work as well as eight). The field
// "column" may appear twice: its low part then holds as many bursts as `interleave` leaves after
// the other fields below the first channel-type field (pseudo_channel, channel, stack).
struct AddressMapConfig {
  std::string layout = "bank_group,column,pseudo_channel,channel,stack,column,bank,row";
  core::ByteSize interleave{256};  // bytes kept on one pseudo-channel before the next

  template <class V>
  void describe(V& v) {
    v.field("layout", layout,
            core::Spec("address fields from the lowest bits up, comma separated: bank_group, bank, "
                       "column (up to twice), pseudo_channel, channel, stack, row")
                .source("[D] bank groups in the lowest bits so a stream alternates them (tCCD_S), "
                        "pseudo-channels next so bulk transfers spread over all of them, then the "
                        "rest of the row and the bank above it, so a stream fills one bank's rows "
                        "(4 ACTs per row switch) while the next bank opens, and tFAW never meets "
                        "16 ACTs at once; row on top (open-page friendly); [H2] maps "
                        "row-bank-group-bank-channel-column"));
    v.field("interleave", interleave,
            core::Spec("bytes kept on one pseudo-channel before moving to the next")
                .positive()
                .source("[D] 256 B: a full bank-group rotation of two bursts each"));
  }
};

struct ControllerConfig {
  int read_queue = 32;
  int write_queue = 32;
  int write_high_watermark = 24;  // start draining writes at this many queued
  int write_low_watermark = 8;    // stop draining when this few remain and reads wait
  int frontend_cycles = 15;       // request accepted to visible to the scheduler, and back

  template <class V>
  void describe(V& v) {
    v.field("read_queue", read_queue,
            core::Spec("read queue entries per pseudo-channel")
                .range(1, 4096)
                .source("[H2] trans_queue_size 32"));
    v.field("write_queue", write_queue,
            core::Spec("write queue entries per pseudo-channel")
                .range(1, 4096)
                .source("[H2] trans_queue_size 32"));
    v.field("write_high_watermark", write_high_watermark,
            core::Spec("queued writes that start a write drain (reads wait)")
                .range(1, 4096)
                .source("[U] 3/4 of the write queue; [H2] drains when full"));
    v.field("write_low_watermark", write_low_watermark,
            core::Spec("a drain stops when this few writes remain and reads are queued")
                .range(0, 4096)
                .source("[U] 1/4 of the write queue; [H2] drains until empty"));
    v.field("frontend_cycles", frontend_cycles,
            core::Spec("controller and PHY latency added to each request (in tCK)")
                .range(0, 1 << 16)
                .source("[D] 9 ns, calibrated: unloaded row-hit latency 25 ns at 1 GHz = 9 + RL "
                        "14 + BL/2 2 (docs/hbm.md); 15 cycles of 625 ps"));
  }
};

// How a transaction's time is found: every burst by the banks' rules (kBanks), or at the
// stream rates the banks' rules give for this configuration, measured once (kRate: what large
// systems use, where HBM is never the bottleneck and a burst-level schedule of every byte would
// dominate the run).
enum class HbmModel { kBanks, kRate };

struct HbmConfig {
  HbmGeometry geometry;
  HbmTiming timing;
  AddressMapConfig address_map;
  ControllerConfig controller;
  HbmModel model = HbmModel::kBanks;

  std::uint64_t capacity() const { return geometry.capacity(); }
  // Peak data rate of all pseudo-channels: every data-bus cycle busy.
  core::Bandwidth peak_bandwidth() const;

  template <class V>
  void describe(V& v) {
    v.section("geometry", geometry, core::Spec("stacks, channels, banks, rows"));
    v.section("timing", timing, core::Spec("DRAM timing in clock cycles"));
    v.section("address_map", address_map, core::Spec("address to stack, channel, bank, row"));
    v.section("controller", controller, core::Spec("per pseudo-channel FR-FCFS controller"));
    v.choice("model", model, model_choices(),
             core::Spec("banks: every burst timed by the banks' rules; rate: the stream rates "
                        "and unloaded latency those rules give, measured once (docs/hbm.md)")
                 .source("[D] rate for systems of many chips, where the burst schedule costs "
                         "more CPU than the rest of the chip"));
  }
  void check(core::ConfigChecks& c) const;
  static core::Choices<HbmModel> model_choices() {
    return {{"banks", HbmModel::kBanks}, {"rate", HbmModel::kRate}};
  }
};

// DRAM timing in nanoseconds, converted to cycles of a clock by `timing_at`.
struct TimingNs {
  double rl, wl, rcd, rp, ras, ccd_s, ccd_l, rrd_s, rrd_l, faw, wtr_s, wtr_l, rtp, wr, refi, rfc;
};
// DRAMsim3's HBM2 values ([H2] configs/HBM2_8Gb_x128.ini, 1 GHz).
TimingNs hbm2_timing_ns();
// The same with tRFC of the denser HBM2E dies ([H3]).
TimingNs hbm2e_timing_ns();
// Each value rounded up to whole cycles of `tck`; tRC = tRAS + tRP, tRTW = RL + BL/2 - WL + 2.
HbmTiming timing_at(const TimingNs& ns, core::Duration tck, int burst_length);

// The HBM of a chip described by its published summary: `generation` (HBM2 or HBM2E) picks the
// timing in nanoseconds, the clock follows from the peak bandwidth over 1024 pins per stack, the
// rows from the capacity. Throws std::invalid_argument naming what does not fit.
HbmConfig for_part(std::string_view generation, int stacks, std::uint64_t capacity,
                   core::Bandwidth peak);

// Gaudi1: HBM2, 4 stacks of 8 GiB at 2 Gb/s per pin (1.024 TB/s).
HbmConfig hbm2();
// Gaudi2: HBM2E, 6 stacks of 16 GiB at 3.2 Gb/s per pin (2.458 TB/s). The struct defaults.
HbmConfig hbm2e();
// Gaudi3: HBM2E, 8 stacks of 16 GiB at 3.6 Gb/s per pin (3.68 TB/s).
HbmConfig hbm2e_gaudi3();
// "gaudi1", "gaudi2" or "gaudi3"; std::invalid_argument naming the chip otherwise.
HbmConfig preset_for_chip(std::string_view chip);

}  // namespace podsim::hbm
