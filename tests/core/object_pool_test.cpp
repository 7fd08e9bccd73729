#include "core/object_pool.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <stdexcept>
#include <vector>

namespace podsim::core {
namespace {

// Has reset(): the pool must call it rather than assign a fresh object, so a reused object keeps
// its buffer's capacity.
struct Resettable {
  std::vector<std::uint8_t> payload;
  int value = 0;
  int resets = 0;
  void reset() {
    payload.clear();
    value = 0;
    ++resets;
  }
};

// No reset(): the pool assigns T{}.
struct Plain {
  int value = 0;
  std::uint64_t tag = 0;
};

TEST(ObjectPool, StartsEmpty) {
  ObjectPool<Plain> pool(8);
  EXPECT_EQ(pool.live(), 0u);
  EXPECT_EQ(pool.peak_live(), 0u);
  EXPECT_EQ(pool.capacity(), 0u);
  EXPECT_EQ(pool.acquisitions(), 0u);
  EXPECT_EQ(pool.objects_per_slab(), 8u);
}

TEST(ObjectPool, AcquireAllocatesOneSlab) {
  ObjectPool<Plain> pool(8);
  auto object = pool.acquire();
  ASSERT_NE(object, nullptr);
  EXPECT_EQ(pool.live(), 1u);
  EXPECT_EQ(pool.capacity(), 8u);
  EXPECT_EQ(pool.acquisitions(), 1u);
}

TEST(ObjectPool, PtrReturnsObjectOnDestruction) {
  ObjectPool<Plain> pool(4);
  Plain* raw = nullptr;
  {
    auto object = pool.acquire();
    raw = object.get();
    EXPECT_EQ(pool.live(), 1u);
  }
  EXPECT_EQ(pool.live(), 0u);
  auto again = pool.acquire();
  EXPECT_EQ(again.get(), raw);
}

TEST(ObjectPool, ObjectsAreDistinctWhileLive) {
  ObjectPool<Plain> pool(4);
  std::vector<ObjectPool<Plain>::Ptr> held;
  std::set<Plain*> addresses;
  for (int i = 0; i < 10; ++i) {
    held.push_back(pool.acquire());
    addresses.insert(held.back().get());
  }
  EXPECT_EQ(addresses.size(), 10u);
  EXPECT_EQ(pool.live(), 10u);
  EXPECT_EQ(pool.capacity(), 12u);  // three slabs of four
}

TEST(ObjectPool, SteadyStateDoesNotGrow) {
  ObjectPool<Plain> pool(16);
  std::vector<ObjectPool<Plain>::Ptr> window;
  for (int i = 0; i < 10; ++i) window.push_back(pool.acquire());
  const std::size_t capacity = pool.capacity();
  // A sliding window of ten objects: one released, one acquired, many times over.
  for (int i = 0; i < 100000; ++i) {
    window[static_cast<std::size_t>(i % 10)] = pool.acquire();
  }
  EXPECT_EQ(pool.capacity(), capacity);
  // At the moment of each acquire the replaced object is still held, hence eleven.
  EXPECT_EQ(pool.peak_live(), 11u);
  EXPECT_EQ(pool.live(), 10u);
  EXPECT_EQ(pool.acquisitions(), 100010u);
}

TEST(ObjectPool, PeakLiveTracksHighWaterMark) {
  ObjectPool<Plain> pool(2);
  {
    auto a = pool.acquire();
    auto b = pool.acquire();
    auto c = pool.acquire();
  }
  auto d = pool.acquire();
  EXPECT_EQ(pool.peak_live(), 3u);
  EXPECT_EQ(pool.live(), 1u);
}

TEST(ObjectPool, RecycledObjectIsResetThroughResetMethod) {
  ObjectPool<Resettable> pool(1);
  Resettable* raw = pool.acquire_raw();
  raw->payload.assign(1000, 0xAB);
  raw->value = 7;
  pool.release(raw);
  Resettable* again = pool.acquire_raw();
  ASSERT_EQ(again, raw);
  EXPECT_TRUE(again->payload.empty());
  EXPECT_GE(again->payload.capacity(), 1000u);  // reset() kept the buffer, as T{} would not
  EXPECT_EQ(again->value, 0);
  EXPECT_EQ(again->resets, 1);
  pool.release(again);
}

TEST(ObjectPool, RecycledObjectWithoutResetIsReassigned) {
  ObjectPool<Plain> pool(1);
  {
    auto object = pool.acquire();
    object->value = 42;
    object->tag = 0xDEADBEEF;
  }
  auto again = pool.acquire();
  EXPECT_EQ(again->value, 0);
  EXPECT_EQ(again->tag, 0u);
}

TEST(ObjectPool, RawAcquireAndReleaseBalance) {
  ObjectPool<Plain> pool(4);
  std::vector<Plain*> objects;
  for (int i = 0; i < 6; ++i) objects.push_back(pool.acquire_raw());
  EXPECT_EQ(pool.live(), 6u);
  for (Plain* object : objects) pool.release(object);
  EXPECT_EQ(pool.live(), 0u);
  EXPECT_EQ(pool.capacity(), 8u);
}

TEST(ObjectPool, ReservePreallocates) {
  ObjectPool<Plain> pool(10);
  pool.reserve(25);
  EXPECT_EQ(pool.capacity(), 30u);
  std::vector<ObjectPool<Plain>::Ptr> held;
  for (int i = 0; i < 30; ++i) held.push_back(pool.acquire());
  EXPECT_EQ(pool.capacity(), 30u);
  EXPECT_EQ(pool.live(), 30u);
}

TEST(ObjectPool, PtrCanBeMovedAndResetEarly) {
  ObjectPool<Plain> pool(4);
  auto a = pool.acquire();
  ObjectPool<Plain>::Ptr b = std::move(a);
  EXPECT_EQ(pool.live(), 1u);
  b.reset();
  EXPECT_EQ(pool.live(), 0u);
}

TEST(ObjectPool, RejectsEmptySlabs) { EXPECT_THROW(ObjectPool<Plain>(0), std::invalid_argument); }

TEST(ObjectPool, DestroyingWithLiveObjectsAssertsInDebugBuilds) {
#ifdef NDEBUG
  GTEST_SKIP() << "assertions are compiled out in this build";
#else
  EXPECT_DEATH(
      {
        auto* pool = new ObjectPool<Plain>(4);
        pool->acquire_raw();
        delete pool;
      },
      "still in use");
#endif
}

}  // namespace
}  // namespace podsim::core
