// The chip top: its blocks under its name, the address map every access goes through, and host
// access by debug transport.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <tlm_utils/simple_initiator_socket.h>

#include <cstring>
#include <numeric>
#include <stdexcept>
#include <vector>

#include "collectives/system_file.h"
#include "core/event_queue.h"
#include "hw/chip/chip.h"
#include "hw/system/system_config.h"
#include "hw/system/system_model.h"

namespace podsim::chip {
namespace {

using ::testing::HasSubstr;

ChipConfig gaudi2(std::uint64_t hbm_base = 0) {
  ChipConfig c = collectives::load_system_file("hls2", {}).config.chip;
  c.address_map.hbm.value = hbm_base;
  return c;
}

// A chip on its own: its PCIe endpoint's upstream requests go to a plain host memory, and a
// socket stands where the host's requests would come from.
struct Standalone : sc_core::sc_module {
  Chip chip;
  core::MemoryTarget host;
  tlm_utils::simple_initiator_socket<Standalone> host_requests;
  Standalone(sc_core::sc_module_name name, const ChipConfig& config, bool functional)
      : sc_module(name),
        chip("chip", config, 24, functional),
        host("host", host_memory(functional)),
        host_requests("host_requests") {
    chip.pcie().to_host.bind(host.target_socket);
    host_requests.bind(chip.pcie().from_host);
  }
  static core::MemoryTargetConfig host_memory(bool functional) {
    core::MemoryTargetConfig c;
    c.functional = functional;
    return c;
  }
};

TEST(Chip, NamesItsBlocksUnderItself) {
  Chip chip("chip3", gaudi2(), 24, true);  // elaboration never completes: nothing to bind
  EXPECT_STREQ(chip.nic().name(), "chip3.nic");
  ASSERT_NE(chip.hbm(), nullptr);
  EXPECT_STREQ(chip.hbm()->name(), "chip3.hbm");
  EXPECT_EQ(chip.host_memory(), nullptr);
  EXPECT_STREQ(chip.noc().name(), "chip3.noc");
  EXPECT_STREQ(chip.nic_doorbell().name(), "chip3.nic_doorbell");
  EXPECT_EQ(chip.memory_size(), 96ull << 30);
}

TEST(Chip, HostAccessGoesThroughTheAddressMap) {
  const std::uint64_t base = 0x1000000000;
  Standalone s("standalone", gaudi2(base), true);
  Chip& chip = s.chip;
  std::vector<std::uint8_t> data(10000), back(10000);
  EXPECT_THROW(chip.debug_write(base, data.data(), 1), std::logic_error);  // not yet elaborated
  sc_core::sc_start(sc_core::SC_ZERO_TIME);
  std::iota(data.begin(), data.end(), 7);
  chip.debug_write(base + 4096, data.data(), data.size());
  chip.debug_read(base + 4096, back.data(), back.size());
  EXPECT_EQ(back, data);
  // The memory itself holds them at the offset the map gives.
  std::vector<std::uint8_t> raw(data.size());
  chip.hbm()->backing().read(4096, raw.data(), raw.size());
  EXPECT_EQ(raw, data);
  try {
    chip.debug_read(0, back.data(), 16);  // below the HBM region
    FAIL() << "an unmapped read was accepted";
  } catch (const std::out_of_range& e) {
    EXPECT_THAT(e.what(), HasSubstr("standalone.chip"));
    EXPECT_THAT(e.what(), HasSubstr("0x0"));
  }
  EXPECT_THROW(chip.debug_write(base + chip.memory_size() - 8, data.data(), 16), std::out_of_range);
}

// An engine's access outside the map is an address error: the job fails, the NoC counts it, and
// the chip goes on serving accesses inside the map.
TEST(Chip, AnEngineAccessOutsideTheMapFailsAndIsCounted) {
  Standalone s("standalone", gaudi2(), true);
  Chip& chip = s.chip;
  std::vector<bool> results;
  const auto bad = dma::DmaJob::copy(0x7f00000000000, 0, 4096);  // a source far outside
  const auto good = dma::DmaJob::copy(1 << 20, 0, 4096);
  chip.dma(0).submit(bad, [&](bool ok) { results.push_back(ok); });
  chip.dma(0).submit(good, [&](bool ok) { results.push_back(ok); });
  core::run_to_completion();
  EXPECT_EQ(results, (std::vector<bool>{false, true}));
  EXPECT_EQ(chip.noc().stats().address_errors.value(), 1u);
  // The good job's reads and writes went to HBM's port, all 4 KiB of each.
  const auto* hbm = chip.address_map().find("hbm");
  ASSERT_NE(hbm, nullptr);
  EXPECT_EQ(chip.noc().port_stats(hbm->port).bytes.value(), 2u * 4096u);
  EXPECT_EQ(chip.noc().port_stats(chip.address_map().find("sram")->port).accesses.value(), 0u);
}

// In a timing-only system the memories still keep what is written with data (command buffers,
// descriptors, the driver's page tables), while payloads without data pass for their time.
TEST(Chip, TimingOnlyMemoriesKeepWhatIsWrittenWithData) {
  Standalone s("standalone", gaudi2(), false);
  Chip& chip = s.chip;
  sc_core::sc_start(sc_core::SC_ZERO_TIME);
  const std::uint64_t sram = chip.config().address_map.sram.value;
  std::uint8_t in[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}, out[16] = {};
  chip.debug_write(sram + 64, in, sizeof in);
  chip.debug_read(sram + 64, out, sizeof out);
  EXPECT_EQ(std::memcmp(in, out, sizeof in), 0);
  std::uint8_t table[16] = {};
  chip.debug_write(4096, in, sizeof in);
  chip.debug_read(4096, table, sizeof table);
  EXPECT_EQ(std::memcmp(in, table, sizeof in), 0);
  EXPECT_FALSE(chip.hbm()->functional());
  EXPECT_THROW(chip.hbm()->backing(), std::logic_error);  // no payloads to load or check
  // A DMA engine's payload (no bytes in timing-only mode) may still go to the SRAM.
  std::vector<bool> results;
  chip.dma(0).submit(dma::DmaJob::copy(0, sram + 4096, 4096),
                     [&](bool ok) { results.push_back(ok); });
  core::run_to_completion();
  EXPECT_EQ(results, (std::vector<bool>{true}));
}

TEST(Chip, SystemNestsChipsInBoxesAndHandsThemItsMode) {
  auto loaded = collectives::load_system_file(
      "hls2", {"boxes=2", "network.kind=leaf-spine", "network.leaf_down_ports=16"});
  system::SystemModel model("system", loaded.config, system::build_topology(loaded.config),
                            {1, false});
  EXPECT_STREQ(model.chip(11).name(), "system.box1.chip3");
  EXPECT_STREQ(model.nic(11).name(), "system.box1.chip3.nic");
  EXPECT_FALSE(model.chip(11).functional());
  EXPECT_FALSE(model.functional());
}

TEST(Chip, ANetworkSideChipHasNoEnginesButSpreadsCollectiveJobsAsAFullOne) {
  Chip full("full", gaudi2(), 24, false);
  Chip side("side", gaudi2(), 24, false, Chip::Blocks::kNetworkSide);
  EXPECT_GT(full.dma_engines(), 0);
  EXPECT_GT(full.tpc_cores(), 0);
  EXPECT_EQ(side.dma_engines(), 0);
  EXPECT_EQ(side.tpc_cores(), 0);
  EXPECT_EQ(side.mme_engines(), 0);
  EXPECT_THROW(side.sync_manager(0), std::out_of_range);
  EXPECT_EQ(side.collective_engines(), full.collective_engines());
  EXPECT_GT(side.collective_engines(), 0);
  EXPECT_STREQ(side.nic().name(), "side.nic");
  ASSERT_NE(side.hbm(), nullptr);
}

TEST(Chip, ACoarseSystemBuildsItsChipsNetworkSide) {
  auto loaded = collectives::load_system_file("hls2", {});
  system::ModelOptions options;
  options.functional = false;
  options.chips = system::ChipModel::kCoarse;
  system::SystemModel model("system", loaded.config, system::build_topology(loaded.config),
                            options);
  EXPECT_EQ(model.chip(3).dma_engines(), 0);
  EXPECT_EQ(model.chip(3).tpc_cores(), 0);
  EXPECT_EQ(model.chip(3).config().dma.engines, loaded.config.chip.dma.engines);
}

}  // namespace
}  // namespace podsim::chip
