// The pages behind a user address range, as the kernel pins them for MEMORY MAP USERPTR: how user
// space's host memory becomes host physical memory the device's DMA reaches.
// Two kinds: inside the simulator, a host program's addresses are host physical addresses
// (IdentityUserMemory); under the LD_PRELOAD shim they are the client process's own pages, which
// the shim lends to the modeled host memory while they are mapped (driver/shim).
#pragma once

#include <cerrno>
#include <cstdint>

namespace podsim::driver {

class UserMemory {
 public:
  virtual ~UserMemory() = default;
  // Pins the pages holding [address, address + size) (both page aligned) and gives the host
  // physical address they now occupy, contiguously. 0 or -errno: -EFAULT when a page is not the
  // user's, -ENOMEM when no room is left.
  virtual int pin(std::uint64_t address, std::uint64_t size, std::uint64_t& physical) = 0;
  // Gives back what pin returned.
  virtual void unpin(std::uint64_t physical, std::uint64_t size) = 0;
};

// User addresses are host physical addresses, [0, limit).
class IdentityUserMemory : public UserMemory {
 public:
  explicit IdentityUserMemory(std::uint64_t limit) : limit_(limit) {}
  int pin(std::uint64_t address, std::uint64_t size, std::uint64_t& physical) override {
    if (address >= limit_ || size > limit_ - address) return -EFAULT;
    physical = address;
    return 0;
  }
  void unpin(std::uint64_t, std::uint64_t) override {}

 private:
  std::uint64_t limit_;
};

}  // namespace podsim::driver
