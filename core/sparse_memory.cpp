#include "core/sparse_memory.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace podsim::core {

namespace {

bool is_power_of_two(std::uint64_t n) { return n != 0 && (n & (n - 1)) == 0; }

unsigned log2_exact(std::uint64_t n) {
  unsigned shift = 0;
  while ((std::uint64_t{1} << shift) != n) ++shift;
  return shift;
}

// Calls fn(page_number, offset_in_page, chunk_length, bytes_done) for each piece of
// [addr, addr + len) that lies in one page.
template <class Fn>
void for_each_page_chunk(std::uint64_t addr, std::uint64_t len, std::uint64_t page_size,
                         unsigned page_shift, Fn&& fn) {
  std::uint64_t done = 0;
  while (done < len) {
    const std::uint64_t offset = addr & (page_size - 1);
    const std::uint64_t chunk = std::min(len - done, page_size - offset);
    fn(addr >> page_shift, offset, chunk, done);
    addr += chunk;
    done += chunk;
  }
}

}  // namespace

SparseMemory::SparseMemory(std::uint64_t size, std::uint64_t page_size)
    : size_(size), page_size_(page_size), pool_(page_size) {
  if (size == 0) throw std::invalid_argument("SparseMemory: size must be greater than zero");
  if (!is_power_of_two(page_size)) {
    throw std::invalid_argument(
        fmt::format("SparseMemory: page size {} is not a power of two", page_size));
  }
  page_shift_ = log2_exact(page_size);
  const std::uint64_t pages = ((size - 1) >> page_shift_) + 1;
  root_.resize(((pages - 1) >> (2 * kLevelBits)) + 1);
}

void SparseMemory::check_range(std::uint64_t addr, std::uint64_t len) const {
  // Written so that addr + len cannot overflow.
  if (len > size_ || addr > size_ - len) {
    throw std::out_of_range(
        fmt::format("SparseMemory: access at addr {:#x} with length {} exceeds memory size {}",
                    addr, len, size_));
  }
}

void SparseMemory::read(std::uint64_t addr, void* dst, std::uint64_t len) const {
  check_range(addr, len);
  auto* out = static_cast<std::uint8_t*>(dst);
  for_each_page_chunk(addr, len, page_size_, page_shift_,
                      [&](std::uint64_t page_number, std::uint64_t offset, std::uint64_t chunk,
                          std::uint64_t done) {
                        const std::uint8_t* page = find_page(page_number);
                        if (page) {
                          std::memcpy(out + done, page + offset, chunk);
                        } else {
                          std::memset(out + done, 0, chunk);
                        }
                      });
}

void SparseMemory::write(std::uint64_t addr, const void* src, std::uint64_t len) {
  check_range(addr, len);
  const auto* in = static_cast<const std::uint8_t*>(src);
  for_each_page_chunk(addr, len, page_size_, page_shift_,
                      [&](std::uint64_t page_number, std::uint64_t offset, std::uint64_t chunk,
                          std::uint64_t done) {
                        std::memcpy(find_or_allocate_page(page_number) + offset, in + done, chunk);
                      });
}

void SparseMemory::fill(std::uint64_t addr, std::uint8_t value, std::uint64_t len) {
  check_range(addr, len);
  for_each_page_chunk(
      addr, len, page_size_, page_shift_,
      [&](std::uint64_t page_number, std::uint64_t offset, std::uint64_t chunk, std::uint64_t) {
        std::uint8_t* page =
            value == 0 ? find_page(page_number) : find_or_allocate_page(page_number);
        if (page) std::memset(page + offset, value, chunk);
      });
}

const std::uint8_t* SparseMemory::page_if_present(std::uint64_t addr) const {
  check_range(addr, 1);
  return find_page(addr >> page_shift_);
}

void SparseMemory::clear() {
  for (auto& mid : root_) mid.reset();
  pages_allocated_ = 0;
  cached_page_number_ = ~std::uint64_t{0};
  cached_page_ = nullptr;
}

void SparseMemory::discard(std::uint64_t addr, std::uint64_t len) {
  check_range(addr, len);
  for_each_page_chunk(
      addr, len, page_size_, page_shift_,
      [&](std::uint64_t page_number, std::uint64_t offset, std::uint64_t chunk, std::uint64_t) {
        std::uint8_t* page = find_page(page_number);
        if (page == nullptr) return;
        Page& held = slot(page_number);
        if (chunk < page_size_ || !held.get_deleter().owned()) {
          std::memset(page + offset, 0, chunk);
          return;
        }
        held.reset();
        --pages_allocated_;
        if (cached_page_number_ == page_number) {
          cached_page_number_ = ~std::uint64_t{0};
          cached_page_ = nullptr;
        }
      });
}

std::uint8_t* SparseMemory::find_page(std::uint64_t page_number) const {
  if (page_number == cached_page_number_) return cached_page_;
  const Mid* mid = root_[page_number >> (2 * kLevelBits)].get();
  if (mid == nullptr) return nullptr;
  const Leaf* leaf = mid->leaves[(page_number >> kLevelBits) & kLevelMask].get();
  if (leaf == nullptr) return nullptr;
  std::uint8_t* page = leaf->pages[page_number & kLevelMask].get();
  if (page != nullptr) {
    cached_page_number_ = page_number;
    cached_page_ = page;
  }
  return page;
}

SparseMemory::Page& SparseMemory::slot(std::uint64_t page_number) {
  auto& mid = root_[page_number >> (2 * kLevelBits)];
  if (!mid) mid = std::make_unique<Mid>();
  auto& leaf = mid->leaves[(page_number >> kLevelBits) & kLevelMask];
  if (!leaf) leaf = std::make_unique<Leaf>();
  return leaf->pages[page_number & kLevelMask];
}

std::uint8_t* SparseMemory::find_or_allocate_page(std::uint64_t page_number) {
  if (std::uint8_t* page = find_page(page_number)) return page;
  Page& page = slot(page_number);
  page = Page(pool_.take(), PageDeleter{&pool_});  // zeros
  ++pages_allocated_;
  cached_page_number_ = page_number;
  cached_page_ = page.get();
  return page.get();
}

void SparseMemory::check_pages(std::uint64_t addr, std::uint64_t len) const {
  check_range(addr, len);
  if (addr % page_size_ != 0 || len % page_size_ != 0) {
    throw std::invalid_argument(fmt::format(
        "SparseMemory: {:#x}+{:#x} is not a whole number of {}-byte pages", addr, len, page_size_));
  }
}

void SparseMemory::attach(std::uint64_t addr, std::uint8_t* external, std::uint64_t len) {
  check_pages(addr, len);
  cached_page_number_ = ~std::uint64_t{0};
  for (std::uint64_t done = 0; done < len; done += page_size_) {
    Page& page = slot((addr + done) >> page_shift_);
    if (page && page.get_deleter().owned()) --pages_allocated_;
    page = Page(external + done, PageDeleter{});
  }
}

void SparseMemory::detach(std::uint64_t addr, std::uint64_t len) {
  check_pages(addr, len);
  cached_page_number_ = ~std::uint64_t{0};
  for (std::uint64_t done = 0; done < len; done += page_size_) {
    Page& page = slot((addr + done) >> page_shift_);
    if (page && page.get_deleter().owned()) --pages_allocated_;
    page.reset();
  }
}

}  // namespace podsim::core
