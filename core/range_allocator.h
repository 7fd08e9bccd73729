// First-fit allocation of ranges of a numbered space (sync objects, SRAM bytes), for the launchers
// to give each running collective or kernel its own. Plain C++; a sorted map of free ranges merged
// on release is all it needs (Boost.Interval's containers would bring more than they save).
#pragma once

#include <cstdint>
#include <map>
#include <optional>

namespace podsim::core {

class RangeAllocator {
 public:
  RangeAllocator() = default;
  RangeAllocator(std::uint64_t first, std::uint64_t size) {
    if (size > 0) free_[first] = size;
  }

  // The lowest start of `size` free units aligned to `align`, now taken; nullopt when none.
  std::optional<std::uint64_t> allocate(std::uint64_t size, std::uint64_t align = 1) {
    for (auto it = free_.begin(); it != free_.end(); ++it) {
      const auto [start, length] = *it;
      const std::uint64_t at = (start + align - 1) / align * align;
      if (at + size > start + length) continue;
      free_.erase(it);
      if (at > start) free_[start] = at - start;
      if (at + size < start + length) free_[at + size] = start + length - at - size;
      return at;
    }
    return std::nullopt;
  }
  // Takes exactly [start, start + size) if it is all free; false (nothing taken) otherwise.
  bool take(std::uint64_t start, std::uint64_t size) {
    auto it = free_.upper_bound(start);
    if (it == free_.begin() || size == 0) return false;
    --it;
    const auto [first, length] = *it;
    if (start + size < start || start + size > first + length) return false;
    free_.erase(it);
    if (start > first) free_[first] = start - first;
    if (start + size < first + length) free_[start + size] = first + length - start - size;
    return true;
  }
  // Gives back what allocate returned.
  void release(std::uint64_t start, std::uint64_t size) {
    auto next = free_.lower_bound(start);
    if (next != free_.end() && start + size == next->first) {
      size += next->second;
      next = free_.erase(next);
    }
    if (next != free_.begin()) {
      auto prev = std::prev(next);
      if (prev->first + prev->second == start) {
        prev->second += size;
        return;
      }
    }
    free_[start] = size;
  }
  std::uint64_t largest() const {
    std::uint64_t best = 0;
    for (const auto& [start, length] : free_) best = length > best ? length : best;
    return best;
  }

 private:
  std::map<std::uint64_t, std::uint64_t> free_;  // start -> length
};

}  // namespace podsim::core
