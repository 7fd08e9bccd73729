// Pages for the sparse memories: carved from slabs the system maps zero-filled (growing from
// 64 KiB to a 2 MiB transparent huge page), and kept for reuse when freed. Captures what a
// functional run costs in page zeroing: a fresh page is the kernel's zeros and is not cleared again
// here; a reused one is cleared once, here, instead of going back to the system and being faulted
// and zeroed anew (which, with transparent huge pages, zeroes two megabytes for each small
// allocation the heap regrows into). Ignores: returning memory to the system before the pool goes
// (a store that discards pages reuses them soon).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace podsim::core {

class PagePool {
 public:
  // page_size: bytes per page, a power of two.
  explicit PagePool(std::size_t page_size);
  ~PagePool();
  PagePool(const PagePool&) = delete;
  PagePool& operator=(const PagePool&) = delete;

  // A zero-filled page; throws std::bad_alloc when the system has no memory left.
  std::uint8_t* take();
  // Takes back a page this pool gave.
  void give(std::uint8_t* page) { free_.push_back(page); }

  std::size_t page_size() const { return page_size_; }
  // Bytes mapped from the system so far.
  std::size_t bytes_mapped() const { return mapped_; }

 private:
  struct Slab {
    std::uint8_t* start;
    std::size_t bytes;
  };
  std::size_t page_size_, next_slab_bytes_, mapped_ = 0;
  std::vector<Slab> slabs_;
  std::uint8_t* fresh_ = nullptr;  // the newest slab's pages never handed out
  std::size_t fresh_left_ = 0;
  std::vector<std::uint8_t*> free_;
};

}  // namespace podsim::core
