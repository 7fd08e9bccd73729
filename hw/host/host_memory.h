// The host's DRAM as the PCIe root complex reaches it: sparse, functional, one bandwidth shared
// by every device and a fixed latency; core::MemoryTarget does the work.
// Captures: what MemoryTarget captures (bandwidth sharing, latency, timing-only mode) at host
// physical addresses 0 to size. Ignores: NUMA (both sockets' memory is one target), caches and
// DDIO, the IOMMU, and memory holes below 4 GiB.
#pragma once

#include "core/config_binding.h"
#include "core/memory_target.h"
#include "core/units.h"

namespace podsim::host {

struct HostMemoryConfig {
  core::ByteSize size{512ull << 30};
  core::Bandwidth bandwidth{204.8e9 * 8};
  core::Duration latency{90000};  // 90 ns
  bool functional = true;

  template <class V>
  void describe(V& v) {
    v.field("size", size,
            core::Spec("host physical memory (sparse: costs only what is touched)")
                .positive()
                .source("placeholder [U]: a two-socket server's 512 GiB"));
    v.field("bandwidth", bandwidth,
            core::Spec("DRAM bandwidth devices share")
                .positive()
                .source("[P5] [D]: 8 DDR4-3200 channels x 8 B x 3.2 GT/s = 204.8 GB/s, one "
                        "socket of an X12 / Ice Lake server [S9]"));
    v.field("latency", latency,
            core::Spec("from a request at the memory controller to its data")
                .min(0)
                .source("[P3]: DRAM access behind the root complex, 90 ns [U]"));
    v.field("functional", functional,
            core::Spec("payloads carry data; false: timing only (accesses without data served "
                       "for their time; what is written with data, such as command buffers, kept)")
                .source("podsim: functional mode"));
  }

  core::MemoryTargetConfig memory_target() const;
};

class HostMemory : public core::MemoryTarget {
 public:
  // Throws std::invalid_argument on a bad configuration, naming the key.
  HostMemory(sc_core::sc_module_name name, const HostMemoryConfig& config);
};

}  // namespace podsim::host
