// The shim's mapped CBs: only those a CS names are copied into host memory before it.
#include "shim/cb_mappings.h"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <cstring>

namespace podsim::driver::shim {
namespace {

// Regression: every mapped CB of a file was copied before each CS (and each retry of one): with
// hl-thunk's 512 threads, 1024 CBs per submission, and its 512-thread DMA test ran for minutes.
TEST(CbMappings, ACsCopiesOnlyTheCbsItNames) {
  core::SparseMemory memory(1u << 20);
  std::array<std::uint8_t, 64> a{}, b{}, c{};
  a.fill(0xAA);
  b.fill(0xBB);
  c.fill(0xCC);
  CbMappings cbs;
  cbs.add(1, {a.data(), 0x1000, a.size()});
  cbs.add(2, {b.data(), 0x2000, b.size()});
  cbs.add(3, {c.data(), 0x3000, c.size()});
  hl_cs_chunk chunks[2] = {};
  chunks[0].cb_handle = 2;
  chunks[1].cb_handle = 0x7777;  // an internal queue's device address: no mapping
  hl_cs_args args{};
  args.in.chunks_execute = reinterpret_cast<std::uintptr_t>(chunks);
  args.in.num_chunks_execute = 2;
  IdentityUserMemory own(0);  // the chunks are this process's own memory
  cbs.copy_named(args, own, memory);

  std::array<std::uint8_t, 64> seen{};
  memory.read(0x2000, seen.data(), seen.size());
  EXPECT_EQ(seen, b);
  for (std::uint64_t untouched : {0x1000u, 0x3000u}) {
    memory.read(untouched, seen.data(), seen.size());
    EXPECT_EQ(seen, (std::array<std::uint8_t, 64>{})) << std::hex << untouched;
  }
  ASSERT_TRUE(cbs.remove(2).has_value());
  EXPECT_FALSE(cbs.remove(2).has_value());
}

// A CS whose chunk count is out of range or whose chunks cannot be read copies nothing (the
// driver refuses it).
TEST(CbMappings, ABadChunkListCopiesNothing) {
  core::SparseMemory memory(1u << 20);
  std::array<std::uint8_t, 16> a{};
  a.fill(1);
  CbMappings cbs;
  cbs.add(1, {a.data(), 0x1000, a.size()});
  hl_cs_chunk chunk{};
  chunk.cb_handle = 1;
  hl_cs_args args{};
  args.in.chunks_execute = reinterpret_cast<std::uintptr_t>(&chunk);
  args.in.num_chunks_execute = HL_MAX_JOBS_PER_CS + 1;
  IdentityUserMemory own(0);
  cbs.copy_named(args, own, memory);
  std::array<std::uint8_t, 16> seen{};
  memory.read(0x1000, seen.data(), seen.size());
  EXPECT_EQ(seen, (std::array<std::uint8_t, 16>{}));
}

}  // namespace
}  // namespace podsim::driver::shim
