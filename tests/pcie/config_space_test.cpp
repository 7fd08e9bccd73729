#include "hw/pcie/config_space.h"

#include <gtest/gtest.h>

#include <cstring>
#include <stdexcept>

namespace podsim::pcie {
namespace {

TEST(ConfigSpace, IdentifiesAGaudiAndAGaudi2) {
  const ConfigSpace g1(PcieEndpointConfig::gaudi1());
  EXPECT_EQ(g1.read32(reg::kVendorId), 0x1000u << 16 | 0x1da3u);
  EXPECT_EQ(g1.read32(reg::kRevision) >> 8, 0x120000u);
  EXPECT_EQ(g1.read32(reg::kCommand) >> 16 & 0x10u, 0x10u);  // capabilities list
  EXPECT_EQ(g1.read32(reg::kCapabilities), reg::kMsixCapability);
  const ConfigSpace g2(PcieEndpointConfig::gaudi2());
  EXPECT_EQ(g2.read32(reg::kVendorId) >> 16, 0x1020u);
  // MSI-X: table size N-1 in the control word, table and PBA in BAR 2.
  EXPECT_EQ(g2.read32(reg::kMsixCapability), 0x11u | 511u << 16);
  EXPECT_EQ(g2.read32(reg::kMsixTable), 2u);
  EXPECT_EQ(g2.read32(reg::kMsixPba), 0x2000u | 2u);
}

TEST(ConfigSpace, BarsAreSizedByWritingAllOnes) {
  ConfigSpace cs(PcieEndpointConfig::gaudi1());
  // BAR0: 64 MiB, 64-bit, not prefetchable.
  cs.write32(reg::kBar0, 0xFFFFFFFF);
  cs.write32(reg::kBar0 + 4, 0xFFFFFFFF);
  EXPECT_EQ(cs.read32(reg::kBar0), 0xFC000004u);
  EXPECT_EQ(cs.read32(reg::kBar0 + 4), 0xFFFFFFFFu);
  // BAR4: 32 GiB, prefetchable: no address bits in the low dword, 35 bits in the high one.
  cs.write32(reg::kBar0 + 16, 0xFFFFFFFF);
  cs.write32(reg::kBar0 + 20, 0xFFFFFFFF);
  EXPECT_EQ(cs.read32(reg::kBar0 + 16), 0x0000000Cu);
  EXPECT_EQ(cs.read32(reg::kBar0 + 20), 0xFFFFFFF8u);
  // Programming a base, then decoding through it once memory space is enabled.
  cs.write32(reg::kBar0, 0x04000000);
  cs.write32(reg::kBar0 + 4, 0x40);
  EXPECT_EQ(cs.bar_base(0), 0x4004000000ull);
  EXPECT_FALSE(cs.decode(0x4004000100, 4));
  cs.write32(reg::kCommand, reg::kCommandMemory);
  const auto hit = cs.decode(0x4004000100, 4);
  ASSERT_TRUE(hit);
  EXPECT_EQ(hit->bar, 0);
  EXPECT_EQ(hit->offset, 0x100u);
  EXPECT_FALSE(cs.decode(0x4008000000 - 2, 4));  // runs past the BAR
  // Unused BAR registers stay zero.
  cs.write32(reg::kBar0 + 24 - 4, 0xFFFFFFFF);
  EXPECT_EQ(cs.read32(reg::kBar0 + 20), 0xFFFFFFF8u);
}

TEST(ConfigSpace, CommandAndMsixControlKeepOnlyTheirWritableBits) {
  ConfigSpace cs(PcieEndpointConfig::gaudi1());
  cs.write32(reg::kCommand, 0xFFFFFFFF);
  EXPECT_EQ(cs.read32(reg::kCommand), 0x0010u << 16 | 0x0406u);
  EXPECT_TRUE(cs.memory_enabled());
  EXPECT_TRUE(cs.bus_master());
  const std::uint8_t byte = 0x80;  // enable, through a 1-byte write of the control's high byte
  EXPECT_TRUE(cs.write(reg::kMsixControl + 1, &byte, 1));
  EXPECT_TRUE(cs.msix_enabled());
  EXPECT_FALSE(cs.msix_function_masked());
  EXPECT_EQ(cs.read32(reg::kMsixCapability) >> 16 & 0x7FF, 31u);
  cs.write32(reg::kVendorId, 0);
  EXPECT_EQ(cs.read32(reg::kVendorId) & 0xFFFF, 0x1da3u);
  std::uint8_t four[4];
  EXPECT_FALSE(cs.read(2, four, 4));  // crosses a dword
}

TEST(MsixTable, EntriesResetMaskedAndHoldWhatTheHostWrites) {
  MsixTable t(32);
  EXPECT_EQ(t.table_bytes(), 512u);
  EXPECT_EQ(t.pba_bytes(), 8u);
  EXPECT_TRUE(t.masked(7));
  std::uint32_t entry[4] = {0xFEE00003, 0x0, 0x47, 0xFFFFFFFE};
  for (int i = 0; i < 4; ++i) {
    EXPECT_TRUE(
        t.table_access(true, 7 * 16 + 4 * i, reinterpret_cast<std::uint8_t*>(&entry[i]), 4));
  }
  EXPECT_FALSE(t.masked(7));
  EXPECT_EQ(t.message(7).address, 0xFEE00000u);
  EXPECT_EQ(t.message(7).data, 0x47u);
  t.set_pending(31, true);
  std::uint8_t pba[8];
  EXPECT_TRUE(t.pba_read(0, pba, 8));
  EXPECT_EQ(pba[3], 0x80);
  std::uint8_t byte = 0;
  EXPECT_FALSE(t.table_access(false, 0, &byte, 1));
  EXPECT_FALSE(t.table_access(false, 512, pba, 4));
  EXPECT_THROW(MsixTable(0), std::invalid_argument);
}

TEST(PcieEndpointConfig, RejectsBarsAndWindowsThatDoNotFit) {
  PcieEndpointConfig c = PcieEndpointConfig::gaudi1();
  c.bars[1].index = 1;  // overlaps BAR0's upper half
  EXPECT_THROW(ConfigSpace{c}, std::invalid_argument);
  c = PcieEndpointConfig::gaudi1();
  c.windows[0].size = core::ByteSize{128ull << 20};
  EXPECT_THROW(ConfigSpace{c}, std::invalid_argument);
  c = PcieEndpointConfig::gaudi1();
  c.msix.table_bar = 3;
  EXPECT_THROW(ConfigSpace{c}, std::invalid_argument);
  c = PcieEndpointConfig::gaudi1();
  c.bars[0].size = core::ByteSize{3000};
  EXPECT_THROW(ConfigSpace{c}, std::invalid_argument);
}

}  // namespace
}  // namespace podsim::pcie
