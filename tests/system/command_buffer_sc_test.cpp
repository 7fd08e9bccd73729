// The chip as a driver sees it, inside a whole hls1 system: the host programs a DMA QMAN through
// the chip's configuration BAR, puts a command buffer and its descriptor in host memory, rings
// the doorbell, and waits for the MSI-X the buffer's last packets raise. The data goes host ->
// HBM -> SRAM -> host through the DMA engine, the PCIe links and the NoC.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <numeric>
#include <vector>

#include "collectives/system_file.h"
#include "core/kernel.h"
#include "hw/chip/qman_ring.h"
#include "hw/chip/spec/packet_codec.h"
#include "hw/pcie/config_space.h"
#include "hw/system/system_config.h"
#include "hw/system/system_model.h"
#include "podsim/spec/gaudi1.h"
#include "tests/system/mini_driver.h"

namespace podsim::system {
namespace {

using chip::spec::Packet;

constexpr int kChip = 2;
constexpr std::uint32_t kMsiData = 0xC0DE, kVector = 3;
// Host physical memory the test uses.
constexpr std::uint64_t kSource = 0x100000, kResult = 0x400000, kBuffer = 0x700000;
constexpr std::uint64_t kRing = 0x800000, kCompletion = 0x900000, kEvents = 0xA00000;
constexpr std::uint64_t kHbm = 0x2000000, kSram = 0x7FF0001000;
constexpr std::uint32_t kBytes = 1 << 20;

// What the driver's QMAN set-up writes: stream 0's ring, LIN_DMA's engine offsets, enables.
void init_dma_qman(MiniDriver& d, std::uint64_t qman, std::uint64_t ring) {
  d.write32(PODSIM_GAUDI1_QMAN_PQ_BASE_LO(qman, 0), static_cast<std::uint32_t>(ring));
  d.write32(PODSIM_GAUDI1_QMAN_PQ_BASE_HI(qman, 0), static_cast<std::uint32_t>(ring >> 32));
  d.write32(PODSIM_GAUDI1_QMAN_PQ_SIZE(qman, 0), 4);  // 16 entries
  for (int cp = 0; cp < static_cast<int>(PODSIM_GAUDI1_QMAN_CPS); ++cp) {
    d.write32(PODSIM_GAUDI1_QMAN_CP_LDMA_TSIZE_OFFSET(qman, cp),
              PODSIM_GAUDI1_DMA_CORE_DST_TSIZE_0_OFFSET);
    d.write32(PODSIM_GAUDI1_QMAN_CP_LDMA_SRC_BASE_LO_OFFSET(qman, cp),
              PODSIM_GAUDI1_DMA_CORE_SRC_BASE_LO_OFFSET);
    d.write32(PODSIM_GAUDI1_QMAN_CP_LDMA_DST_BASE_LO_OFFSET(qman, cp),
              PODSIM_GAUDI1_DMA_CORE_DST_BASE_LO_OFFSET);
  }
  d.write32(PODSIM_GAUDI1_QMAN_GLBL_CFG0(qman), podsim_gaudi1_make_qman_glbl_cfg0(0xF, 0x1F, 0x1F));
}

Packet lin_dma(std::uint64_t src, std::uint64_t dst, std::uint32_t bytes, bool engine_barrier) {
  Packet p("LIN_DMA");
  p.set("tsize", bytes).set("lin", 1).set("src_addr", src).set("dst_addr", dst);
  p.barriers(engine_barrier, true, false);
  return p;
}

Packet msg_prot(std::uint64_t address, std::uint32_t value, bool engine_barrier) {
  Packet p("MSG_PROT");
  p.set("addr", address).set("value", value);
  p.barriers(engine_barrier, true, true);
  return p;
}

struct DriverRun {
  collectives::LoadedSystemFile loaded = collectives::load_system_file("hls1", {});
  SystemModel model{"system", loaded.config, build_topology(loaded.config), {1, true}};
  HostSide& host = model.host(0);
  chip::Chip& chip = model.chip(kChip);
  std::uint64_t window = chip.config().address_map.host.value;  // host memory, seen by the chip
  std::vector<core::TimePs> interrupts;

