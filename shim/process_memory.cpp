#include "shim/process_memory.h"

#include <sys/mman.h>

#include <cerrno>
#include <vector>

namespace podsim::driver::shim {

std::optional<std::uint64_t> LentPages::lend(std::uint8_t* pages, std::uint64_t size) {
  const auto at = pool_.allocate(size, 4096);
  if (at) memory_.backing().attach(*at, pages, size);
  return at;
}

void LentPages::take_back(std::uint64_t physical, std::uint64_t size) {
  memory_.backing().detach(physical, size);
  pool_.release(physical, size);
}

// mincore fails with ENOMEM when part of the range is not mapped in the process.
int ProcessMemory::pin(std::uint64_t address, std::uint64_t size, std::uint64_t& physical) {
  void* start = reinterpret_cast<void*>(static_cast<std::uintptr_t>(address));
  std::vector<unsigned char> resident((size + 4095) / 4096);
  if (address == 0 || mincore(start, size, resident.data()) != 0) return -EFAULT;
  const auto at = lent_.lend(static_cast<std::uint8_t*>(start), size);
  if (!at) return -ENOMEM;
  physical = *at;
  return 0;
}

void ProcessMemory::unpin(std::uint64_t physical, std::uint64_t size) {
  lent_.take_back(physical, size);
}

}  // namespace podsim::driver::shim
