// The description of one accelerator chip: its engines, memories, host interface and NIC ports.
// Only the NIC is required: a chip with no engines or memory is a network-only host.
// Captures the published figures that later models take their defaults from (presets in
// configs/chips/ cite a source, docs/sources.md, for each). Ignores anything no model consumes yet
// (clocks, power, per-engine timing); those keys arrive with the models that need them.
#pragma once

#include <string>

#include "core/config_binding.h"
#include "core/units.h"
#include "hw/chip/mmu.h"
#include "hw/chip/noc.h"
#include "hw/chip/qman.h"
#include "hw/chip/resources.h"
#include "hw/chip/sync_manager.h"
#include "hw/dma/dma_config.h"
#include "hw/hbm/hbm_config.h"
#include "hw/mme/mme_config.h"
#include "hw/pcie/endpoint_config.h"
#include "hw/pcie/pcie_config.h"
#include "hw/roce/roce_config.h"
#include "hw/tpc/tpc_config.h"

namespace podsim::chip {

struct TpcConfig {
  int cores = 0;
  tpc::TpcCoreConfig core;
  template <class V>
  void describe(V& v) {
    v.field("cores", cores,
            core::Spec("TPC VLIW SIMD cores, each fed by its QMAN (0: none)")
                .source("chip preset (which cites each value)")
                .range(0, kMaxTpcCores));
    v.section("core", core, core::Spec("every TPC core (docs/tpc/core.md)"));
  }
  // Gaudi1's register map places 8 TPCs; podsim places 56 more (docs/chip.md).
  static constexpr int kMaxTpcCores = 64;
};

struct MmeConfig {
  int engines = 0;
  core::ComputeRate peak_bf16{};
  mme::MmeConfig engine;
  template <class V>
  void describe(V& v) {
    v.field("engines", engines,
            core::Spec("MME matrix engines, each fed by its QMAN (0: none)")
                .source("chip preset (which cites each value)")
                .range(0, kMaxEngines));
    v.field("peak_bf16", peak_bf16,
            core::Spec("published peak dense BF16 matrix throughput of the chip (the array, clock "
                       "and engines must give it within 2%)")
                .source("chip preset (which cites each value)")
                .min(0));
    v.section("engine", engine, core::Spec("every MME (docs/mme.md)"));
  }
  void check(core::ConfigChecks& c) const;
  // Gaudi1's register map places 4 MMEs; podsim places 60 more (docs/chip.md).
  static constexpr int kMaxEngines = 64;
};

struct SramConfig {
  core::ByteSize size{};
  core::Bandwidth bandwidth{};
  core::Duration latency{};
  template <class V>
  void describe(V& v) {
    v.field("size", size,
            core::Spec("on-die SRAM capacity (0: none)")
                .source("chip preset (which cites each value)")
                .min(0));
    v.field("bandwidth", bandwidth,
            core::Spec("SRAM bandwidth shared by every engine")
                .source("chip preset (which cites each value)")
                .min(0));
    v.field(
        "latency", latency,
        core::Spec("SRAM access latency").source("chip preset (which cites each value)").min(0));
  }
  void check(core::ConfigChecks& c) const {
    if (size.bytes > 0 && !(bandwidth.bits_per_second > 0)) {
      c.fail("bandwidth", "an SRAM needs a bandwidth");
    }
  }
};

struct HbmConfig {
  std::string generation = "HBM2E";
  int stacks = 0;
  core::ByteSize capacity{};
  core::Bandwidth bandwidth{};
  hbm::HbmModel model = hbm::HbmModel::kBanks;
  template <class V>
  void describe(V& v) {
    v.field("generation", generation,
            core::Spec("HBM generation: HBM2 or HBM2E (picks the DRAM timing, docs/hbm.md)")
                .source("chip preset (which cites each value)"));
    v.field("stacks", stacks,
            core::Spec("HBM stacks (0: no HBM)")
                .source("chip preset (which cites each value)")
                .range(0, 32));
    v.field("capacity", capacity,
            core::Spec("total HBM capacity (sets the rows per bank)")
                .source("chip preset (which cites each value)")
                .min(0));
    v.field("bandwidth", bandwidth,
            core::Spec("total peak HBM bandwidth of all stacks (sets the clock: 1024 pins per "
                       "stack, two beats per clock)")
                .source("chip preset (which cites each value)")
                .min(0));
    v.choice("model", model, hbm::HbmConfig::model_choices(),
             core::Spec("banks: every burst timed by the banks' rules; rate: the stream rate and "
                        "latency those rules give, measured once (docs/hbm.md)")
                 .source("[D] banks; rate where many chips make the burst schedule the cost"));
  }
  void check(core::ConfigChecks& c) const;
  // The detailed HBM these figures describe; only when bandwidth is set.
  hbm::HbmConfig detailed() const;
};

// The host interface: the link to the host (its rates come from the overhead model) and the
// function the host enumerates.
struct PcieConfig {
  pcie::PcieLinkConfig link;
  pcie::PcieEndpointConfig endpoint;
  template <class V>
  void describe(V& v) {
    v.section("link", link, core::Spec("the chip's link to the host (docs/pcie.md)"));
    v.section("endpoint", endpoint, core::Spec("ids, BARs, windows and MSI-X the host sees"));
  }
};

// Bytes per second one direction of the host link carries for large DMA (the overhead model).
core::Bandwidth pcie_dma_bandwidth(const PcieConfig& pcie);

struct NicConfig {
  int ports = 0;
  core::Bandwidth port_speed{};
  roce::RoceConfig roce;
  template <class V>
  void describe(V& v) {
    v.field("ports", ports,
            core::Spec("on-chip RoCE v2 Ethernet ports")
                .required()
                .source("chip preset (which cites each value)")
                .range(1, 256));
    v.field("port_speed", port_speed,
            core::Spec("line rate of one port")
                .required()
                .source("chip preset (which cites each value)")
                .positive());
    v.section("roce", roce, core::Spec("RoCE v2 transport: MTU, ACKs, retransmission, DCQCN"));
  }
};

struct DmaConfig {
  int engines = 0;
  dma::DmaConfig engine;
  template <class V>
  void describe(V& v) {
    v.field("engines", engines,
            core::Spec("DMA engines, each fed by its QMAN (the Gaudi1 register map has 8)")
                .source("chip preset (which cites each value)")
                .range(0, 64));
    v.section("engine", engine, core::Spec("every DMA engine's rate, bursts and requests"));
  }
};

// Where the chip's blocks sit in its physical address space (the NoC routes by it).
struct AddressMapConfig {
  core::Address hbm{0};
  core::Address sram{0x7FF0000000};
  core::Address host{0x8000000000};

