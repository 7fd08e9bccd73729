// The sparse memories' page pool: pages come zeroed, a page given back is reused (cleared once)
// before anything new is mapped, and slabs grow from 64 KiB to 2 MiB.
#include "core/page_pool.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <set>

namespace podsim::core {
namespace {

bool all_zero(const std::uint8_t* page, std::size_t bytes) {
  return std::all_of(page, page + bytes, [](std::uint8_t b) { return b == 0; });
}

TEST(PagePool, PagesComeZeroedAndDistinct) {
  PagePool pool(4096);
  std::set<std::uint8_t*> seen;
  for (int i = 0; i < 100; ++i) {  // across the first slabs
    std::uint8_t* page = pool.take();
    EXPECT_TRUE(all_zero(page, 4096));
    std::memset(page, 0xab, 4096);
    EXPECT_TRUE(seen.insert(page).second);
  }
}

TEST(PagePool, AGivenBackPageIsReusedClearedBeforeMoreIsMapped) {
  PagePool pool(4096);
  std::uint8_t* page = pool.take();
  std::memset(page, 0x5a, 4096);
  const std::size_t mapped = pool.bytes_mapped();
  pool.give(page);
  EXPECT_EQ(pool.take(), page);
  EXPECT_TRUE(all_zero(page, 4096));
  EXPECT_EQ(pool.bytes_mapped(), mapped);
}

TEST(PagePool, SlabsGrowFromSixtyFourKibToTwoMib) {
  PagePool pool(4096);
  pool.take();
  EXPECT_EQ(pool.bytes_mapped(), 64u << 10);
  for (int i = 0; i < 16; ++i) pool.take();  // the 17th page needs a second, 128 KiB slab
  EXPECT_EQ(pool.bytes_mapped(), (64u + 128u) << 10);
  for (int i = 0; i < 2000; ++i) pool.take();
  EXPECT_EQ(pool.bytes_mapped() % (2u << 20), (64u + 128u + 256u + 512u + 1024u) << 10);
}

TEST(PagePool, PagesLargerThanASlabGetASlabEach) {
  PagePool pool(std::size_t{4} << 20);
  std::uint8_t* a = pool.take();
  std::uint8_t* b = pool.take();
  EXPECT_NE(a, b);
  EXPECT_EQ(pool.bytes_mapped(), std::size_t{8} << 20);
  EXPECT_TRUE(all_zero(b, std::size_t{4} << 20));
}

}  // namespace
}  // namespace podsim::core
