// A box's host as HLS boxes wire it: a two-socket server whose root complex has one root port per
// socket, a PCIe switch under each root port, and the box's chips split evenly behind the
// switches; host memory that the chips' engines reach through their host window, and the CPU
// side the driver will run on.
// Captures: every chip's PCIe link (its chip preset's link), the uplink of each switch, bus
// numbers (chip i of the box on bus i + 1) and the host address window each chip's BARs are to be
// placed in (assigned by whoever enumerates, as firmware or a driver does), routed through root
// ports and switches. Ignores: NUMA between the sockets (one memory and one CPU model serve
// both), the host's own NICs, and BAR placement by firmware (BARs start unprogrammed).
#pragma once

#include <cstdint>
#include <memory>
#include <systemc>
#include <vector>

#include "hw/chip/chip.h"
#include "hw/host/host_cpu.h"
#include "hw/host/host_memory.h"
#include "hw/host/root_complex.h"
#include "hw/pcie/pcie_link.h"
#include "hw/pcie/pcie_switch.h"
#include "hw/system/host_config.h"

namespace podsim::system {

class HostSide : public sc_core::sc_module {
 public:
  // Wires `chips` (the box's, in order) behind the host. Throws std::invalid_argument when the
  // chips do not split evenly over the sockets.
  HostSide(sc_core::sc_module_name name, const HostConfig& config, std::vector<chip::Chip*> chips,
           bool functional);

  host::HostCpu& cpu() { return *cpu_; }
  host::HostMemory& memory() { return *memory_; }
  host::RootComplex& root() { return *root_; }
  // The PCI bus of the box's chip `local`, and the host window its BARs are to be placed in.
  int bus(int local) const { return local + 1; }
  std::uint64_t window_base(int local) const;
  std::uint64_t window_size() const { return window_; }

 private:
  void wire_socket(int socket, const std::vector<chip::Chip*>& chips, int first, int count);

  HostConfig config_;
  std::uint64_t window_ = 0;  // bytes of host address space per chip
  std::unique_ptr<host::HostMemory> memory_;
  std::unique_ptr<host::RootComplex> root_;
  std::unique_ptr<host::HostCpu> cpu_;
  std::vector<std::unique_ptr<pcie::PcieSwitch>> switches_;
  std::vector<std::unique_ptr<pcie::PcieLink>> links_;
};

}  // namespace podsim::system
