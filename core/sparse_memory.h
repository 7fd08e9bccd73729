// Sparse, page-granular backing store for every memory model (HBM, SRAM, host memory).
// Captures: byte-exact contents of a large address space where a page costs memory only once it
// is written; untouched memory reads as zeros; ranges lent by a caller (a client process's pages
// the driver shim maps for the device, docs/driver.md). Ignores: timing (the models around it own
// that), access permissions and concurrency (SystemC runs one process at a time; not thread-safe).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/page_pool.h"

namespace podsim::core {

class SparseMemory {
 public:
  static constexpr std::uint64_t kDefaultPageSize = 4096;

  // Throws std::invalid_argument if size is zero or page_size is not a power of two.
  explicit SparseMemory(std::uint64_t size, std::uint64_t page_size = kDefaultPageSize);

  // Not copyable (it may hold gigabytes) nor movable (the page cache would follow the pages).
  SparseMemory(const SparseMemory&) = delete;
  SparseMemory& operator=(const SparseMemory&) = delete;

  // Each throws std::out_of_range naming addr, length and size if [addr, addr + len) does not fit.
  void read(std::uint64_t addr, void* dst, std::uint64_t len) const;
  void write(std::uint64_t addr, const void* src, std::uint64_t len);
  // Filling untouched pages with zero allocates nothing (they already read as zero).
  void fill(std::uint64_t addr, std::uint8_t value, std::uint64_t len);

  // Start of the page holding addr, or nullptr if that page was never written. The pointer stays
  // valid until clear() or destruction; a caller may read page_size() bytes from it (the last
  // page may extend past size(); those bytes are zero and never written).
  const std::uint8_t* page_if_present(std::uint64_t addr) const;

  // Drops every page: all memory reads as zero again.
  void clear();
  // [addr, addr + len) reads as zero again: the store's own pages wholly inside it are freed,
  // the rest of it zeroed (a buffer whose contents are no longer needed gives its memory back).
  // Pointers page_if_present gave for freed pages dangle.
  void discard(std::uint64_t addr, std::uint64_t len);

  // Makes the pages of [addr, addr + len) the caller's memory at `external` (both ends page
  // aligned) until detach: reads and writes go there. What the store held there is dropped. The
  // memory must outlive the attachment; it is never freed here. Throws std::invalid_argument on
  // an unaligned range and std::out_of_range outside the store.
  void attach(std::uint64_t addr, std::uint8_t* external, std::uint64_t len);
  // Ends an attachment: those pages read as zero again.
  void detach(std::uint64_t addr, std::uint64_t len);

  std::uint64_t size() const { return size_; }
  std::uint64_t page_size() const { return page_size_; }
  std::uint64_t pages_allocated() const { return pages_allocated_; }
  // Bytes held by pages (page-table overhead is not counted).
  std::uint64_t bytes_allocated() const { return pages_allocated_ * page_size_; }

 private:
  // A three-level radix table over page numbers. A flat table would cost 8 bytes per page of the
  // whole address space (192 MiB for a 96 GiB HBM at 4 KiB pages, times every chip), and a hash
  // map costs a hash per access; here the root holds one slot per 2^18 pages (96 slots for that
  // HBM), interior nodes are allocated only where something was written, and a lookup is three
  // indexed loads. The last page hit is cached, so small accesses that stay in one page (register
  // and descriptor reads) skip even those.
  static constexpr unsigned kLevelBits = 9;
  static constexpr std::size_t kFanout = std::size_t{1} << kLevelBits;
  static constexpr std::uint64_t kLevelMask = kFanout - 1;

  // A page is the store's own, from its pool and given back to it, or attached memory, which the
  // store does not free.
  struct PageDeleter {
    PageDeleter() : pool(nullptr) {}
    explicit PageDeleter(PagePool* from) : pool(from) {}
    PagePool* pool;
    bool owned() const { return pool != nullptr; }
    void operator()(std::uint8_t* page) const {
      if (pool) pool->give(page);
    }
  };
  using Page = std::unique_ptr<std::uint8_t[], PageDeleter>;
  struct Leaf {
    std::array<Page, kFanout> pages;
  };
  struct Mid {
    std::array<std::unique_ptr<Leaf>, kFanout> leaves;
  };

  void check_range(std::uint64_t addr, std::uint64_t len) const;
  std::uint8_t* find_page(std::uint64_t page_number) const;
  std::uint8_t* find_or_allocate_page(std::uint64_t page_number);
  Page& slot(std::uint64_t page_number);
  void check_pages(std::uint64_t addr, std::uint64_t len) const;

  std::uint64_t size_;
  std::uint64_t page_size_;
  unsigned page_shift_;
  std::uint64_t pages_allocated_ = 0;
  PagePool pool_;  // before root_: the pages go back to it as the table goes
  std::vector<std::unique_ptr<Mid>> root_;

  // Cache of the last page found. Only present pages are cached, so it never needs invalidating
  // on allocation; clear() resets it.
  mutable std::uint64_t cached_page_number_ = ~std::uint64_t{0};
  mutable std::uint8_t* cached_page_ = nullptr;
};

}  // namespace podsim::core
