// A few steps of a kernel driver, for tests that drive a chip through its host: place the
// BARs in the host's window for the chip, enable MSI-X, write registers through BAR2.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>

#include "hw/pcie/config_space.h"
#include "hw/system/host_side.h"

namespace podsim::system {

constexpr std::uint64_t kCfgWindow = 0x7FF8000000;  // where Gaudi1's BAR2 starts on chip [C7]

// The parts of a driver the system tests need: enumeration, MSI-X, register access through
// Gaudi1's BAR2.
class MiniDriver {
 public:
  MiniDriver(host::HostCpu& cpu, HostSide& host, const chip::Chip& chip, int local)
      : cpu_(cpu), bus_(host.bus(local)), window_(host.window_base(local)), chip_(chip) {}

  // BAR4 (HBM) at the window's start, BAR0 and BAR2 after it, each aligned to its size.
  void probe() {
    std::uint64_t next = window_;
    auto bars = chip_.config().pcie.endpoint.bars;
    std::sort(bars.begin(), bars.end(),
              [](const auto& a, const auto& b) { return a.size.bytes > b.size.bytes; });
    for (const auto& bar : bars) {
      bar_[bar.index] = next;
      next += bar.size.bytes;
      const std::uint32_t reg = pcie::reg::kBar0 + 4 * static_cast<std::uint32_t>(bar.index);
      cpu_.config_write32(bus_, reg, static_cast<std::uint32_t>(bar_[bar.index]));
      cpu_.config_write32(bus_, reg + 4, static_cast<std::uint32_t>(bar_[bar.index] >> 32));
    }
    cpu_.config_write32(bus_, pcie::reg::kCommand,
                        pcie::reg::kCommandMemory | pcie::reg::kCommandBusMaster);
  }
  void enable_msix(std::uint32_t vector, std::uint32_t data) {
    const auto& m = chip_.config().pcie.endpoint.msix;
    const std::uint64_t entry = bar_[m.table_bar] + m.table_offset + 16ull * vector;
    const std::uint32_t words[4] = {0xFEE00000u, 0, data, 0};  // address, data, unmasked
    for (int i = 0; i < 4; ++i) {
      EXPECT_EQ(cpu_.write(entry + 4 * i, &words[i], 4), tlm::TLM_OK_RESPONSE);
    }
    std::uint32_t cap = 0;
    cpu_.config_read32(bus_, pcie::reg::kMsixCapability, cap);
    cpu_.config_write32(bus_, pcie::reg::kMsixCapability,
                        cap | std::uint32_t{pcie::reg::kMsixEnable} << 16);
  }
  std::uint64_t bar(int index) const { return bar_[index]; }
  void write32(std::uint64_t chip_register, std::uint32_t value) {
    EXPECT_EQ(cpu_.write(bar_[2] + (chip_register - kCfgWindow), &value, 4), tlm::TLM_OK_RESPONSE)
        << std::hex << chip_register;
  }

 private:
  host::HostCpu& cpu_;
  int bus_;
  std::uint64_t window_;
  const chip::Chip& chip_;
  std::uint64_t bar_[6] = {};
};

}  // namespace podsim::system
