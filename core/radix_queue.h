// A monotone priority queue on picosecond times (a radix heap): entries come out by time, and
// those with equal times in the order `Before` gives them (by default, the order they went
// in). A time in a slice before the one being taken out (the queue's owner may take out a far
// entry before scheduling nearer ones) waits in a small binary heap that is taken out first.
// Captures: pushes that append to one of 65 buckets and pops that scan one bucket at a time, so
// every access is sequential: unlike a binary or 4-ary heap, whose deep levels miss in the cache
// once other state crowds it out, this queue stays fast when it holds tens of thousands of
// entries. Buckets go by time in slices of 2^kSliceBits ps; the slice being taken out is kept
// sorted, so an entry moves down a bucket at most once per bit of its distance in slices.
// Ignores: removal and decrease-key.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/units.h"

namespace podsim::core {

// Entries with equal times keep the order they were pushed in.
struct PushOrder {
  template <class T>
  bool operator()(const T&, const T&) const {
    return false;
  }
};

// T has a member `TimePs at`; Before(a, b) orders entries of equal time (a strict weak order).
template <class T, class Before = PushOrder>
class RadixQueue {
 public:
  // 256 ps: a few callbacks share a slice in a busy fabric, which keeps the buckets' spreading
  // rare, and sorting a slice costs little.
  static constexpr int kSliceBits = 8;

  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }
  void push(const T& entry) {
    const TimePs s = slice(entry.at);
    if (s < last_slice_) {
      early_.push_back({entry, pushed_});
      std::push_heap(early_.begin(), early_.end(), LaterEarly{});
      // Once the slice taken out has run far ahead, every near entry would go through the heap:
      // when it holds a good share of the queue, start the buckets again from the earliest.
      if (early_.size() >= kRebaseAt && early_.size() * 4 > size_) {
        ++pushed_;
        ++size_;
        rebase();
        return;
      }
    } else if (s == last_slice_) {
      insert_current(entry);
    } else {
      place(entry);
    }
    ++pushed_;
    ++size_;
  }

  // Whether `pred` holds for every entry, in no particular order.
  template <class Pred>
  bool all_of(Pred pred) const {
    for (const Early& e : early_) {
      if (!pred(e.entry)) return false;
    }
    for (std::size_t i = head_; i < current_.size(); ++i) {
      if (!pred(current_[i])) return false;
    }
    for (const std::vector<T>& bucket : buckets_) {
      for (const T& e : bucket) {
        if (!pred(e)) return false;
      }
    }
    return true;
  }
  // The earliest entry; the queue must not be empty.
  T pop() {
    // Early entries lie in slices before every other entry's.
    if (!early_.empty()) {
      std::pop_heap(early_.begin(), early_.end(), LaterEarly{});
      const T entry = early_.back().entry;
      early_.pop_back();
      --size_;
      return entry;
    }
    if (current_.empty()) refill_current();
    const T entry = current_[head_++];
    if (head_ == current_.size()) {
      current_.clear();
      head_ = 0;
    }
    --size_;
    return entry;
  }

 private:
  struct Early {
    T entry;
    std::uint64_t pushed;  // equal times without a Before order come out in push order
  };
  struct LaterEarly {  // a max-heap comparator: the earliest entry at the top
    bool operator()(const Early& a, const Early& b) const {
      if (earlier(a.entry, b.entry)) return false;
      if (earlier(b.entry, a.entry)) return true;
      return a.pushed > b.pushed;
    }
  };
  // Bucket b holds slices whose highest bit differing from the last slice is b-1.
  static constexpr int kBuckets = 65;
  static constexpr std::size_t kRebaseAt = 64;

  static TimePs slice(TimePs at) { return at >> kSliceBits; }
  int bucket_of(TimePs at) const { return 64 - __builtin_clzll(slice(at) ^ last_slice_); }

  // The current slice's entries are sorted by time, then by Before, then in arrival order.
  void insert_current(const T& entry) {
    current_.push_back(entry);
    std::size_t i = current_.size() - 1;
    for (; i > head_ && earlier(entry, current_[i - 1]); --i) current_[i] = current_[i - 1];
    current_[i] = entry;
  }
  static bool earlier(const T& a, const T& b) {
    return a.at != b.at ? a.at < b.at : Before{}(a, b);
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

  // Every entry placed again with the earliest one's slice as the last taken out. Equal times
  // share a slice, so they sit in one of early_, current_ or a bucket, each of which keeps their
  // order: taking those out in turn keeps it.
  void rebase() {
    std::vector<T> all;
    all.reserve(size_);
    std::sort(early_.begin(), early_.end(),
              [](const Early& a, const Early& b) { return LaterEarly{}(b, a); });
    for (const Early& e : early_) all.push_back(e.entry);
    early_.clear();
    all.insert(all.end(), current_.begin() + static_cast<std::ptrdiff_t>(head_), current_.end());
    current_.clear();
    head_ = 0;
    for (std::vector<T>& bucket : buckets_) {
      all.insert(all.end(), bucket.begin(), bucket.end());
      bucket.clear();
    }
    nonempty_ = 0;
    last_slice_ = slice(all.front().at);
    for (const T& e : all) {
      if (slice(e.at) == last_slice_) {
        insert_current(e);
      } else {
        place(e);
      }
    }
  }

  void place(const T& entry) {
    const int b = bucket_of(entry.at);
    buckets_[b].push_back(entry);
    nonempty_ |= std::uint64_t{1} << (b - 1);
  }

  std::vector<T> current_;  // the slice being taken out (and anything earlier), sorted, from head_
  std::size_t head_ = 0;
  std::vector<T> buckets_[kBuckets];  // bucket 0 unused: the current slice is current_
  std::vector<T> spill_;  // the bucket being spread; swapped in to keep every vector's capacity
  std::uint64_t nonempty_ = 0;  // bit b-1 set: bucket b (1..64) has entries
  std::vector<Early> early_;    // binary heap
  std::uint64_t pushed_ = 0;
  std::size_t size_ = 0;
  TimePs last_slice_ = 0;
};

}  // namespace podsim::core
