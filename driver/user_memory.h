// A user process's memory as the driver reaches it: the pages behind a user address range, as
// the kernel pins them for MEMORY MAP USERPTR (how user space's host memory becomes host physical
// memory the device's DMA reaches), and the kernel's copy_from_user / copy_to_user for what an
// ioctl's argument points to (a CS's chunks, INFO's buffer).
// Three kinds: inside the simulator, a host program's addresses are host physical addresses
// (IdentityUserMemory) and its pointers are podsim's own; under the LD_PRELOAD shim they are the
// client process's own pages, which the shim lends to the modeled host memory while they are
// mapped; a client process of a podsim server is reached from outside (shim/).
#pragma once

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>

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
  // The kernel's copies between an ioctl and user space: 0, or -EFAULT when the user's range
  // cannot be read or written. By default user pointers are the caller's own, in this process.
  virtual int copy_from(void* to, std::uint64_t user_address, std::size_t size) {
    std::memcpy(to, reinterpret_cast<const void*>(static_cast<std::uintptr_t>(user_address)), size);
    return 0;
  }
  virtual int copy_to(std::uint64_t user_address, const void* from, std::size_t size) {
    std::memcpy(reinterpret_cast<void*>(static_cast<std::uintptr_t>(user_address)), from, size);
    return 0;
  }
  int clear(std::uint64_t user_address, std::size_t size);
};

inline int UserMemory::clear(std::uint64_t user_address, std::size_t size) {
  static constexpr std::uint8_t kZeros[4096] = {};
  for (std::size_t done = 0; done < size;) {
    const std::size_t n = std::min(size - done, sizeof kZeros);
    if (const int rc = copy_to(user_address + done, kZeros, n); rc != 0) return rc;
    done += n;
  }
  return 0;
}

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
