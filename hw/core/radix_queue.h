// A monotone priority queue on picosecond times (a radix heap): entries come out by time, and
// those with equal times in the order they went in. A time may not be earlier than the last one
// taken out, which holds for a simulator's future events.
// Captures: pushes that append to one of 65 buckets and pops that scan one bucket at a time, so
// every access is sequential: unlike a binary or 4-ary heap, whose deep levels miss in the cache
// once other state crowds it out, this queue stays fast when it holds tens of thousands of
// entries. Buckets go by time in slices of 2^kSliceBits ps; the slice being taken out is kept
// sorted, so an entry moves down a bucket at most once per bit of its distance in slices.
// Ignores: removal and decrease-key.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "hw/core/units.h"

namespace podsim::core {

// T has a member `TimePs at`.
template <class T>
class RadixQueue {
 public:
  // 256 ps: a few callbacks share a slice in a busy fabric, which keeps the buckets' spreading
  // rare, and sorting a slice costs little.
  static constexpr int kSliceBits = 8;

  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }
  // The last time taken out: no entry may be pushed earlier than this.
  TimePs floor() const { return floor_; }

  void push(const T& entry) {
    if (entry.at < floor_) throw std::logic_error("RadixQueue: entry earlier than the last taken");
    if (slice(entry.at) == last_slice_) {
      insert_current(entry);
    } else {
      place(entry);
    }
    ++size_;
  }

  // The earliest entry; the queue must not be empty.
  T pop() {
    if (current_.empty()) refill_current();
    const T entry = current_[head_++];
    if (head_ == current_.size()) {
      current_.clear();
      head_ = 0;
    }
    floor_ = entry.at;
    --size_;
    return entry;
  }

 private:
  static constexpr int kBuckets =
      65;  // bucket b: highest bit where slice and last slice differ is b-1

  static TimePs slice(TimePs at) { return at >> kSliceBits; }
  int bucket_of(TimePs at) const { return 64 - __builtin_clzll(slice(at) ^ last_slice_); }

  // The current slice's entries are sorted by time, equal times in arrival order.
  void insert_current(const T& entry) {
    current_.push_back(entry);
    std::size_t i = current_.size() - 1;
    for (; i > head_ && entry.at < current_[i - 1].at; --i) current_[i] = current_[i - 1];
    current_[i] = entry;
  }

  // The current slice is used up: the smallest non-empty bucket's earliest slice becomes
  // current and that bucket's entries spread to lower buckets in their order.
  void refill_current() {
    const int b = __builtin_ctzll(nonempty_) + 1;
    std::vector<T>& from = buckets_[b];
    TimePs earliest = from.front().at;
    for (const T& e : from) earliest = e.at < earliest ? e.at : earliest;
    last_slice_ = slice(earliest);
    nonempty_ &= ~(std::uint64_t{1} << (b - 1));
    spill_.swap(from);
    for (const T& e : spill_) {
      if (slice(e.at) == last_slice_) {
        insert_current(e);
      } else {
        place(e);
      }
    }
    spill_.clear();
  }

  void place(const T& entry) {
    const int b = bucket_of(entry.at);
    buckets_[b].push_back(entry);
    nonempty_ |= std::uint64_t{1} << (b - 1);
  }

  std::vector<T> current_;  // the slice being taken out, sorted, from head_
  std::size_t head_ = 0;
  std::vector<T> buckets_[kBuckets];  // bucket 0 unused: the current slice is current_
  std::vector<T> spill_;  // the bucket being spread; swapped in to keep every vector's capacity
  std::uint64_t nonempty_ = 0;  // bit b-1 set: bucket b (1..64) has entries
  std::size_t size_ = 0;
  TimePs last_slice_ = 0;
  TimePs floor_ = 0;
};

}  // namespace podsim::core
