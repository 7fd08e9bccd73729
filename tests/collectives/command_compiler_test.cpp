// The compiler from per-rank programs to command buffers: what it refuses, how it slices jobs
// and orders a stream's jobs, and that its images are Gaudi1 packets naming the right objects.
#include "collectives/command_compiler.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <utility>

#include "hw/chip/nic_doorbell.h"
#include "hw/chip/spec/packet_codec.h"
#include "hw/tpc/kernels/library.h"
#include "podsim/spec/gaudi1.h"

namespace podsim::collectives {
namespace {

using ::testing::HasSubstr;

Command write(std::uint32_t qpn, std::uint64_t bytes, std::uint32_t remote) {
  Command c;
  c.kind = Command::Kind::kWrite;
  c.qpn = qpn;
  c.bytes = bytes;
  c.src = 0x1000;
  c.dst = 0x2000;
  c.remote_signal = remote;
  return c;
}
Command wait_for(std::uint32_t signal, std::uint32_t count) {
  Command c;
  c.kind = Command::Kind::kWait;
  c.wait = signal;
  c.wait_count = count;
  return c;
}
Command reduce(std::uint64_t dst, std::uint64_t a, std::uint64_t b, std::uint64_t count) {
  Command c;
  c.kind = Command::Kind::kReduce;
  c.dst = dst;
  c.src = a;
  c.b = b;
  c.bytes = count * 4;  // fp32
  return c;
}
// Two ranks, each with QP 7 to the other.
int other(int rank, std::uint32_t qpn) { return qpn == 7 ? 1 - rank : -1; }

ChipGeometry geometry() {
  ChipGeometry g;
  g.queues = 8;
  g.engines = 4;
  g.min_slice = 64 << 10;
  return g;
}

// Two ranks' placements: objects from 1024 and 3000, everything else in one SRAM arena.
std::pair<ChipPlacement, ChipPlacement> two_placements() {
  ChipPlacement a, b;
  a.first_sob = 1024;
  b.first_sob = 3000;
  a.arena = b.arena = a.desc_base = b.desc_base = a.wqe_base = b.wqe_base = 0x7FF0800000;
  return {a, b};
}

TEST(CommandCompiler, ProgramsThatCannotFinishAreRefused) {
  // Each rank waits for the other's write before sending its own.
  Program p;
  p.signals = 1;
  p.streams = {{wait_for(0, 1), write(7, 64, 0)}};
  try {
    CommandCompiler({p, p}, other, {geometry(), geometry()});
    FAIL() << "a deadlock was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("cannot finish"));
  }
  Program bad;
  bad.signals = 1;
  bad.streams = {{wait_for(3, 1)}};
  EXPECT_THROW(CommandCompiler({bad}, other, {geometry()}), std::invalid_argument);
}

// Two chained reductions of 1 MiB: each cut into four slices (one per engine), the second
// waiting until all four slices of the first have counted on their signal.
TEST(CommandCompiler, ChainedJobsAreSlicedAndTheSecondWaitsForTheFirst) {
  Program p;
  p.signals = 2;
  Command first = reduce(0x10'0000, 0x0, 0x20'0000, 256 * 1024);
  first.done = 0;
  Command second = reduce(0x30'0000, 0x10'0000, 0x20'0000, 256 * 1024);
  second.wait = 0;  // the second reads what the first wrote
  second.wait_count = 1;
  second.done = 1;
  p.streams = {{first, second, wait_for(1, 1)}};
  const CommandCompiler code({p}, other, {geometry()});
  const auto n = code.counts(0);
  EXPECT_EQ(n.slices, 8u);
  EXPECT_EQ(n.writes, 0u);
  // The second waits for 4 slices of signal 0; the final wait is for signal 1's 4 slices; the
  // tails have nothing left to wait for; every queue adds one to the done object, waits until
  // all have, clears its share of the other objects and adds one again.
  EXPECT_EQ(n.waits, 2u + 8);
  EXPECT_EQ(n.adds, 2u * 8);
  EXPECT_EQ(code.sobs(0), 2u + 2 * 8 + 1);
  EXPECT_EQ(n.clears, code.sobs(0) - 1);
  EXPECT_EQ(code.done_target(0), 2u * 8);
}

// A stream's jobs on what the job before wrote, cut differently, wait for it; a small job (one
// slice) after a sliced one on the same bytes cannot be ordered without a signal of its own.
TEST(CommandCompiler, AStreamsJobsKeepTheirOrder) {
  Program p;
  p.signals = 1;
  Command big = reduce(0x10'0000, 0x0, 0x20'0000, 256 * 1024);
  Command small = reduce(0x10'0000, 0x10'0000, 0x40'0000, 16);
  p.streams = {{big, small}};
  EXPECT_THROW(CommandCompiler({p}, other, {geometry()}), std::invalid_argument);
  p.streams[0][0].done = 0;
  const CommandCompiler code({p}, other, {geometry()});
  // The small job waits for the big one's four slices; the tail for the small one (and each
  // of the 8 queues for the others before clearing its share of the objects).
  EXPECT_EQ(code.counts(0).waits, 2u + 8);
}

TEST(CommandCompiler, ImagesArePacketsAndWqesNameTheReceiversObjects) {
  Program sender, receiver;
  sender.signals = 1;
  sender.streams = {{write(7, 4096, 2)}};
  receiver.signals = 3;
  receiver.streams = {{wait_for(2, 1)}};
  const CommandCompiler code({sender, receiver}, other, {geometry(), geometry()});
  const auto [a, b] = two_placements();
  const ChipImage image = code.encode(0, {a, b});
  ASSERT_EQ(image.buffers.size(), 8u);
  chip::spec::PacketCodec codec;
  for (const auto& queue : image.buffers) {
    for (const auto& [address, bytes] : queue) {
      const auto result = codec.decode(image.bytes.data() + (address - a.arena), bytes);
      ASSERT_TRUE(result.ok()) << result.error->message();
      for (const auto& p : result.packets) {
        EXPECT_THAT(std::string(p.packet.name()), ::testing::AnyOf("MSG_LONG", "FENCE"));
      }
    }
  }
  const chip::Wqe wqe = chip::Wqe::decode(image.bytes.data());  // no descriptors: WQE 0 first
  EXPECT_EQ(wqe.qpn, 7u);
  EXPECT_EQ(wqe.length, 4096u);
  EXPECT_EQ(wqe.immediate, chip::Wqe::kSobValid | (3000u + 2));
  // Unsignalled writes count on the sender's acknowledgement object of their queue (0).
  EXPECT_EQ(wqe.completion, chip::Wqe::kSobValid | (1024u + sender.signals + 0));
}

// Reductions on TPCs: each slice a kernel on a TPC queue (after the DMA queues), which first
// waits for what the job's own stream waited for; the kernel binary leads the arena.
TEST(CommandCompiler, ReductionsOnTpcsWaitForTheirStreamAndRunTheKernelLibrarysAdd) {
  Program sender, receiver;
  sender.signals = 1;
  sender.streams = {{write(7, 4096, 0)}};
  receiver.signals = 2;
  Command sum = reduce(0x10'0000, 0x0, 0x20'0000, 256 * 1024);  // 1 MiB of f32: two slices
  sum.done = 1;
  receiver.streams = {{wait_for(0, 1), sum, wait_for(1, 1)}};
  ChipGeometry g = geometry();
  g.tpcs = 2;
  const CommandCompiler code({sender, receiver}, other, {g, g});
  EXPECT_EQ(code.queues(1), 10);
  const auto n = code.counts(1);
  EXPECT_EQ(n.kernels, 2u);
  EXPECT_EQ(n.slices, 0u);  // no DMA reduction
  const auto [a, b] = two_placements();
  const ChipImage image = code.encode(1, {a, b});
  ASSERT_EQ(image.buffers.size(), 10u);
  const std::vector<std::uint8_t> binary = tpc::kernel_binary("add.f32", tpc::Generation::kGaudi);
  ASSERT_GE(image.bytes.size(), binary.size());
  EXPECT_TRUE(std::equal(binary.begin(), binary.end(), image.bytes.begin()));
  chip::spec::PacketCodec codec;
  for (int t = 8; t < 10; ++t) {
    ASSERT_EQ(image.buffers[static_cast<std::size_t>(t)].size(), 1u);
    const auto [address, bytes] = image.buffers[static_cast<std::size_t>(t)].front();
    const auto result = codec.decode(image.bytes.data() + (address - b.arena), bytes);
    ASSERT_TRUE(result.ok()) << result.error->message();
    std::vector<std::string> names;
    for (const auto& p : result.packets) names.emplace_back(p.packet.name());
    // The stream's wait for signal 0, then the registers, TPC_EXECUTE, the queue's add; then
    // its wait for every queue's add, its share of the objects cleared, its second add.
    const std::size_t share = code.sobs(1) - 1;
    const std::size_t first = share * static_cast<std::size_t>(t) / 10;
    const std::size_t tail = 2 + share * static_cast<std::size_t>(t + 1) / 10 - first + 1;
    ASSERT_GE(names.size(), 5u + tail);
    EXPECT_EQ(names[0], "MSG_LONG");
    EXPECT_EQ(names[1], "FENCE");
    EXPECT_EQ(names[2], "WREG_BULK");
    const auto& execute = result.packets[result.packets.size() - tail - 2].packet;
    EXPECT_EQ(std::string(execute.name()), "WREG_32");
    EXPECT_EQ(execute.get("reg_offset"), PODSIM_GAUDI1_TPC_CFG_TPC_EXECUTE_OFFSET);
    EXPECT_EQ(names[names.size() - tail - 1], "MSG_LONG");
    EXPECT_EQ(names[names.size() - tail + 1], "FENCE");
    EXPECT_EQ(names.back(), "MSG_LONG");
  }
}

}  // namespace
}  // namespace podsim::collectives
