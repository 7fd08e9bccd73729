// The max-min solver's queue of saturation levels (max_min.h): one entry per id (a link), the
// lowest level first, ties to the lower id, and an entry's level can be moved or the entry taken
// out in place. With a lazy heap (a new entry per change, stale ones skipped when they surface),
// pushing and popping took 40% of the CPU of a training step with halving-doubling across 32
// boxes (perf); boost's mutable heaps allocate a node per entry, which the solver, rebuilding the
// queue thousands of times a run, cannot afford. Four children per node: shallower, and siblings
// share cache lines.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace podsim::flow {

class LevelHeap {
 public:
  struct Entry {
    double at;
    int id;
  };

  // Ids are 0 .. ids - 1; empties the heap.
  void reset(int ids) {
    position_.assign(static_cast<std::size_t>(ids), kAbsent);
    heap_.clear();
  }
  // Empties the heap in the time of its entries.
  void clear() {
    for (const Entry& e : heap_) position_[static_cast<std::size_t>(e.id)] = kAbsent;
    heap_.clear();
  }
  int ids() const { return static_cast<int>(position_.size()); }
  bool empty() const { return heap_.empty(); }
  std::size_t size() const { return heap_.size(); }
  const Entry& top() const { return heap_.front(); }
  bool contains(int id) const { return position_[static_cast<std::size_t>(id)] != kAbsent; }

  // Adds `id` at `at` or moves it there.
  void set(int id, double at) {
    std::uint32_t& p = position_[static_cast<std::size_t>(id)];
    if (p == kAbsent) {
      p = static_cast<std::uint32_t>(heap_.size());
      heap_.push_back({at, id});
      return up(p);
    }
    const bool lower = at < heap_[p].at;
    heap_[p].at = at;
    lower ? up(p) : down(p);
  }
  void erase(int id) {
    const std::uint32_t p = position_[static_cast<std::size_t>(id)];
    if (p == kAbsent) return;
    position_[static_cast<std::size_t>(id)] = kAbsent;
    const Entry last = heap_.back();
    heap_.pop_back();
    if (p == heap_.size()) return;
    place(p, last);
    up(p);
    down(position_[static_cast<std::size_t>(last.id)]);
  }
  void pop() { erase(heap_.front().id); }

 private:
  static constexpr std::uint32_t kAbsent = ~std::uint32_t{0};
  static constexpr std::size_t kArity = 4;

  static bool before(const Entry& a, const Entry& b) {
    return a.at != b.at ? a.at < b.at : a.id < b.id;
  }
  void place(std::size_t p, const Entry& e) {
    heap_[p] = e;
    position_[static_cast<std::size_t>(e.id)] = static_cast<std::uint32_t>(p);
  }
  void up(std::size_t p) {
    const Entry e = heap_[p];
    while (p > 0) {
      const std::size_t parent = (p - 1) / kArity;
      if (!before(e, heap_[parent])) break;
      place(p, heap_[parent]);
      p = parent;
    }
    place(p, e);
  }
  void down(std::size_t p) {
    const Entry e = heap_[p];
    for (;;) {
      const std::size_t first = p * kArity + 1;
      if (first >= heap_.size()) break;
      std::size_t best = first;
      const std::size_t end = std::min(first + kArity, heap_.size());
      for (std::size_t c = first + 1; c < end; ++c) {
        if (before(heap_[c], heap_[best])) best = c;
      }
      if (!before(heap_[best], e)) break;
      place(p, heap_[best]);
      p = best;
    }
    place(p, e);
  }

  std::vector<Entry> heap_;
  std::vector<std::uint32_t> position_;  // by id: where its entry is, or kAbsent
};

}  // namespace podsim::flow
