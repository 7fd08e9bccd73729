#include "hw/hbm/address_map.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>
#include <set>
#include <stdexcept>

namespace podsim::hbm {
namespace {

TEST(AddressDecoder, EncodeInvertsDecodeEverywhere) {
  const HbmConfig c = hbm2e();  // six stacks: a field whose count is not a power of two
  const AddressDecoder d(c.geometry, c.address_map);
  std::mt19937_64 rng(7);
  for (int i = 0; i < 10000; ++i) {
    const std::uint64_t a = rng() % d.capacity() / 32 * 32;
    const Location l = d.decode(a);
    ASSERT_EQ(d.encode(l), a);
    ASSERT_LT(l.stack, 6);
    ASSERT_LT(l.row, 65536u);
    ASSERT_LT(l.column, 32u);
  }
}

TEST(AddressDecoder, BurstsRotateOverBankGroupsThenChunksOverPseudoChannels) {
  const HbmConfig c = hbm2e();
  const AddressDecoder d(c.geometry, c.address_map);
  EXPECT_EQ(d.chunk_bytes(), 256u);
  for (int i = 0; i < 8; ++i) {
    const Location l = d.decode(static_cast<std::uint64_t>(i) * 32);
    EXPECT_EQ(l.unit, 0);
    EXPECT_EQ(l.bank_group, i % 4);
    EXPECT_EQ(l.column, static_cast<std::uint32_t>(i / 4));
  }
  std::set<int> units;
  for (std::uint64_t a = 0; a < 96 * 256; a += 256) units.insert(d.decode(a).unit);
  EXPECT_EQ(units.size(), 96u);              // one chunk on each pseudo-channel of all six stacks
  const Location next = d.decode(96 * 256);  // then the rest of the same rows
  EXPECT_EQ(next.unit, 0);
  EXPECT_EQ(next.bank, 0);
  EXPECT_EQ(next.column, 2u);
  const Location next_bank = d.decode(96 * 256 * 16);  // rows full: the next bank
  EXPECT_EQ(next_bank.unit, 0);
  EXPECT_EQ(next_bank.bank, 1);
  EXPECT_EQ(next_bank.column, 0u);
  EXPECT_EQ(next_bank.row, 0u);
  EXPECT_EQ(d.rotation_period(), 4);
}

TEST(AddressDecoder, AdvancingAChunkEqualsDecodingTheNextOne) {
  for (const char* chip : {"gaudi1", "gaudi2"}) {
    const HbmConfig c = preset_for_chip(chip);
    const AddressDecoder d(c.geometry, c.address_map);
    std::mt19937_64 rng(3);
    for (int i = 0; i < 2000; ++i) {
      const std::uint64_t a = rng() % (d.capacity() / d.chunk_bytes() - 1) * d.chunk_bytes();
      Location l = d.decode(a);
      d.advance_chunk(l);
      const Location expected = d.decode(a + d.chunk_bytes());
      ASSERT_EQ(l, expected) << chip << " " << a;
      ASSERT_EQ(l.unit, expected.unit);
    }
  }
}

TEST(AddressDecoder, InterleaveAndLayoutAreConfigurable) {
  HbmConfig c = hbm2();
  c.address_map.layout = "column,pseudo_channel,channel,stack,bank_group,bank,row";
  c.address_map.interleave = core::ByteSize{1024};  // a whole row per pseudo-channel
  const AddressDecoder d(c.geometry, c.address_map);
  EXPECT_EQ(d.decode(1023).unit, 0);
  EXPECT_EQ(d.decode(1023).column, 31u);
  EXPECT_EQ(d.decode(1024).unit, 1);
  c.address_map.interleave = core::ByteSize{512};
  EXPECT_THROW(AddressDecoder(c.geometry, c.address_map), std::invalid_argument);
  c.address_map.layout = "bank_group,bank_group,column,row";
  EXPECT_THROW(AddressDecoder(c.geometry, c.address_map), std::invalid_argument);
}

}  // namespace
}  // namespace podsim::hbm
