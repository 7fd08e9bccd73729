// Collectives' command buffers on real chips: a program's jobs run on the DMA engines through
// descriptors in the order its signals say, byte-exactly, and chips that cannot run them are
// refused with the reason.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <vector>

#include "collectives/launcher.h"
#include "collectives/system_file.h"
#include "core/kernel.h"
#include "hw/system/system_config.h"
#include "hw/system/topology.h"
#include "tests/collectives/chained_reductions.h"

namespace podsim::collectives {
namespace {

using ::testing::HasSubstr;

std::unique_ptr<system::SystemModel> model(const std::vector<std::string>& overrides = {}) {
  auto loaded = collectives::load_system_file("hls2", overrides);
  return std::make_unique<system::SystemModel>("system", loaded.config,
                                               system::build_topology(loaded.config),
                                               system::ModelOptions{1, true});
}

// Gaudi2's memory feeds four engines beside the NIC ((2.45 TB/s - 2 x 24 x 100GbE) / (3 x 125
// GB/s)): each 1 MiB reduction is cut into four slices, one per engine, and the second reads
// what the first wrote.
TEST(Launcher, ChainedReductionsRunSlicedOnTheDmaEnginesInOrder) {
  auto m = model();
  test::ChainedReductions work;
  std::vector<bool> finished;
  sc_core::sc_start(sc_core::SC_ZERO_TIME);
  chip::Chip& chip = m->chip(0);
  work.load(chip);
  Launcher& launcher = m->attached<Launcher>();
  auto code = std::make_shared<CommandCompiler>(
      std::vector<Program>{work.program}, [](int, std::uint32_t) { return -1; },
      std::vector<ChipGeometry>{launcher.geometry(0)});
  launcher.launch(
      {0}, code,
      [&](int rank, bool ok, core::TimePs) {
        EXPECT_EQ(rank, 0);
        finished.push_back(ok);
      },
      1000);
  core::run_to_completion();
  EXPECT_EQ(finished, (std::vector<bool>{true}));
  work.check(chip);
  EXPECT_EQ(chip.collective_engines(), 4);
  // Two slices per engine, and on DMA 0 the upload of the images from the host.
  for (int e = 0; e < chip.dma_engines(); ++e) {
    EXPECT_EQ(chip.dma(e).stats().jobs.value(), e == 0 ? 3u : e < 4 ? 2u : 0u) << "dma" << e;
  }
  EXPECT_EQ(chip.error_count(), 0u);
  EXPECT_EQ(launcher.waiting(), 0u);
}

TEST(Launcher, ChipsWithoutDmaEnginesOrSramAreRefused) {
  auto m = model({"chip.dma.engines=0", "chip.sram.size=0B"});
  Launcher& launcher = m->attached<Launcher>();
  try {
    launcher.geometry(0);
    FAIL() << "a chip without SRAM was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("chip.sram.size is 0"));
  }
}

}  // namespace
}  // namespace podsim::collectives
