// The driver's probe on a modeled Gaudi box: it finds the chip's BARs and MSI-X table through
// configuration requests alone, places the BARs in the host window so that memory reaches the
// chip, and refuses a device it does not bind to.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "collectives/system_file.h"
#include "driver/pci_probe.h"
#include "hw/system/host_side.h"
#include "hw/system/system_model.h"

namespace podsim::driver {
namespace {

std::unique_ptr<system::SystemModel> gaudi_box(std::vector<std::string> overrides = {}) {
  const auto loaded = collectives::load_system_file("hls1", overrides);
  return std::make_unique<system::SystemModel>("system", loaded.config,
                                               system::build_topology(loaded.config),
                                               system::ModelOptions{1, true});
}

TEST(PciProbe, FindsTheBarsAndMsixAndOpensMemoryThroughThem) {
  auto model = gaudi_box();
  system::HostSide& host = model->host(0);
  chip::Chip& chip = model->chip(3);
  const ProbeWindow window{host.window_base(3), host.window_size()};
  std::optional<PciFunction> found;
  std::vector<std::uint8_t> data(8192);
  std::iota(data.begin(), data.end(), 7);
  host.cpu().run([&](host::HostCpu& cpu) {
    found = probe(cpu, host.bus(3), window);
    const std::uint64_t hbm = found->bar(4).address;  // Gaudi1's BAR4: HBM from its start [C7]
    EXPECT_EQ(cpu.write(hbm + 0x4000, data.data(), 8192), tlm::TLM_OK_RESPONSE);
  });
  sc_core::sc_start();
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->vendor_id, kHabanaVendorId);
  EXPECT_EQ(found->device_id, kGaudiDeviceId);
  const auto& endpoint = chip.config().pcie.endpoint;
  ASSERT_EQ(found->bars.size(), endpoint.bars.size());
  for (const auto& want : endpoint.bars) {
    const PciBar& got = found->bar(want.index);
    EXPECT_EQ(got.size, want.size.bytes) << "BAR" << want.index;
    EXPECT_EQ(got.is_64bit, want.is_64bit) << "BAR" << want.index;
    EXPECT_EQ(got.address % got.size, 0u) << "BAR" << want.index;
    EXPECT_GE(got.address, window.base);
    EXPECT_LE(got.address + got.size, window.base + window.size);
  }
  EXPECT_EQ(found->msix_vectors, endpoint.msix.vectors);
  EXPECT_EQ(found->msix_table_bar, endpoint.msix.table_bar);
  EXPECT_EQ(found->msix_table_offset, endpoint.msix.table_offset);
  std::vector<std::uint8_t> back(8192);
  chip.debug_read(0x4000, back.data(), back.size());
  EXPECT_EQ(back, data);
}

TEST(PciProbe, RefusesADeviceItDoesNotBindTo) {
  auto model = gaudi_box({"chip.pcie.endpoint.device_id=0x1030"});
  system::HostSide& host = model->host(0);
  std::string error;
  host.cpu().run([&](host::HostCpu& cpu) {
    try {
      probe(cpu, host.bus(0), {host.window_base(0), host.window_size()});
    } catch (const std::runtime_error& e) {
      error = e.what();
    }
  });
  sc_core::sc_start();
  EXPECT_THAT(error, ::testing::HasSubstr("PCI bus 1: device 1da3:1030 is not one the driver"));
}

TEST(PciProbe, RefusesBarsTheHostWindowCannotHold) {
  auto model = gaudi_box();
  system::HostSide& host = model->host(0);
  std::string error;
  host.cpu().run([&](host::HostCpu& cpu) {
    try {
      probe(cpu, host.bus(0), {host.window_base(0), 1 << 20});
    } catch (const std::runtime_error& e) {
      error = e.what();
    }
  });
  sc_core::sc_start();
  EXPECT_THAT(error, ::testing::HasSubstr("does not fit the host window"));
}

}  // namespace
}  // namespace podsim::driver
