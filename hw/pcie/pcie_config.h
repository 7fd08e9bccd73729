// Configuration of one PCIe link: generation, width, the negotiated sizes (max payload, max read
// request, read completion boundary), header and CRC options, data-link-layer traffic, flow
// control credits, read tags and latency.
// Captures: every number the overhead arithmetic (pcie_timing.h) and the link module use, each
// with its source (docs/sources.md, "Memory and host interface"). Ignores: link training, lane
// reversal and degraded widths, power states, and Gen6 FLIT mode.
#pragma once

#include <cstdint>

#include "core/config_binding.h"
#include "core/units.h"

namespace podsim::pcie {

enum class Generation : std::uint8_t { kGen1 = 1, kGen2, kGen3, kGen4, kGen5 };

struct PcieLinkConfig {
  Generation generation = Generation::kGen4;
  int lanes = 16;
  int max_payload = 256;       // bytes per write or completion TLP (MPS)
  int max_read_request = 512;  // bytes per read request TLP (MRRS)
  int read_completion_boundary = 64;
  bool completions_at_rcb = false;  // completer splits every read at each RCB
  bool address_64bit = true;        // 4DW memory request headers
  bool ecrc = false;
  int tlp_granularity = 64;  // bytes of link time a TLP is rounded up to
  int tlps_per_ack = 4;
  int tlps_per_fc_update = 4;
  int posted_header_credits = 127;
  int posted_data_credits = 2047;  // 16-byte units
  int read_tags = 256;
  core::Duration latency{150000};            // one way, 150 ns
  core::Duration fc_update_latency{100000};  // receiver frees a buffer to its UpdateFC sent

  template <class V>
  void describe(V& v) {
    v.choice("generation", generation,
             core::Choices<Generation>{{"gen1", Generation::kGen1},
                                       {"gen2", Generation::kGen2},
                                       {"gen3", Generation::kGen3},
                                       {"gen4", Generation::kGen4},
                                       {"gen5", Generation::kGen5}},
             core::Spec("signalling rate and encoding: 2.5, 5 GT/s 8b/10b; 8, 16, 32 GT/s "
                        "128b/130b")
                 .source("[P1]; Gaudi and Gaudi2 are Gen4 x16, Gaudi3 Gen5 x16 [S4]"));
    v.field("lanes", lanes,
            core::Spec("link width: 1, 2, 4, 8, 16 or 32").range(1, 32).source("[P1]; x16 [S4]"));
    v.field("max_payload", max_payload,
            core::Spec("max payload size (MPS): 128, 256, 512, 1024, 2048 or 4096 bytes")
                .range(128, 4096)
                .source("[P1] Device Control; 256 B is what server root ports grant [P3]"));
    v.field("max_read_request", max_read_request,
            core::Spec("max read request size (MRRS): 128 to 4096 bytes, a power of two")
                .range(128, 4096)
                .source("[P1] Device Control; 512 B is the Linux default setting [P3]"));
    v.field("read_completion_boundary", read_completion_boundary,
            core::Spec("RCB: completions of one read may split only at multiples of it (64 or "
                       "128)")
                .range(64, 128)
                .source("[P1] Link Control: 64 B root ports, 64 or 128 B others"));
    v.field("completions_at_rcb", completions_at_rcb,
            core::Spec("the completer returns one completion per RCB instead of up to MPS each")
                .source("[P1] allows both; [P3] models both (rcb_chunks); off: combining"));
    v.field("address_64bit", address_64bit,
            core::Spec("memory requests carry 64-bit addresses (4DW header, else 3DW)")
                .source("[P1]; host memory and 64-bit BARs lie above 4 GiB"));
    v.field("ecrc", ecrc,
            core::Spec("TLPs carry the optional 4-byte end-to-end CRC (TLP digest)")
                .source("[P1]; off unless AER enables it [P2]"));
    v.field("tlp_granularity", tlp_granularity,
            core::Spec("bytes of link time each TLP is rounded up to: the transaction-layer "
                       "datapath width of the controllers at each end; 4 = DW only")
                .range(4, 256)
                .source("[P2]: a TLP takes whole interface cycles; 64 B = a 512-bit Gen4/Gen5 "
                        "x16 controller interface [U]"));
    v.field("tlps_per_ack", tlps_per_ack,
            core::Spec("TLPs acknowledged per ACK DLLP (coalescing)")
                .range(1, 1024)
                .source("[P1] ACK latency limit (Gen4 x16, 256 B MPS: 168 symbol times, about 9 "
                        "TLPs) [P3]; 4 [U]"));
    v.field("tlps_per_fc_update", tlps_per_fc_update,
            core::Spec("TLPs per UpdateFC DLLP returning their credits")
                .range(1, 1024)
                .source("[P1] UpdateFC latency guideline, same order as the ACK limit [P3]; 4 "
                        "[U]"));
    v.field("posted_header_credits", posted_header_credits,
            core::Spec("posted header credits the receiver advertises (one per write TLP); 0 = "
                       "infinite")
                .range(0, 4095)
                .source("[P1]: 127 is the most a non-scaled header field may grant"));
    v.field("posted_data_credits", posted_data_credits,
            core::Spec("posted data credits (16 bytes each) the receiver advertises; 0 = "
                       "infinite")
                .range(0, 65535)
                .source("[P1]: 2047 is the most a non-scaled data field may grant"));
    v.field("read_tags", read_tags,
            core::Spec("outstanding non-posted reads a requester may have (tags)")
                .range(1, 1024)
                .source("[P1]: 32 (5-bit), 256 (8-bit extended tags), 768 (10-bit, Gen4); 256"));
    v.field("latency", latency,
            core::Spec("one-way latency of the link: both ends' PHY, data-link and transaction "
                       "pipelines plus flight time")
                .min(0)
                .source("[P3]: a 64 B read to host memory takes 400-500 ns round trip on Xeon "
                        "hosts; 150 ns each way + host memory [U]"));
    v.field("fc_update_latency", fc_update_latency,
            core::Spec("from a receiver taking a TLP to its credit returning in an UpdateFC")
                .min(0)
                .source("[P1] UpdateFC latency guideline order [P3]; 100 ns [U]"));
  }
  // Cross-key rules: lane count and sizes must be values the specification allows.
  void check(core::ConfigChecks& c) const;
};

// Gaudi and Gaudi2 host interface (Gen4 x16) and Gaudi3's (Gen5 x16) [S4].
PcieLinkConfig gen4_x16();
PcieLinkConfig gen5_x16();

}  // namespace podsim::pcie
