#include "core/page_pool.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstring>
#include <new>

namespace podsim::core {

namespace {
// Slabs grow from 64 KiB, so that a store that holds a few pages (registers, a small SRAM) maps
// little, to 2 MiB. (Transparent huge pages for the slabs were measured slower: a store's last
// slab is zeroed whole, and a system has hundreds of stores.)
constexpr std::size_t kFirstSlabBytes = std::size_t{64} << 10;
constexpr std::size_t kLargestSlabBytes = std::size_t{2} << 20;

// `bytes` of zero-filled memory. (Faulting a slab in whole with MAP_POPULATE was measured: no
// faster, and a fifth more peak memory.)
std::uint8_t* map_slab(std::size_t bytes) {
  void* at = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (at == MAP_FAILED) throw std::bad_alloc();
  return static_cast<std::uint8_t*>(at);
}
}  // namespace

PagePool::PagePool(std::size_t page_size)
    : page_size_(page_size), next_slab_bytes_(std::max(page_size, kFirstSlabBytes)) {}

PagePool::~PagePool() {
  for (const Slab& slab : slabs_) ::munmap(slab.start, slab.bytes);
}

std::uint8_t* PagePool::take() {
  if (!free_.empty()) {
    std::uint8_t* page = free_.back();
    free_.pop_back();
    std::memset(page, 0, page_size_);
    return page;
  }
  if (fresh_left_ == 0) {
    const std::size_t bytes = next_slab_bytes_;
    slabs_.reserve(slabs_.size() + 1);  // so that the push below cannot throw and leak the slab
    slabs_.push_back({map_slab(bytes), bytes});
    mapped_ += bytes;
    fresh_ = slabs_.back().start;
    fresh_left_ = bytes / page_size_;
    next_slab_bytes_ = std::max(page_size_, std::min(2 * bytes, kLargestSlabBytes));
  }
  std::uint8_t* page = fresh_;
  fresh_ += page_size_;
  --fresh_left_;
  return page;
}

}  // namespace podsim::core
