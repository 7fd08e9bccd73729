#include "core/sparse_memory.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace podsim::core {
namespace {

using ::testing::Each;
using ::testing::HasSubstr;

constexpr std::uint64_t kGiB = std::uint64_t{1} << 30;

std::vector<std::uint8_t> pattern(std::size_t n, std::uint8_t seed = 1) {
  std::vector<std::uint8_t> bytes(n);
  for (std::size_t i = 0; i < n; ++i) bytes[i] = static_cast<std::uint8_t>(seed + i * 7);
  return bytes;
}

std::string out_of_range_message(const SparseMemory& memory, std::uint64_t addr,
                                 std::uint64_t len) {
  try {
    std::vector<std::uint8_t> buffer(len);
    memory.read(addr, buffer.data(), len);
  } catch (const std::out_of_range& e) {
    return e.what();
  }
  return "";
}

TEST(SparseMemory, ReportsGeometry) {
  SparseMemory memory(1 << 20, 1024);
  EXPECT_EQ(memory.size(), 1u << 20);
  EXPECT_EQ(memory.page_size(), 1024u);
  EXPECT_EQ(memory.pages_allocated(), 0u);
  EXPECT_EQ(memory.bytes_allocated(), 0u);
}

TEST(SparseMemory, DefaultPageSizeIs4KiB) {
  SparseMemory memory(1 << 20);
  EXPECT_EQ(memory.page_size(), 4096u);
}

TEST(SparseMemory, UntouchedMemoryReadsZerosWithoutAllocating) {
  SparseMemory memory(1 << 20);
  std::vector<std::uint8_t> buffer(10000, 0xCD);
  memory.read(12345, buffer.data(), buffer.size());
  EXPECT_THAT(buffer, Each(0));
  EXPECT_EQ(memory.pages_allocated(), 0u);
}

TEST(SparseMemory, WriteThenReadWithinOnePage) {
  SparseMemory memory(1 << 20);
  const auto data = pattern(100);
  memory.write(4096 + 10, data.data(), data.size());
  std::vector<std::uint8_t> back(data.size());
  memory.read(4096 + 10, back.data(), back.size());
  EXPECT_EQ(back, data);
  EXPECT_EQ(memory.pages_allocated(), 1u);
  EXPECT_EQ(memory.bytes_allocated(), 4096u);
}

TEST(SparseMemory, WriteSpanningPagesAllocatesEachPageOnce) {
  SparseMemory memory(1 << 20, 256);
  // Starts 16 bytes before a page boundary and ends 16 bytes into the fourth page.
  const auto data = pattern(16 + 256 * 2 + 16);
  memory.write(256 - 16, data.data(), data.size());
  EXPECT_EQ(memory.pages_allocated(), 4u);
  std::vector<std::uint8_t> back(data.size());
  memory.read(256 - 16, back.data(), back.size());
  EXPECT_EQ(back, data);
  memory.write(256 - 16, data.data(), data.size());
  EXPECT_EQ(memory.pages_allocated(), 4u);
}

TEST(SparseMemory, ReadSpanningWrittenAndUntouchedPages) {
  SparseMemory memory(1 << 20, 256);
  const auto data = pattern(256);
  memory.write(512, data.data(), data.size());
  std::vector<std::uint8_t> back(768, 0xEE);
  memory.read(256, back.data(), back.size());
  EXPECT_THAT(std::vector<std::uint8_t>(back.begin(), back.begin() + 256), Each(0));
  EXPECT_EQ(std::vector<std::uint8_t>(back.begin() + 256, back.begin() + 512), data);
  EXPECT_THAT(std::vector<std::uint8_t>(back.begin() + 512, back.end()), Each(0));
  EXPECT_EQ(memory.pages_allocated(), 1u);
}

TEST(SparseMemory, BytesAroundAWriteStayZero) {
  SparseMemory memory(1 << 16, 64);
  const std::uint8_t byte = 0x5A;
  memory.write(100, &byte, 1);
  std::vector<std::uint8_t> back(64);
  memory.read(64, back.data(), back.size());
  for (std::size_t i = 0; i < back.size(); ++i) {
    EXPECT_EQ(back[i], i == 36 ? 0x5A : 0) << "offset " << i;
  }
}

TEST(SparseMemory, OverwriteReplacesOldContents) {
  SparseMemory memory(1 << 16);
  const auto first = pattern(300, 1);
  const auto second = pattern(300, 99);
  memory.write(4000, first.data(), first.size());
  memory.write(4000, second.data(), second.size());
  std::vector<std::uint8_t> back(300);
  memory.read(4000, back.data(), back.size());
  EXPECT_EQ(back, second);
}

TEST(SparseMemory, FillSpansPages) {
  SparseMemory memory(1 << 16, 128);
  memory.fill(100, 0xAB, 300);
  std::vector<std::uint8_t> back(400);
  memory.read(0, back.data(), back.size());
  for (std::size_t i = 0; i < back.size(); ++i) {
    EXPECT_EQ(back[i], (i >= 100 && i < 400) ? 0xAB : 0) << "offset " << i;
  }
  EXPECT_EQ(memory.pages_allocated(), 4u);  // bytes 100..399 touch pages 0 to 3
}

TEST(SparseMemory, FillWithZeroAllocatesNothingOnUntouchedPages) {
  SparseMemory memory(1 << 20, 4096);
  memory.fill(0, 0, 1 << 20);
  EXPECT_EQ(memory.pages_allocated(), 0u);
}

TEST(SparseMemory, FillWithZeroClearsWrittenBytes) {
  SparseMemory memory(1 << 16, 256);
  memory.fill(0, 0xFF, 512);
  memory.fill(10, 0, 400);
  std::vector<std::uint8_t> back(512);
  memory.read(0, back.data(), back.size());
  for (std::size_t i = 0; i < back.size(); ++i) {
    EXPECT_EQ(back[i], (i >= 10 && i < 410) ? 0 : 0xFF) << "offset " << i;
  }
}

TEST(SparseMemory, HugeMemoryCostsOnlyTouchedPages) {
  SparseMemory memory(96 * kGiB);
  const auto data = pattern(64);
  const std::vector<std::uint64_t> addrs = {0, 17 * kGiB + 12345, 64 * kGiB, 96 * kGiB - 64};
  for (std::uint64_t addr : addrs) memory.write(addr, data.data(), data.size());
  EXPECT_EQ(memory.pages_allocated(), addrs.size());
  EXPECT_EQ(memory.bytes_allocated(), addrs.size() * 4096);
  for (std::uint64_t addr : addrs) {
    std::vector<std::uint8_t> back(data.size());
    memory.read(addr, back.data(), back.size());
    EXPECT_EQ(back, data) << "addr " << addr;
  }
  std::vector<std::uint8_t> untouched(64, 0xEE);
  memory.read(50 * kGiB, untouched.data(), untouched.size());
  EXPECT_THAT(untouched, Each(0));
}

TEST(SparseMemory, SizeNeedNotBeAMultipleOfThePageSize) {
  SparseMemory memory(1000, 256);
  const auto data = pattern(10);
  memory.write(990, data.data(), data.size());
  std::vector<std::uint8_t> back(10);
  memory.read(990, back.data(), back.size());
  EXPECT_EQ(back, data);
  EXPECT_THROW(memory.write(991, data.data(), data.size()), std::out_of_range);
}

TEST(SparseMemory, PageLargerThanMemoryIsAllowed) {
  SparseMemory memory(100, 4096);
  memory.fill(0, 7, 100);
  std::uint8_t last = 0;
  memory.read(99, &last, 1);
  EXPECT_EQ(last, 7);
}

TEST(SparseMemory, RejectsPageSizeThatIsNotAPowerOfTwo) {
  EXPECT_THROW(SparseMemory(1 << 20, 3000), std::invalid_argument);
  EXPECT_THROW(SparseMemory(1 << 20, 0), std::invalid_argument);
  try {
    SparseMemory memory(1 << 20, 3000);
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("page size 3000"));
    EXPECT_THAT(e.what(), HasSubstr("power of two"));
  }
}