  template <class V>
  void describe(V& v) {
    v.field("hbm", hbm,
            core::Spec("base of HBM (of host memory, for a chip without HBM)")
                .source("[C2] gaudi.h: DRAM at physical address 0"));
    v.field("sram", sram, core::Spec("base of the SRAM").source("[C2] gaudi.h: SRAM_BASE_ADDR"));
    v.field("host", host,
            core::Spec("base of the window through which engines reach host memory over PCIe")
                .source("[C2] gaudi.h: HOST_PHYS_BASE"));
  }
};

struct ChipConfig {
  std::string name;
  std::string description;
  TpcConfig tpc;
  MmeConfig mme;
  SramConfig sram;
  HbmConfig hbm;
  PcieConfig pcie;
  NicConfig nic;
  DmaConfig dma;
  AddressMapConfig address_map;
  NocConfig noc;
  MmuConfig mmu;
  QmanConfig qman;
  SyncManagerConfig sync_manager;
  ResourcesConfig resources;
  core::Bandwidth memory_bandwidth{};

  template <class V>
  void describe(V& v) {
    v.field("name", name, core::Spec("chip model name").required());
    v.field("description", description, core::Spec("one line about the chip"));
    v.section("tpc", tpc, core::Spec("tensor processor cores"));
    v.section("mme", mme, core::Spec("matrix engine"));
    v.section("sram", sram, core::Spec("on-die SRAM"));
    v.section("hbm", hbm, core::Spec("high-bandwidth memory"));
    v.field("memory_bandwidth", memory_bandwidth,
            core::Spec("a chip without HBM: its memory's bandwidth (0: its PCIe link's DMA rate, "
                       "as a NIC whose buffers are in host memory)")
                .min(0)
                .source("chip preset (which cites each value)"));
    v.section("pcie", pcie, core::Spec("host interface"));
    v.section("nic", nic, core::Spec("on-chip RoCE v2 NIC"));
    v.section("dma", dma, core::Spec("DMA engines"));
    v.section("address_map", address_map, core::Spec("where the blocks sit in the address space"));
    v.section("noc", noc, core::Spec("the interconnect joining engines and blocks (docs/chip.md)"));
    v.section("mmu", mmu,
              core::Spec("the device MMU: host memory by virtual address (docs/chip.md)"));
    v.section("qman", qman,
              core::Spec("every queue manager (engine_base is set per engine by the chip)"));
    v.section("sync_manager", sync_manager, core::Spec("every sync manager"));
    v.section("resources", resources,
              core::Spec("what software takes of the chip: the driver's, the runtime's and the "
                         "collectives' shares (docs/chip.md)"));
  }
};

}  // namespace podsim::chip
