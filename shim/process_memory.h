// MAP USERPTR under the shim: a client's pages become modeled host memory while mapped. The
// modeled host memory borrows the very pages (core::SparseMemory::attach) at a host physical
// range taken from a pool (LentPages): DMA reads what the program wrote last and the program
// sees what DMA wrote, with no copies. With the model inside the client process
// (ProcessMemory) the pages are the program's own; a podsim server's client lends its pages as
// shared memory (remote_server.cpp).
// Captures: the kernel's refusal of pages the process does not have (EFAULT), one physical range
// per pinned range. Ignores: pinning itself (a program that frees memory while the device still
// maps it gets what use-after-free gets; the kernel would keep the pages), and read-only pages.
#pragma once

#include <cstdint>
#include <optional>

#include "core/range_allocator.h"
#include "driver/user_memory.h"
#include "hw/host/host_memory.h"

namespace podsim::driver::shim {

// Host physical [first, first + size) of `memory`, lent out to pages of this process.
class LentPages {
 public:
  LentPages(host::HostMemory& memory, std::uint64_t first, std::uint64_t size)
      : memory_(memory), pool_(first, size) {}
  // Where `pages` now appear, or nothing when no room is left.
  std::optional<std::uint64_t> lend(std::uint8_t* pages, std::uint64_t size);
  void take_back(std::uint64_t physical, std::uint64_t size);
  host::HostMemory& memory() { return memory_; }

 private:
  host::HostMemory& memory_;
  core::RangeAllocator pool_;
};

// The process the model runs in: user addresses are its own pointers.
class ProcessMemory : public UserMemory {
 public:
  explicit ProcessMemory(LentPages& lent) : lent_(lent) {}
  int pin(std::uint64_t address, std::uint64_t size, std::uint64_t& physical) override;
  void unpin(std::uint64_t physical, std::uint64_t size) override;

 private:
  LentPages& lent_;
};

}  // namespace podsim::driver::shim
