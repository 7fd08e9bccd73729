// A FIFO over a growable circular buffer, for per-packet queues (frames in flight on a link,
// switch egress queues, the NIC's control frames, received packets and work requests).
// Captures: push at the back, pop at either end, indexed access from the front. Capacity doubles
// when full and is never given back, so a queue allocates only while it reaches its high-water
// mark; std::deque would allocate and free a block every few hundred elements forever.
// Ignores: thread safety; iterators (indexing is enough).
#pragma once

#include <cassert>
#include <cstddef>
#include <utility>
#include <vector>

namespace podsim::core {

template <class T>
class Ring {
 public:
  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }

  T& front() { return at(0); }
  const T& front() const { return at(0); }
  T& back() { return at(size_ - 1); }
  T& operator[](std::size_t i) { return at(i); }
  const T& operator[](std::size_t i) const { return at(i); }

  void push_back(T value) {
    if (size_ == slots_.size()) grow();
    slots_[(head_ + size_) & (slots_.size() - 1)] = std::move(value);
    ++size_;
  }
  void pop_front() {
    assert(size_ > 0);
    head_ = (head_ + 1) & (slots_.size() - 1);
    --size_;
  }
  void pop_back() {
    assert(size_ > 0);
    --size_;
  }
  void clear() {
    head_ = 0;
    size_ = 0;
  }

 private:
  T& at(std::size_t i) {
    assert(i < size_);
    return slots_[(head_ + i) & (slots_.size() - 1)];
  }
  const T& at(std::size_t i) const {
    assert(i < size_);
    return slots_[(head_ + i) & (slots_.size() - 1)];
  }
  void grow() {
    std::vector<T> bigger(slots_.empty() ? 16 : slots_.size() * 2);
    for (std::size_t i = 0; i < size_; ++i) bigger[i] = std::move(at(i));
    slots_ = std::move(bigger);
    head_ = 0;
  }

  std::vector<T> slots_;  // size is zero or a power of two
  std::size_t head_ = 0;
  std::size_t size_ = 0;
};

}  // namespace podsim::core