TEST(SparseMemory, RejectsZeroSize) { EXPECT_THROW(SparseMemory(0), std::invalid_argument); }

TEST(SparseMemory, AccessPastTheEndThrows) {
  SparseMemory memory(1 << 20);
  std::uint8_t buffer[16] = {};
  EXPECT_THROW(memory.read((1 << 20) - 15, buffer, 16), std::out_of_range);
  EXPECT_THROW(memory.write((1 << 20) - 15, buffer, 16), std::out_of_range);
  EXPECT_THROW(memory.fill((1 << 20) - 15, 1, 16), std::out_of_range);
  EXPECT_THROW(memory.read(1 << 20, buffer, 1), std::out_of_range);
  EXPECT_NO_THROW(memory.read((1 << 20) - 16, buffer, 16));
  EXPECT_EQ(memory.pages_allocated(), 0u);
}

TEST(SparseMemory, AccessWhoseEndWrapsAroundThrows) {
  SparseMemory memory(1 << 20);
  std::uint8_t buffer[16] = {};
  EXPECT_THROW(memory.read(~std::uint64_t{0} - 4, buffer, 16), std::out_of_range);
}

TEST(SparseMemory, OutOfRangeMessageNamesAddressLengthAndSize) {
  SparseMemory memory(1 << 20);
  const std::string message = out_of_range_message(memory, 0x100000, 8);
  EXPECT_THAT(message, HasSubstr("0x100000"));
  EXPECT_THAT(message, HasSubstr("length 8"));
  EXPECT_THAT(message, HasSubstr("size 1048576"));
}

TEST(SparseMemory, ZeroLengthAccessAtTheEndIsAllowed) {
  SparseMemory memory(1 << 20);
  EXPECT_NO_THROW(memory.read(1 << 20, nullptr, 0));
  EXPECT_NO_THROW(memory.write(1 << 20, nullptr, 0));
  EXPECT_EQ(memory.pages_allocated(), 0u);
}

