#include "driver/shim/process_memory.h"

#include <sys/mman.h>

#include <cerrno>
#include <vector>

namespace podsim::driver::shim {

// mincore fails with ENOMEM when part of the range is not mapped in the process.
int ProcessMemory::pin(std::uint64_t address, std::uint64_t size, std::uint64_t& physical) {
  void* start = reinterpret_cast<void*>(static_cast<std::uintptr_t>(address));
  std::vector<unsigned char> resident((size + 4095) / 4096);
  if (address == 0 || mincore(start, size, resident.data()) != 0) return -EFAULT;
  const auto at = pool_.allocate(size, 4096);
  if (!at) return -ENOMEM;
  memory_.backing().attach(*at, static_cast<std::uint8_t*>(start), size);
  physical = *at;
  return 0;
}

void ProcessMemory::unpin(std::uint64_t physical, std::uint64_t size) {
  memory_.backing().detach(physical, size);
  pool_.release(physical, size);
}

}  // namespace podsim::driver::shim
