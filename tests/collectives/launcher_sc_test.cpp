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
#include "hw/core/kernel.h"
#include "hw/system/system_config.h"
#include "hw/system/topology.h"

namespace podsim::collectives {
namespace {

using ::testing::HasSubstr;

std::unique_ptr<system::SystemModel> model(const std::vector<std::string>& overrides = {}) {
  auto loaded = collectives::load_system_file("hls2", overrides);
  return std::make_unique<system::SystemModel>("system", loaded.config,
                                               system::build_topology(loaded.config),
                                               system::ModelOptions{1, true});
}

Command reduce(std::uint64_t dst, std::uint64_t a, std::uint64_t b, std::uint64_t count) {
  Command c;
  c.kind = Command::Kind::kReduce;
  c.job.type = core::DataType::kInt32;
  c.job.dst = dst;
  c.job.a = a;
  c.job.b = b;
  c.job.count = count;
  return c;
}

// Gaudi2's memory feeds four engines beside the NIC ((2.45 TB/s - 2 x 24 x 100GbE) / (3 x 125
// GB/s)): each 1 MiB reduction is cut into four slices, one per engine, and the second reads
// what the first wrote.
TEST(Launcher, ChainedReductionsRunSlicedOnTheDmaEnginesInOrder) {
  auto m = model();
  constexpr std::uint64_t kCount = 256 * 1024;
  const std::uint64_t a = 0, b = 4 << 20, c = 8 << 20, mid = 12 << 20, dst = 16 << 20;
  Program p;
  p.signals = 2;
  Command first = reduce(mid, a, b, kCount);
  first.done = 0;
  Command second = reduce(dst, mid, c, kCount);
  second.wait = 0;
  second.wait_count = 1;
  second.done = 1;
  p.streams = {{first, second}};
  std::vector<std::int32_t> x(kCount), y(kCount), z(kCount), out(kCount);
  std::iota(x.begin(), x.end(), 1);
  std::iota(y.begin(), y.end(), 1000);
  std::iota(z.begin(), z.end(), -77);
  auto bytes = [](std::vector<std::int32_t>& v) {
    return reinterpret_cast<std::uint8_t*>(v.data());
  };
  std::vector<bool> finished;
  sc_core::sc_start(sc_core::SC_ZERO_TIME);
  chip::Chip& chip = m->chip(0);
  chip.debug_write(a, bytes(x), 4 * kCount);
  chip.debug_write(b, bytes(y), 4 * kCount);
  chip.debug_write(c, bytes(z), 4 * kCount);
  Launcher& launcher = m->attached<Launcher>();
  auto code = std::make_shared<CommandCompiler>(
      std::vector<Program>{p}, [](int, std::uint32_t) { return -1; },
      std::vector<ChipGeometry>{launcher.geometry(0)});
  launcher.launch({0}, code, [&](int rank, bool ok) {
    EXPECT_EQ(rank, 0);
    finished.push_back(ok);
  });
  core::run_to_completion();
  EXPECT_EQ(finished, (std::vector<bool>{true}));
  chip.debug_read(dst, bytes(out), 4 * kCount);
  for (std::uint64_t i = 0; i < kCount; ++i) ASSERT_EQ(out[i], x[i] + y[i] + z[i]) << i;
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
