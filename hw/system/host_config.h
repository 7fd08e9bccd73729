// The description of a box's host: sockets, the PCIe switch under each, the links, host memory,
// the CPU side, and where the chips' BAR windows go in host physical memory (host_side.h wires
// it).
#pragma once

#include "hw/core/config_binding.h"
#include "hw/core/units.h"
#include "hw/host/host_cpu.h"
#include "hw/host/host_memory.h"
#include "hw/host/root_complex.h"
#include "hw/pcie/pcie_config.h"
#include "hw/pcie/pcie_switch.h"

namespace podsim::system {

struct HostConfig {
  int sockets = 2;
  host::HostMemoryConfig memory;
  host::HostCpuConfig cpu;
  host::RootComplexConfig root;
  pcie::PcieSwitchConfig pcie_switch;
  pcie::PcieLinkConfig uplink;
  core::Address bar_windows{0x4000000000};

  template <class V>
  void describe(V& v) {
    v.field("sockets", sockets,
            core::Spec("CPU sockets, one root port and one PCIe switch each; the box's chips "
                       "split evenly behind them (a box of fewer chips uses one per chip)")
                .range(1, 16)
                .source("[S9]: dual Xeon, two PCIe Gen4 switches"));
    v.section("memory", memory, core::Spec("host memory"));
    v.section("cpu", cpu, core::Spec("the CPU side the driver runs on"));
    v.section("root", root, core::Spec("the root complex (its root_ports follow sockets)"));
    v.section("pcie_switch", pcie_switch,
              core::Spec("each socket's switch (its downstream_ports follow the chips)"));
    v.section("uplink", uplink, core::Spec("root port to switch links"));
    v.field("bar_windows", bar_windows,
            core::Spec("host physical address where the chips' BAR windows start, one window per "
                       "chip of the size of its BARs")
                .source("placeholder [U]: above a 256 GiB memory map"));
  }
};

}  // namespace podsim::system
