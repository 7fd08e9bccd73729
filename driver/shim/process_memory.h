// MAP USERPTR under the shim: the client's pages become modeled host memory while mapped. The
// model runs inside the client process, so the modeled host memory borrows the very pages
// (core::SparseMemory::attach) at a host physical range taken from a pool: DMA reads what the
// program wrote last and the program sees what DMA wrote, with no copies.
// Captures: the kernel's refusal of pages the process does not have (EFAULT), one physical range
// per pinned range. Ignores: pinning itself (a program that frees memory while the device still
// maps it gets what use-after-free gets; the kernel would keep the pages), and read-only pages.
#pragma once

#include <cstdint>

#include "driver/user_memory.h"
#include "hw/core/range_allocator.h"
#include "hw/host/host_memory.h"

namespace podsim::driver::shim {

class ProcessMemory : public UserMemory {
 public:
  // Lends pages at host physical [first, first + size) of `memory`.
  ProcessMemory(host::HostMemory& memory, std::uint64_t first, std::uint64_t size)
      : memory_(memory), pool_(first, size) {}
  int pin(std::uint64_t address, std::uint64_t size, std::uint64_t& physical) override;
  void unpin(std::uint64_t physical, std::uint64_t size) override;

 private:
  host::HostMemory& memory_;
  core::RangeAllocator pool_;
};

}  // namespace podsim::driver::shim
