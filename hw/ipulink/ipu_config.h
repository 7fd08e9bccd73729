// The description of one Graphcore-style IPU and of the machine that carries four of them.
// Captures: the published figures of the GC200 (Mk2) IPU and the IPU-M2000 [S14], [S15]: tiles
// and their In-Processor-Memory, the tiles' memory bandwidth, the IPU-Exchange, the FP16.16
// peak, the IPU-Links and the host link; the machine's front-panel ports and Streaming Memory.
// Placeholders [U] for what no source pins down (sync and exchange latencies, the Streaming
// Memory's rate, the Bow IPU's rates), each with the reasoning behind it in docs/ipulink.md.
// Ignores: the tile's instruction set, its six threads, clocks and power; the exchange's
// tile-to-tile schedule (the compiler's); anything of the Gateway but its GW-Links.
#pragma once

#include <cstdint>

#include "core/config_binding.h"
#include "core/units.h"

namespace podsim::ipulink {

struct IpuConfig {
  int tiles = 1472;
  core::ByteSize memory_per_tile{624 << 10};
  core::Bandwidth memory_bandwidth{47.5e12 * 8};
  core::Bandwidth exchange_bandwidth{8e12 * 8};
  core::ComputeRate peak_fp16{250e12};
  int ipu_links = 10;
  core::Bandwidth ipu_link_rate{32e9 * 8};
  core::Bandwidth host_link_rate{64e9 * 8};
  core::Bandwidth streaming_memory_bandwidth{20e9 * 8};
  core::Duration exchange_latency{50000};
  core::Duration sync_latency{200000};
  core::Duration sync_link_latency{1000000};

  // In-Processor-Memory of the whole chip: every tile's memory, which only that tile addresses.
  std::uint64_t memory_bytes() const {
    return static_cast<std::uint64_t>(tiles) * memory_per_tile.bytes;
  }
  // Datasheets count a link's rate in both directions together, as PCIe's 64 GB/s for Gen4 x16
  // does; a transfer one way gets half.
  core::Bandwidth ipu_link_rate_each_way() const {
    return core::Bandwidth{ipu_link_rate.bits_per_second / 2};
  }
  core::Bandwidth ipu_link_total() const {
    return core::Bandwidth{ipu_link_rate.bits_per_second * ipu_links};
  }

  template <class V>
  void describe(V& v) {
    v.field("tiles", tiles,
            core::Spec("tiles: one core with its own memory each")
                .range(1, 1 << 16)
                .source("[S14], [S15] GC200: 1472"));
    v.field("memory_per_tile", memory_per_tile,
            core::Spec("In-Processor-Memory (SRAM) of one tile; tiles x this is the chip's")
                .positive()
                .source("[S14], [S15] 624 KiB; x 1472 = 897 MiB, the datasheets' 900 MB"));
    v.field("memory_bandwidth", memory_bandwidth,
            core::Spec("all tiles reading and writing their own memory at once")
                .positive()
                .source("[S14] 47.5 TB/s"));
    v.field("exchange_bandwidth", exchange_bandwidth,
            core::Spec("IPU-Exchange: tiles sending to each other, all to all, in an exchange "
                       "phase")
                .positive()
                .source("[S14] 8 TB/s"));
    v.field("peak_fp16", peak_fp16,
            core::Spec("peak FP16.16 (half-precision products, half-precision sums) throughput")
                .positive()
                .source("[S14], [S15] 250 TFLOPS"));
    v.field(
        "ipu_links", ipu_links,
        core::Spec("IPU-Link ports of the chip, to other IPUs").range(0, 64).source("[S14] 10"));
    v.field("ipu_link_rate", ipu_link_rate,
            core::Spec("one IPU-Link, both directions counted together (half each way)")
                .positive()
                .source("[D] 320 GB/s over 10 links [S14]; both directions counted [U], as "
                        "the PCIe figure beside it"));
    v.field("host_link_rate", host_link_rate,
            core::Spec("the chip's PCIe link, both directions counted together")
                .positive()
                .source("[S14] PCIe Gen4 x16, 64 GB/s"));
    v.field("streaming_memory_bandwidth", streaming_memory_bandwidth,
            core::Spec("one IPU reading or writing Streaming Memory (the machine's DDR)")
                .positive()
                .source("placeholder [U]: DDR shared by the machine's four IPUs, below the "
                        "host link's rate; docs/ipulink.md"));
    v.field("exchange_latency", exchange_latency,
            core::Spec("start of an exchange phase to the first data landing across the chip")
                .min(0)
                .source("placeholder [U]: tens of cycles of a ~1.3 GHz tile clock across the "
                        "die"));
    v.field("sync_latency", sync_latency,
            core::Spec("one BSP sync of every tile of the chip (the end of a superstep)")
                .min(0)
                .source("placeholder [U]: a hardware sync tree over 1472 tiles, a few hundred "
                        "cycles; docs/ipulink.md"));
    v.field("sync_link_latency", sync_link_latency,
            core::Spec("one BSP sync spanning several IPUs over the Sync-Links")
                .min(0)
                .source("placeholder [U]: the chip's sync plus signalling over rack-length "
                        "cables; docs/ipulink.md"));
  }

  void check(core::ConfigChecks& c) const;
};

// GC200, the Mk2 IPU of the IPU-M2000: the struct defaults.
IpuConfig gc200();
// The Bow IPU: the GC200's tiles at a faster clock. Its peak and the rates that follow the clock
// are assumptions [U] (docs/ipulink.md).
IpuConfig bow_ipu();

// The 1U machine of four IPUs that pods are built from.
struct MachineConfig {
  int ipus = 4;
  int ipu_link_ports = 8;
  int gw_link_ports = 2;
  core::Bandwidth gw_link_rate{100e9};
  int sync_link_ports = 8;
  int host_links = 2;
  core::Bandwidth host_link_rate{100e9};
  core::ByteSize streaming_memory{450000000000ull};

  template <class V>
  void describe(V& v) {
    v.field("ipus", ipus,
            core::Spec("IPUs in one machine").range(1, 64).source("[S14] IPU-M2000: 4 GC200"));
    v.field("ipu_link_ports", ipu_link_ports,
            core::Spec("front-panel IPU-Link ports, to the machines above and below")
                .range(0, 256)
                .source("[S14] 8"));
    v.field("gw_link_ports", gw_link_ports,
            core::Spec("GW-Link ports, joining pods").range(0, 64).source("[S14] 2"));
    v.field("gw_link_rate", gw_link_rate,
            core::Spec("one GW-Link port").positive().source("[S14] 100 Gb/s"));
    v.field("sync_link_ports", sync_link_ports,
            core::Spec("front-panel Sync-Link ports, carrying BSP syncs between machines")
                .range(0, 256)
                .source("[S14] 8"));
    v.field("host_links", host_links,
            core::Spec("RoCE v2 links to the host servers").range(0, 64).source("[S14] 2"));
    v.field("host_link_rate", host_link_rate,
            core::Spec("one host link").positive().source("[S14] 100GbE"));
    v.field("streaming_memory", streaming_memory,
            core::Spec("the machine's Streaming Memory (DDR) at its largest")
                .min(0)
                .source("[S14] up to ~450 GB (IPU-M2000); 256 GB (Bow-2000)"));
  }

  void check(core::ConfigChecks& c) const;
};

// The IPU-M2000.
MachineConfig m2000();
// The Bow-2000: 256 GB of Streaming Memory [S14]; its ports taken as the IPU-M2000's [U].
MachineConfig bow2000();

}  // namespace podsim::ipulink
