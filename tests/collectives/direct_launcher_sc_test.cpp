// The coarse chips' launcher: jobs in the order a program's signals and a stream's byte ranges
// say, at the engines' rate, with their bytes reduced in memory; writes through the NIC raising
// the peer's signal; malformed programs refused.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <vector>

#include "collectives/direct_launcher.h"
#include "collectives/schedule.h"
#include "collectives/system_file.h"
#include "core/kernel.h"
#include "hw/chip/chip.h"
#include "hw/system/system_config.h"
#include "hw/system/topology.h"
#include "tests/collectives/chained_reductions.h"

namespace podsim::collectives {
namespace {

using ::testing::HasSubstr;

std::unique_ptr<system::SystemModel> model() {
  auto loaded = collectives::load_system_file("hls2", {});
  system::ModelOptions options;
  options.chips = system::ChipModel::kCoarse;
  return std::make_unique<system::SystemModel>("system", loaded.config,
                                               system::build_topology(loaded.config), options);
}

using test::ChainedReductions;

// Two chained 1 MiB reductions on Gaudi2: four engines of 125 GB/s, each job cut in four slices
// of 256 KiB (2097152 ps each), a slice costing a read and a write through the NoC (10 ns) to
// memory (100 ns) more: 220 ns.
TEST(DirectLauncher, ChainedReductionsTakeTheEnginesRateAndReduceTheBytes) {
  auto m = model();
  test::ChainedReductions work;
  sc_core::sc_start(sc_core::SC_ZERO_TIME);
  chip::Chip& chip = m->chip(0);
  work.load(chip);
  DirectLauncher& launcher = m->attached<DirectLauncher>();
  core::TimePs ended = 0, noticed = 0;
  launcher.launch(
      {0}, {work.program}, [](int, std::uint32_t) { return -1; },
      [&](int rank, bool ok, core::TimePs end) {
        EXPECT_EQ(rank, 0);
        EXPECT_TRUE(ok);
        ended = end;
        noticed = core::now_ps();
      },
      5000, 3000);
  core::run_to_completion();
  EXPECT_EQ(ended, 5000u + 2 * (220000u + 2097152u));
  EXPECT_EQ(noticed, ended + 3000u);  // the hosts learn of it a notice later
  EXPECT_EQ(launcher.running(), 0);
  work.check(chip);
}

// Rank 0 writes to rank 1 over a NIC; rank 1 copies what arrived once its signal says so.
TEST(DirectLauncher, AWriteRaisesThePeersSignalWhenItLands) {
  auto m = model();
  sc_core::sc_start(sc_core::SC_ZERO_TIME);
  DirectLauncher& launcher = m->attached<DirectLauncher>();
  const std::uint32_t q0 = launcher.create_qp(0, 0), q1 = launcher.create_qp(1, 0);
  const auto [p0, p1] = system::ports_between(m->topology(), m->config(), 0, 1, 0);
  ASSERT_EQ(p0, 0);
  m->nic(0).connect_qp(q0, m->address(1, p1), q1);
  m->nic(1).connect_qp(q1, m->address(0, p0), q0);
  constexpr std::uint64_t kCount = 4096;
  std::vector<std::int32_t> x(kCount), out(kCount);
  std::iota(x.begin(), x.end(), 7);
  m->chip(0).debug_write(0, ChainedReductions::bytes(x), 4 * kCount);
  Program sender, receiver;
  sender.signals = 1;
  Command w;
  w.kind = Command::Kind::kWrite;
  w.qpn = q0;
  w.src = 0;
  w.dst = 1 << 20;
  w.bytes = 4 * kCount;
  w.remote_signal = 0;
  w.done = 0;
  sender.streams = {{w}};
  receiver.signals = 2;
  Command copy;
  copy.kind = Command::Kind::kCopy;
  copy.type = core::DataType::kInt32;
  copy.dst = 2 << 20;
  copy.src = 1 << 20;
  copy.bytes = 4 * kCount;
  copy.wait = 0;
  copy.wait_count = 1;
  copy.done = 1;
  receiver.streams = {{copy}};
  std::vector<core::TimePs> ended(2, 0);
  launcher.launch(
      {0, 1}, {sender, receiver}, [](int rank, std::uint32_t) { return 1 - rank; },
      [&](int rank, bool ok, core::TimePs end) {
        EXPECT_TRUE(ok);
        ended[static_cast<std::size_t>(rank)] = end;
      },
      0, 1000);
  core::run_to_completion();
  EXPECT_GT(ended[0], 0u);
  EXPECT_GT(ended[1], 0u);
  m->chip(1).debug_read(2 << 20, ChainedReductions::bytes(out), 4 * kCount);
  EXPECT_EQ(out, x);
}

// A job of no elements (an uneven cut's empty share) is done at once, as compiled ones are.
TEST(DirectLauncher, AnEmptyJobIsDoneAtOnce) {
  auto m = model();
  sc_core::sc_start(sc_core::SC_ZERO_TIME);
  Program p;
  p.signals = 2;
  Command empty = test::ChainedReductions::reduce(0, 0, 0);
  empty.bytes = 0;
  empty.done = 0;
  Command after = wait_command(0, 1);
  after.done = 1;
  p.streams = {{empty}, {after}};
  core::TimePs ended = 0;
  m->attached<DirectLauncher>().launch(
      {0}, {p}, [](int, std::uint32_t) { return -1; },
      [&](int, bool ok, core::TimePs end) {
        EXPECT_TRUE(ok);
        ended = end;
      },
      7000, 1000);
  core::run_to_completion();
  EXPECT_EQ(ended, 7000u);
}

TEST(DirectLauncher, MalformedProgramsAreRefused) {
  auto m = model();
  sc_core::sc_start(sc_core::SC_ZERO_TIME);
  DirectLauncher& launcher = m->attached<DirectLauncher>();
  const auto nowhere = [](int, std::uint32_t) { return -1; };
  Program bad_signal;
  bad_signal.signals = 1;
  Command c = test::ChainedReductions::reduce(0, 0, 0);
  c.done = 3;
  bad_signal.streams = {{c}};
  try {
    launcher.launch({0}, {bad_signal}, nowhere, nullptr, 0, 1000);
    FAIL() << "a signal out of range was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("signal out of range"));
  }
  Program lost_write;
  lost_write.signals = 1;
  Command w;
  w.kind = Command::Kind::kWrite;
  w.bytes = 64;
  lost_write.streams = {{w}};
  try {
    launcher.launch({0}, {lost_write}, nowhere, nullptr, 0, 1000);
    FAIL() << "a write to no rank was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("leads nowhere"));
  }
  EXPECT_THROW(launcher.launch({0, 1}, {lost_write}, nowhere, nullptr, 0, 1000),
               std::invalid_argument);
  EXPECT_THROW(launcher.launch({99}, {bad_signal}, nowhere, nullptr, 0, 1000),
               std::invalid_argument);
  EXPECT_EQ(launcher.running(), 0);
}

}  // namespace
}  // namespace podsim::collectives
