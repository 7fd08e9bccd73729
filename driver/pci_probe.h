// What the driver's probe does with a PCI function through configuration space, as the Linux
// PCI core and the habanalabs driver do it together: read the ids and check the device is one
// the driver knows, size every memory BAR by writing all ones and reading back, place the BARs
// in the host window the bridge above forwards (largest first, each aligned to its size), find
// the MSI-X capability by walking the capability list, then enable memory decoding and bus
// mastering. Every access is a configuration request through the host's root complex.
// Captures: 32- and 64-bit memory BARs, the capability list, MSI-X table size and location.
// Ignores: I/O BARs, expansion ROMs, resizable BARs, SR-IOV, hot plug and power management.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "driver/queue_map.h"
#include "hw/host/host_cpu.h"

namespace podsim::driver {

struct PciBar {
  int index = 0;  // BAR number; a 64-bit BAR also takes the next
  std::uint64_t size = 0;
  std::uint64_t address = 0;  // where the probe placed it
  bool is_64bit = false;
  bool prefetchable = false;
};

struct PciFunction {
  int bus = 0;
  std::uint16_t vendor_id = 0, device_id = 0;
  std::uint8_t revision = 0;
  std::uint32_t class_code = 0;  // base class, subclass, programming interface
  std::vector<PciBar> bars;      // in BAR order
  int msix_vectors = 0;          // 0: no MSI-X capability
  int msix_table_bar = 0;
  std::uint32_t msix_table_offset = 0;

  // The BAR with this number; throws std::out_of_range when the function has none.
  const PciBar& bar(int index) const;
};

struct ProbeWindow {
  std::uint64_t base = 0, size = 0;  // host addresses the BARs must fall in
};

// Probes the function on `bus` from a HostCpu program's thread. Throws std::runtime_error naming
// the bus and the problem: no device, a vendor or device the driver does not bind to, a BAR the
// window cannot hold, a configuration request that fails.
PciFunction probe(host::HostCpu& cpu, int bus, const ProbeWindow& window);

}  // namespace podsim::driver
