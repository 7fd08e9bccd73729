// What the driver writes into the page-table area is what the device MMU walks: mappings across
// hop-table boundaries, tables given back when emptied, a full area refused without a trace, and
// Gaudi1's 2 MiB pages ending at hop 3.
#include "driver/page_tables.h"

#include <gtest/gtest.h>

#include <cstring>
#include <map>

#include "hw/chip/mmu.h"

namespace podsim::driver {
namespace {

namespace pt = chip::page_table;
constexpr std::uint64_t kArea = 0x10000000, kVa = 0x1000000000000;

// Device memory as the page tables see it: written by the driver, read by the walk.
struct FakeHbm {
  std::map<std::uint64_t, std::uint8_t> bytes;
  PageTables::Writer writer() {
    return [this](std::uint64_t at, const void* data, std::uint32_t length) {
      for (std::uint32_t i = 0; i < length; ++i) {
        bytes[at + i] = static_cast<const std::uint8_t*>(data)[i];
      }
    };
  }
  pt::PteReader reader() const {
    return [this](std::uint64_t at) {
      std::uint64_t v = 0;
      for (int i = 0; i < 8; ++i) {
        const auto it = bytes.find(at + static_cast<std::uint64_t>(i));
        if (it != bytes.end()) v |= std::uint64_t{it->second} << (8 * i);
      }
      return v;
    };
  }
};

TEST(PageTables, MappingsAreWalkedAsWrittenAndTablesReturnWhenEmpty) {
  FakeHbm hbm;
  PageTables tables(kArea, 1 << 20, 16, hbm.writer());
  // Three pages straddling a 2 MiB boundary: two hop-4 tables under one hop-3 table.
  const std::uint64_t va = kVa + (2ull << 20) - 4096, pa = 0x8000100000;
  ASSERT_TRUE(tables.map(3, va, pa, 3 * 4096));
  EXPECT_EQ(tables.tables(), 5u);  // hops 1, 2, 3 and two at hop 4
  for (std::uint64_t off : {0ull, 4095ull, 4096ull, 3 * 4096ull - 1}) {
    const auto t = pt::walk(tables.hop0(3), va + off, hbm.reader());
    ASSERT_TRUE(t) << off;
    EXPECT_EQ(t->physical, pa + off);
    EXPECT_EQ(t->page_size, 4096u);
  }
  EXPECT_FALSE(pt::walk(tables.hop0(3), va + 3 * 4096, hbm.reader()));
  EXPECT_FALSE(pt::walk(tables.hop0(4), va, hbm.reader()));  // another ASID's tables
  tables.unmap(3, va, 4096);
  EXPECT_FALSE(pt::walk(tables.hop0(3), va, hbm.reader()));
  EXPECT_EQ(tables.tables(), 4u);  // the first hop-4 table went with its only entry
  tables.unmap(3, va + 4096, 2 * 4096);
  EXPECT_EQ(tables.tables(), 0u);
}

TEST(PageTables, AFullAreaRefusesAMappingAndKeepsNothingOfIt) {
  FakeHbm hbm;
  // Room for the hop-0 tables and three more: a mapping needing four fails.
  PageTables tables(kArea, 16 * 4096 + 3 * 4096, 16, hbm.writer());
  EXPECT_FALSE(tables.map(1, kVa, 0x8000000000, 4096));
  EXPECT_EQ(tables.tables(), 0u);
  EXPECT_FALSE(pt::walk(tables.hop0(1), kVa, hbm.reader()));
  EXPECT_THROW(PageTables(kArea, 16 * 4096, 16, hbm.writer()), std::invalid_argument);
}

TEST(PageTables, AHop3EntryMarkedLastMapsTwoMebibytes) {
  FakeHbm hbm;
  const std::uint64_t tables[4] = {0x1000, 0x2000, 0x3000, 0x4000};  // hops 0..3
  const std::uint64_t va = kVa + (6ull << 20) + 0x1234;
  const auto put = [&](std::uint64_t table, int hop, std::uint64_t pte) {
    hbm.writer()(table + 8 * pt::index(va, hop), &pte, 8);
  };
  for (int hop = 0; hop < 3; ++hop) put(tables[hop], hop, pt::make_pte(tables[hop + 1], false));
  put(tables[3], 3, pt::make_pte(0x8000400000, true));
  const auto t = pt::walk(tables[0], va, hbm.reader());
  ASSERT_TRUE(t);
  EXPECT_EQ(t->page_size, 2ull << 20);
  EXPECT_EQ(t->physical, 0x8000400000 + 0x1234);
}

}  // namespace
}  // namespace podsim::driver
