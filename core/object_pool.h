// Pooled allocator for objects made and dropped at high rate (network packets, descriptors).
// Captures: slab allocation, recycling through a free list, a reset of each recycled object, and
// counters to size pools. Ignores: thread safety (SystemC runs one process at a time) and
// returning memory to the system before the pool dies (a pool keeps its high-water mark).
//
// Lifetime: the pool must outlive every object taken from it; a Ptr holds a raw pointer back to
// its pool. Debug builds assert on destroying a pool with live objects.
#pragma once

#include <cassert>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <type_traits>
#include <utility>
#include <vector>

namespace podsim::core {

namespace detail {

template <class T, class = void>
struct HasReset : std::false_type {};
template <class T>
struct HasReset<T, std::void_t<decltype(std::declval<T&>().reset())>> : std::true_type {};

}  // namespace detail

template <class T>
class ObjectPool {
  static_assert(std::is_default_constructible_v<T>, "pooled objects are built ahead of use");

 public:
  class Deleter {
   public:
    Deleter() = default;
    explicit Deleter(ObjectPool* pool) : pool_(pool) {}
    void operator()(T* object) const { pool_->release(object); }

   private:
    ObjectPool* pool_ = nullptr;
  };
  using Ptr = std::unique_ptr<T, Deleter>;

  static constexpr std::size_t kDefaultSlabObjects = 256;

  explicit ObjectPool(std::size_t objects_per_slab = kDefaultSlabObjects)
      : objects_per_slab_(objects_per_slab) {
    if (objects_per_slab == 0) {
      throw std::invalid_argument("ObjectPool: objects_per_slab must be greater than zero");
    }
  }

  ~ObjectPool() { assert(live_ == 0 && "ObjectPool destroyed while objects are still in use"); }

  // Objects point back to their pool, so a pool stays where it was made.
  ObjectPool(const ObjectPool&) = delete;
  ObjectPool& operator=(const ObjectPool&) = delete;

  Ptr acquire() { return Ptr(acquire_raw(), Deleter(this)); }

  // For intrusive queues that hold raw pointers; every object must come back through release().
  T* acquire_raw() {
    if (free_.empty()) add_slab();
    T* object = free_.back();
    free_.pop_back();
    ++acquisitions_;
    if (++live_ > peak_live_) peak_live_ = live_;
    return object;
  }

  // Resets the object now, so whatever it holds is let go when it is dropped, not when reused.
  void release(T* object) {
    assert(object != nullptr && live_ > 0 && "release without a matching acquire");
    reset(*object);
    free_.push_back(object);  // never reallocates: capacity was reserved for every object
    --live_;
  }

  // Grows the pool to hold at least n objects, so a run's first burst does not allocate.
  void reserve(std::size_t n) {
    while (capacity() < n) add_slab();
  }

  std::size_t live() const { return live_; }
  std::size_t peak_live() const { return peak_live_; }
  // Objects obtained from the system so far (live plus free).
  std::size_t capacity() const { return slabs_.size() * objects_per_slab_; }
  std::uint64_t acquisitions() const { return acquisitions_; }
  std::size_t objects_per_slab() const { return objects_per_slab_; }

 private:
  static void reset(T& object) {
    if constexpr (detail::HasReset<T>::value) {
      object.reset();
    } else {
      object = T{};
    }
  }

  void add_slab() {
    slabs_.push_back(std::make_unique<T[]>(objects_per_slab_));
    free_.reserve(capacity());
    T* slab = slabs_.back().get();
    // Pushed in reverse so the lowest address is handed out first.
    for (std::size_t i = objects_per_slab_; i > 0; --i) free_.push_back(&slab[i - 1]);
  }

  std::size_t objects_per_slab_;
  std::vector<std::unique_ptr<T[]>> slabs_;
  std::vector<T*> free_;
  std::size_t live_ = 0;
  std::size_t peak_live_ = 0;
  std::uint64_t acquisitions_ = 0;
};

}  // namespace podsim::core