  // Puts `packets` in host memory as one command buffer behind descriptor `slot`.
  void queue(const std::vector<Packet>& packets, std::uint32_t slot) {
    const auto bytes = chip::spec::PacketCodec().encode(packets);
    const std::uint64_t buffer = kBuffer + 0x10000ull * slot;
    host.memory().backing().write(buffer, bytes.data(), bytes.size());
    chip::PqEntry entry;
    entry.address = window + buffer;
    entry.length = static_cast<std::uint32_t>(bytes.size());
    std::uint8_t raw[PODSIM_GAUDI1_PQ_ENTRY_SIZE];
    chip::encode_pq_entry(entry, raw);
    host.memory().backing().write(kRing + sizeof raw * slot, raw, sizeof raw);
  }
  void start(std::function<void(MiniDriver&)> after_doorbells) {
    host.cpu().on_interrupt(kMsiData, [this] { interrupts.push_back(core::now_ps()); });
    host.cpu().run([this, after_doorbells](host::HostCpu& cpu) {
      MiniDriver d(cpu, host, chip, kChip);
      d.probe();
      d.enable_msix(kVector, kMsiData);
      init_dma_qman(d, PODSIM_GAUDI1_DMA0_QM_BASE, window + kRing);
      after_doorbells(d);
    });
    sc_core::sc_start();
  }
};

TEST(CommandBuffer, DoorbellCopiesHostToHbmToSramToHostAndRaisesMsix) {
  DriverRun r;
  std::vector<std::uint8_t> data(kBytes);
  std::iota(data.begin(), data.end(), 11);
  r.host.memory().backing().write(kSource, data.data(), data.size());
  const std::uint64_t msi = PODSIM_GAUDI1_PCIE_MSI_BASE + 4 * kVector;
  r.queue({lin_dma(r.window + kSource, kHbm, kBytes, false), lin_dma(kHbm, kSram, kBytes, true),
           lin_dma(kSram, r.window + kResult, kBytes, true),
           msg_prot(r.window + kCompletion, 1, true), msg_prot(msi, 1, false)},
          0);
  core::TimePs rang = 0;
  r.start([&](MiniDriver& d) {
    rang = core::now_ps();
    d.write32(PODSIM_GAUDI1_QMAN_PQ_PI(PODSIM_GAUDI1_DMA0_QM_BASE, 0), 1);
  });
  ASSERT_EQ(r.interrupts.size(), 1u);
  std::vector<std::uint8_t> got(kBytes);
  r.host.memory().backing().read(kResult, got.data(), got.size());
  EXPECT_TRUE(got == data) << "host result differs";
  r.chip.debug_read(kHbm, got.data(), got.size());
  EXPECT_TRUE(got == data) << "HBM copy differs";
  r.chip.debug_read(kSram, got.data(), got.size());
  EXPECT_TRUE(got == data) << "SRAM copy differs";
  std::uint32_t completion = 0;
  r.host.memory().backing().read(kCompletion, reinterpret_cast<std::uint8_t*>(&completion), 4);
  EXPECT_EQ(completion, 1u);
  // Two PCIe crossings of 1 MiB at about 25 GB/s each: the interrupt comes after 80 us.
  const double us = static_cast<double>(r.interrupts[0] - rang) * 1e-6;
  EXPECT_GT(us, 80.0);
  EXPECT_LT(us, 200.0);
  EXPECT_EQ(r.chip.error_count(), 0u);
  EXPECT_EQ(r.chip.dma(0).stats().jobs.value(), 3u);
}

// An undefined opcode and an access outside the address map each raise an error event: the
// chip records it, writes it to the host's event queue and rings its vector; the stream drops
// that buffer and runs the next one.
TEST(CommandBuffer, ErrorsReachTheHostsEventQueueAndTheChipKeepsRunning) {
  DriverRun r;
  r.chip.set_event_queue({r.window + kEvents, 8, static_cast<int>(kVector)});
  std::vector<std::uint8_t> undefined(8, 0);
  undefined[7] = 0x1F;  // opcode 31 in word 1 bits 24-28
  const auto bytes = undefined;
  r.host.memory().backing().write(kBuffer, bytes.data(), bytes.size());
  chip::PqEntry entry;
  entry.address = r.window + kBuffer;
  entry.length = 8;
  std::uint8_t raw[PODSIM_GAUDI1_PQ_ENTRY_SIZE];
  chip::encode_pq_entry(entry, raw);
  r.host.memory().backing().write(kRing, raw, sizeof raw);
  r.queue({lin_dma(0x7F00000000000, kHbm, 4096, false)}, 1);  // outside the map
  r.queue({msg_prot(r.window + kCompletion, 7, true)}, 2);    // still runs
  r.start([&](MiniDriver& d) {
    d.write32(PODSIM_GAUDI1_QMAN_PQ_PI(PODSIM_GAUDI1_DMA0_QM_BASE, 0), 3);
  });
  ASSERT_EQ(r.chip.errors().size(), 2u);
  EXPECT_EQ(r.chip.errors()[0].kind, core::ErrorEvent::Kind::kUndefinedOpcode);
  EXPECT_EQ(r.chip.errors()[0].block, "system.box0.chip2.dma0_qman");
  EXPECT_EQ(r.chip.errors()[1].kind, core::ErrorEvent::Kind::kAddressError);
  EXPECT_EQ(r.chip.errors()[1].address, 0x7F00000000000u);
  std::uint32_t completion = 0;
  r.host.memory().backing().read(kCompletion, reinterpret_cast<std::uint8_t*>(&completion), 4);
  EXPECT_EQ(completion, 7u);
  EXPECT_EQ(r.interrupts.size(), 2u);  // one per event written
  std::uint32_t kinds[2] = {};
  r.host.memory().backing().read(kEvents, reinterpret_cast<std::uint8_t*>(&kinds[0]), 4);
  r.host.memory().backing().read(kEvents + 16, reinterpret_cast<std::uint8_t*>(&kinds[1]), 4);
  EXPECT_EQ(kinds[0], static_cast<std::uint32_t>(core::ErrorEvent::Kind::kUndefinedOpcode));
  EXPECT_EQ(kinds[1], static_cast<std::uint32_t>(core::ErrorEvent::Kind::kAddressError));
}

}  // namespace
}  // namespace podsim::system
