// The chip top: its blocks under its name, the address map every access goes through, and host
// access by debug transport.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <tlm_utils/simple_initiator_socket.h>

#include <numeric>
#include <stdexcept>
#include <vector>

#include "hw/chip/chip.h"
#include "hw/core/event_queue.h"
#include "hw/system/system_config.h"
#include "hw/system/system_model.h"

namespace podsim::chip {
namespace {

using ::testing::HasSubstr;

ChipConfig gaudi2(std::uint64_t hbm_base = 0) {
  ChipConfig c = system::load_system("hls2", {}).config.chip;
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
  EXPECT_STREQ(chip.memory().name(), "chip3.hbm");
  EXPECT_STREQ(chip.noc().name(), "chip3.noc");
  EXPECT_STREQ(chip.sequencer().name(), "chip3.sequencer");
  EXPECT_EQ(chip.memory_size(), 96'000'000'000ull);
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
  chip.memory().backing().read(4096, raw.data(), raw.size());
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

TEST(Chip, TimingOnlyKeepsNoContentsAndSaysSo) {
  Standalone s("standalone", gaudi2(), false);
  Chip& chip = s.chip;
  sc_core::sc_start(sc_core::SC_ZERO_TIME);
  std::uint8_t byte = 1;
  EXPECT_THROW(chip.debug_write(0, &byte, 1), std::logic_error);
  EXPECT_EQ(chip.memory().backing().pages_allocated(), 0u);
}

// An engine's access outside the map is an address error: the job fails, the NoC counts it, and
// the chip goes on serving accesses inside the map.
TEST(Chip, AnEngineAccessOutsideTheMapFailsAndIsCounted) {
  Standalone s("standalone", gaudi2(), true);
  Chip& chip = s.chip;
  std::vector<bool> results;
  Job bad;
  bad.kind = Job::Kind::kCopy;
  bad.a = 0x7f00000000000;  // far outside
  bad.dst = 0;
  bad.count = 1024;
  Job good = bad;
  good.a = 1 << 20;
  DmaJobEngine engine(chip.dma(0));  // as the sequencer hands its jobs to a DMA engine
  engine.submit(bad, [&](bool ok) { results.push_back(ok); });
  engine.submit(good, [&](bool ok) { results.push_back(ok); });
  core::run_to_completion();
  EXPECT_EQ(results, (std::vector<bool>{false, true}));
  EXPECT_EQ(chip.noc().stats().address_errors.value(), 1u);
  // The good job's reads and writes went to HBM's port, all 4 KiB of each.
  const auto* hbm = chip.address_map().find("hbm");
  ASSERT_NE(hbm, nullptr);
  EXPECT_EQ(chip.noc().port_stats(hbm->port).bytes.value(), 2u * 4096u);
  EXPECT_EQ(chip.noc().port_stats(chip.address_map().find("sram")->port).accesses.value(), 0u);
}

// The sequencer's jobs run on the DMA engines: a stream's jobs in order (the second reduction
// reads what the first wrote), each large one cut into slices on the engines the memory feeds
// beside the NIC (Gaudi2: (2.45 TB/s - 2 x 24 x 100GbE) / (3 x 125 GB/s) = 4).
TEST(Chip, SequencerJobsRunInStreamOrderSlicedOverTheDmaEngines) {
  Standalone s("standalone", gaudi2(), true);
  Chip& chip = s.chip;
  constexpr std::uint64_t kCount = 256 * 1024;  // int32: 1 MiB, 16 engine windows
  const std::uint64_t a = 0, b = 4 << 20, c = 8 << 20, dst = 12 << 20;
  Job first;
  first.type = core::DataType::kInt32;
  first.count = kCount;
  first.dst = dst;
  first.a = a;
  first.b = b;
  Job second = first;
  second.a = dst;
  second.b = c;
  Program program;
  program.streams.resize(1);
  for (const Job& job : {first, second}) {
    Command command;
    command.kind = Command::Kind::kReduce;
    command.job = job;
    program.streams[0].push_back(command);
  }
  sc_core::sc_start(sc_core::SC_ZERO_TIME);
  std::vector<std::int32_t> x(kCount), y(kCount), z(kCount), out(kCount);
  std::iota(x.begin(), x.end(), 1);
  std::iota(y.begin(), y.end(), 1000);
  std::iota(z.begin(), z.end(), -77);
  const auto bytes = [](std::vector<std::int32_t>& v) {
    return reinterpret_cast<std::uint8_t*>(v.data());
  };
  chip.debug_write(a, bytes(x), 4 * kCount);
  chip.debug_write(b, bytes(y), 4 * kCount);
  chip.debug_write(c, bytes(z), 4 * kCount);
  std::vector<bool> finished;
  chip.sequencer().start(0, program, [&](bool ok) { finished.push_back(ok); });
  core::run_to_completion();
  EXPECT_EQ(finished, (std::vector<bool>{true}));
  chip.debug_read(dst, bytes(out), 4 * kCount);
  for (std::uint64_t i = 0; i < kCount; ++i) {
    ASSERT_EQ(out[i], x[i] + y[i] + z[i]) << "element " << i;
  }
  EXPECT_EQ(chip.collective_engines(), 4);
  for (int e = 0; e < chip.dma_engines(); ++e) {
    EXPECT_EQ(chip.dma(e).stats().jobs.value(), e < 4 ? 2u : 0u) << "dma" << e;
  }
}

TEST(Chip, ProgramWithJobsOnAChipWithoutDmaEnginesIsRejected) {
  ChipConfig config = gaudi2();
  config.dma.engines = 0;
  Standalone s("standalone", config, true);
  Program program;
  program.streams.resize(1);
  Command copy;
  copy.kind = Command::Kind::kCopy;
  copy.job.count = 16;
  program.streams[0].push_back(copy);
  try {
    s.chip.sequencer().start(0, program, nullptr);
    FAIL() << "a job without an engine was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("chip.dma.engines = 0"));
  }
}

TEST(Chip, SystemNestsChipsInBoxesAndHandsThemItsMode) {
  auto loaded = system::load_system(
      "hls2", {"boxes=2", "network.kind=leaf-spine", "network.leaf_down_ports=16"});
  system::SystemModel model("system", loaded.config, system::build_topology(loaded.config),
                            {1, false});
  EXPECT_STREQ(model.chip(11).name(), "system.box1.chip3");
  EXPECT_STREQ(model.nic(11).name(), "system.box1.chip3.nic");
  EXPECT_FALSE(model.chip(11).functional());
  EXPECT_FALSE(model.functional());
}

}  // namespace
}  // namespace podsim::chip
