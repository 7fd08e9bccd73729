#include "hw/host/host_memory.h"

namespace podsim::host {

core::MemoryTargetConfig HostMemoryConfig::memory_target() const {
  core::validate_config(*this);
  core::MemoryTargetConfig c;
  c.size = size;
  c.bandwidth = bandwidth;
  c.latency = latency;
  // The driver's command buffers, rings and queues live here: kept in timing-only mode too,
  // as the chip's SRAM keeps them, while payloads without data are served for their time.
  c.functional = true;
  c.timing_only_payload = !functional;
  return c;
}

HostMemory::HostMemory(sc_core::sc_module_name name, const HostMemoryConfig& config)
    : core::MemoryTarget(name, config.memory_target()) {}

}  // namespace podsim::host
