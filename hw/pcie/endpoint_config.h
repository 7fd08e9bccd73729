// The chip's PCIe function as the host sees it: identity, BARs, where each BAR's bytes land in
// the chip's address space, and the MSI-X table.
// Captures: Habana's vendor and device ids, the Gaudi and Gaudi2 BAR layouts of the Linux driver
// and hl-thunk headers, and the inbound windows that translate BAR offsets to chip addresses.
// Ignores: the PCI Express capability's registers (the link's sizes live in PcieLinkConfig),
// expansion ROM, SR-IOV and power management.
#pragma once

#include <cstdint>
#include <vector>

#include "core/config_binding.h"
#include "core/units.h"

namespace podsim::pcie {

struct BarConfig {
  int index = 0;
  core::ByteSize size{64 << 20};
  bool is_64bit = true;
  bool prefetchable = false;

  template <class V>
  void describe(V& v) {
    v.field(
        "index", index,
        core::Spec("BAR number 0-5; a 64-bit BAR also takes the next").range(0, 5).source("[P1]"));
    v.field("size", size,
            core::Spec("bytes decoded, a power of two of at least 16").min(16).source("[P1]"));
    v.field("is_64bit", is_64bit, core::Spec("64-bit memory BAR").source("[P1]"));
    v.field("prefetchable", prefetchable, core::Spec("prefetchable memory").source("[P1]"));
  }
};

// Bytes [offset, offset + size) of a BAR go to chip address chip_address + (offset - offset).
struct BarWindow {
  int bar = 0;
  std::uint64_t offset = 0;
  core::ByteSize size{64 << 20};
  core::Address chip_address{0};

  template <class V>
  void describe(V& v) {
    v.field("bar", bar, core::Spec("BAR the window lies in").range(0, 5).source("[C7]"));
    v.field("offset", offset, core::Spec("start of the window within the BAR").source("[C7]"));
    v.field("size", size, core::Spec("bytes of the window").positive().source("[C7]"));
    v.field("chip_address", chip_address,
            core::Spec("chip address of the window's first byte").source("[C2], [C3]"));
  }
};

struct MsixConfig {
  int vectors = 32;
  int table_bar = 2;
  std::uint64_t table_offset = 0;
  int pba_bar = 2;
  std::uint64_t pba_offset = 0;

  template <class V>
  void describe(V& v) {
    v.field("vectors", vectors,
            core::Spec("MSI-X table entries").range(1, 2048).source("[C2] 32, [C3] 512"));
    v.field("table_bar", table_bar, core::Spec("BAR holding the table").range(0, 5).source("[C3]"));
    v.field("table_offset", table_offset,
            core::Spec("offset of the table in its BAR, 8-byte aligned").source("[C3]"));
    v.field("pba_bar", pba_bar,
            core::Spec("BAR holding the pending bit array").range(0, 5).source("[C3]"));
    v.field(
        "pba_offset", pba_offset,
        core::Spec("offset of the pending bit array in its BAR, 8-byte aligned").source("[C3]"));
  }
};

struct PcieEndpointConfig {
  int vendor_id = 0x1da3;
  int device_id = 0x1000;
  int class_code = 0x120000;
  int revision = 0;
  std::vector<BarConfig> bars = gaudi1_bars();
  std::vector<BarWindow> windows = gaudi1_windows();
  MsixConfig msix = gaudi1_msix();

  template <class V>
  void describe(V& v) {
    v.field("vendor_id", vendor_id,
            core::Spec("PCI vendor id: Habana Labs 0x1da3").range(0, 0xffff).source("[C1], [C7]"));
    v.field("device_id", device_id,
            core::Spec("PCI device id: 0x1000 Gaudi, 0x1020 Gaudi2")
                .range(0, 0xffff)
                .source("[C7], [C8]"));
    v.field("class_code", class_code,
            core::Spec("class, subclass and programming interface: 0x120000 processing "
                       "accelerator")
                .range(0, 0xffffff)
                .source("[P4] class 12h [U] for Gaudi"));
    v.field("revision", revision, core::Spec("revision id").range(0, 255).source("[U]"));
    v.list("bars", bars, core::Spec("memory BARs").source("[C2], [C3], [C7]"));
    v.list("windows", windows,
           core::Spec("inbound windows translating BAR offsets to chip addresses")
               .source("[C7] iATU inbound regions"));
    v.section("msix", msix, core::Spec("MSI-X capability"));
  }
  // Cross-key rules: BARs that exist and do not overlap, windows and the MSI-X table inside them.
  void check(core::ConfigChecks& c) const;

  // Gaudi: BAR0 SRAM (64 MiB at 0x7FF0000000), BAR2 CFG (128 MiB from the SPI flash at
  // 0x7FF8000000, registers at 0x7FFC000000), BAR4 HBM from address 0 [C2, C7]. Gaudi signals
  // with 32 MSI vectors; the model gives it 32 MSI-X vectors in BAR2's unused 32 KiB just below
  // the registers (table at 0x3FF8000, PBA at 0x3FFC000) [U].
  static PcieEndpointConfig gaudi1() { return PcieEndpointConfig{}; }
  // Gaudi2: BAR0 CFG + reserved + SRAM (256 MiB), BAR2 the MSI-X table (16 KiB, 512 vectors),
  // BAR4 DRAM [C3].
  static PcieEndpointConfig gaudi2();

 private:
  static std::vector<BarConfig> gaudi1_bars();
  static std::vector<BarWindow> gaudi1_windows();
  static MsixConfig gaudi1_msix();
};

}  // namespace podsim::pcie