TEST(SparseMemory, PageIfPresentShowsWrittenPagesOnly) {
  SparseMemory memory(1 << 20, 4096);
  EXPECT_EQ(memory.page_if_present(8192 + 5), nullptr);
  const std::uint8_t byte = 42;
  memory.write(8192 + 5, &byte, 1);
  const std::uint8_t* page = memory.page_if_present(8192 + 100);
  ASSERT_NE(page, nullptr);
  EXPECT_EQ(page[5], 42);
  EXPECT_EQ(memory.page_if_present(4096), nullptr);
  EXPECT_THROW(memory.page_if_present(1 << 20), std::out_of_range);
}

TEST(SparseMemory, ClearDropsAllPages) {
  SparseMemory memory(1 << 20);
  memory.fill(0, 0xFF, 3 * 4096);
  // Touch the cache so clear() must forget the cached page too.
  std::uint8_t byte = 0;
  memory.read(0, &byte, 1);
  memory.clear();
  EXPECT_EQ(memory.pages_allocated(), 0u);
  memory.read(0, &byte, 1);
  EXPECT_EQ(byte, 0);
  EXPECT_EQ(memory.page_if_present(0), nullptr);
}

TEST(SparseMemory, InterleavedAccessesToManyPagesStayConsistent) {
  // Alternating between pages defeats the last-page cache, so this checks the table path.
  SparseMemory memory(64 * kGiB, 4096);
  std::vector<std::uint64_t> addrs;
  for (std::uint64_t i = 0; i < 64; ++i) addrs.push_back(i * kGiB + i * 4096 * 513 + i);
  for (std::size_t i = 0; i < addrs.size(); ++i) {
    const std::uint64_t value = i * 0x0101010101010101ULL;
    memory.write(addrs[i], &value, sizeof value);
  }
  for (std::size_t round = 0; round < 2; ++round) {
    for (std::size_t i = 0; i < addrs.size(); ++i) {
      std::uint64_t value = 0;
      memory.read(addrs[i], &value, sizeof value);
      EXPECT_EQ(value, i * 0x0101010101010101ULL) << "addr " << addrs[i];
    }
  }
  EXPECT_EQ(memory.pages_allocated(), addrs.size());
}

// Lent memory is read and written in place, replaces what the store held there, is never freed
// by the store, and reads as zero once detached.
TEST(SparseMemoryTest, AttachedPagesAreTheCallersMemory) {
  SparseMemory memory(1 << 20, 4096);
  const std::uint32_t old = 0xDEADBEEF;
  memory.write(8192, &old, 4);
  std::vector<std::uint8_t> lent(3 * 4096, 5);
  memory.attach(4096, lent.data(), lent.size());
  EXPECT_EQ(memory.pages_allocated(), 0u);  // the store's own page was dropped
  std::uint32_t word = 0;
  memory.read(8192, &word, 4);
  EXPECT_EQ(word, 0x05050505u);
  const std::uint32_t value = 0x12345678;
  memory.write(4096 + 4094, &value, 4);  // across two lent pages
  EXPECT_EQ(lent[4094], 0x78);
  EXPECT_EQ(lent[4097], 0x12);
  memory.detach(4096, lent.size());
  memory.read(8192, &word, 4);
  EXPECT_EQ(word, 0u);
  EXPECT_EQ(lent[0], 5);  // untouched by detach
  EXPECT_THROW(memory.attach(100, lent.data(), 4096), std::invalid_argument);
  EXPECT_THROW(memory.attach(1 << 20, lent.data(), 4096), std::out_of_range);
}

// Discarding frees the pages wholly inside the range, zeroes the edges of the pages it only
// touches (their other bytes kept) and leaves attached memory attached, zeroed.
TEST(SparseMemory, DiscardFreesWholePagesAndZeroesTheRest) {
  SparseMemory memory(1 << 20, 4096);
  const std::vector<std::uint8_t> bytes = pattern(4 * 4096);
  memory.write(0, bytes.data(), bytes.size());
  std::vector<std::uint8_t> lent(4096, 0xAB);
  memory.attach(8 * 4096, lent.data(), lent.size());
  EXPECT_EQ(memory.pages_allocated(), 4u);
  memory.discard(100, 3 * 4096);  // the end of page 0, pages 1 and 2, the start of page 3
  memory.discard(8 * 4096, 4096);
  EXPECT_EQ(memory.pages_allocated(), 2u);
  std::vector<std::uint8_t> back(bytes.size());
  memory.read(0, back.data(), back.size());
  for (std::size_t i = 0; i < back.size(); ++i) {
    ASSERT_EQ(back[i], i < 100 || i >= 100 + 3 * 4096 ? bytes[i] : 0) << i;
  }
  EXPECT_THAT(lent, Each(0));
  EXPECT_NE(memory.page_if_present(8 * 4096), nullptr);
  EXPECT_THROW(memory.discard(1 << 20, 1), std::out_of_range);
}

}  // namespace
}  // namespace podsim::core
