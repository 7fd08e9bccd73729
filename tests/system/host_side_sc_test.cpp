// A box's host and the PCIe tree under it, inside a whole system: the host reaches a chip's HBM
// through its BARs, and a chip's engines reach host memory through their host window.
#include <gtest/gtest.h>
#include <tlm_utils/simple_initiator_socket.h>

#include <numeric>
#include <vector>

#include "collectives/system_file.h"
#include "core/bulk_transfer.h"
#include "hw/system/host_side.h"
#include "hw/system/system_config.h"
#include "hw/system/system_model.h"
#include "tests/system/mini_driver.h"

namespace podsim::system {
namespace {

// Stands in for a chip engine: timed accesses through the chip's NoC.
struct Engine : sc_core::sc_module {
  tlm_utils::simple_initiator_socket<Engine> socket;
  tlm::tlm_generic_payload trans;
  explicit Engine(sc_core::sc_module_name name) : sc_module(name), socket("socket") {}
  bool write(std::uint64_t address, std::vector<std::uint8_t>& data) {
    core::TimePs done = 0;
    const bool ok =
        core::bulk_transfer(socket, trans, tlm::TLM_WRITE_COMMAND, address, data.data(),
                            static_cast<std::uint32_t>(data.size()), core::now_ps(), done);
    wait(sc_core::sc_time::from_value(done - core::now_ps()));
    return ok;
  }
};

TEST(HostSide, HostReachesChipMemoryThroughBarsAndChipsReachHostMemory) {
  const auto loaded = collectives::load_system_file("hls2", {});
  SystemModel model("system", loaded.config, build_topology(loaded.config), {1, true});
  HostSide& host = model.host(0);
  chip::Chip& chip5 = model.chip(5);
  Engine engine("engine");
  engine.socket.bind(chip5.noc().target_socket);
  std::vector<std::uint8_t> data(8192), to_host(4096);
  std::iota(data.begin(), data.end(), 1);
  std::iota(to_host.begin(), to_host.end(), 100);
  bool written = false;
  host.cpu().run([&](host::HostCpu& cpu) {
    MiniDriver driver(cpu, host, chip5, 5);
    driver.probe();
    EXPECT_EQ(cpu.write(driver.bar(4) + 0x10000, data.data(), 8192), tlm::TLM_OK_RESPONSE);  // HBM
    written = true;
  });
  sc_core::sc_spawn([&] {
    wait(sc_core::sc_time(50, sc_core::SC_US));  // after enumeration enabled bus mastering
    EXPECT_TRUE(engine.write(chip5.config().address_map.host.value + 0x200000, to_host));
  });
  sc_core::sc_start();
  ASSERT_TRUE(written);
  std::vector<std::uint8_t> back(8192);
  chip5.debug_read(0x10000, back.data(), back.size());
  EXPECT_EQ(back, data);
  std::vector<std::uint8_t> in_host(4096);
  host.memory().backing().read(0x200000, in_host.data(), in_host.size());
  EXPECT_EQ(in_host, to_host);
  EXPECT_STREQ(host.cpu().name(), "system.box0.host.cpu");
}

}  // namespace
}  // namespace podsim::system
