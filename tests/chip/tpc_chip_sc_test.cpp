// TPC kernels on the chip through the driver and the runtime: a recipe's command buffers on the
// TPC QMANs, the cores fetching binaries from device memory and reaching HBM through the NoC.
// Results equal the functional run bit for bit; time follows the memory; faults and early reads
// are raised as error events.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "collectives/system_file.h"
#include "core/kernel.h"
#include "hw/system/topology.h"
#include "hw/tpc/assembler.h"
#include "hw/tpc/kernels/functional.h"
#include "synapse/graph.h"
#include "tests/support/on_chip.h"

namespace podsim::chip {
namespace {

using ::testing::HasSubstr;

std::unique_ptr<system::SystemModel> model(std::vector<std::string> overrides = {},
                                           bool functional = true) {
  auto loaded = collectives::load_system_file("hls2", overrides);
  return std::make_unique<system::SystemModel>("system", loaded.config,
                                               system::build_topology(loaded.config),
                                               system::ModelOptions{1, functional});
}

struct Outcome {
  std::vector<std::vector<std::uint8_t>> buffers;  // the node's (all but scratch)
  bool ok = false;
  core::TimePs time = 0;  // the TPCs' span
};

// Runs a kernel on chip 0 through the runtime and returns its buffers afterwards.
Outcome run_on_chip(system::SystemModel& m, const tpc::KernelRequest& request,
                    std::vector<std::vector<std::uint8_t>> buffers, int cores = 0) {
  Outcome out;
  const bool data = !buffers.empty();
  const std::string failure = test::with_runtime(m, [&](synapse::Runtime& rt) {
    synapse::run_kernel(rt, request, cores, data ? &buffers : nullptr);
  });
  EXPECT_EQ(failure, "");
  out.ok = failure.empty() && m.chip(0).error_count() == 0;
  out.time = test::tpc_span(m);
  out.buffers = std::move(buffers);
  return out;
}

TEST(TpcOnChip, KernelsGiveTheFunctionalRunsResultsBitForBit) {
  auto m = model();
  sc_core::sc_start(sc_core::SC_ZERO_TIME);
  const tpc::KernelRequest requests[] = {
      {"add", tpc::Dtype::kBf16, std::nullopt, {4097}, {}},
      {"softmax", tpc::Dtype::kF32, std::nullopt, {300, 7}, {}},
      {"layer_norm_bwd", tpc::Dtype::kBf16, std::nullopt, {100, 9}, {}},  // three launches
      {"lamb", tpc::Dtype::kF32, std::nullopt, {1000}, {}},               // three launches
      {"transpose", tpc::Dtype::kF16, std::nullopt, {70, 33}, {}},
      {"embedding", tpc::Dtype::kF32, std::nullopt, {100, 50}, {{"indices", 40}}}};
  std::vector<std::vector<std::vector<std::uint8_t>>> got, want;
  const std::string failure = test::with_runtime(*m, [&](synapse::Runtime& rt) {
    int seed = 1;
    for (const tpc::KernelRequest& r : requests) {
      const tpc::KernelPlan plan = tpc::plan_kernel(r);
      auto inputs = tpc::make_buffers(plan, seed++);
      auto expected = inputs;
      tpc::run_functional(plan, expected, m->chip(0).tpc_cores());
      got.push_back(test::node_buffers(plan, inputs));
      want.push_back(test::node_buffers(plan, expected));
      synapse::run_kernel(rt, r, 0, &got.back());
    }
  });
  ASSERT_EQ(failure, "");
  ASSERT_EQ(got.size(), std::size(requests));
  for (std::size_t k = 0; k < got.size(); ++k)
    for (std::size_t b = 0; b < want[k].size(); ++b)
      EXPECT_EQ(got[k][b], want[k][b]) << requests[k].kernel << " tensor " << b;
  EXPECT_EQ(m->chip(0).error_count(), 0u);
}

// 16 MiB in, 8 MiB out on Gaudi2's 24 cores: the HBM's 2.45 TB/s bounds the time from below,
// and the cores' bursts keep it within a few tens of percent of that bound.
TEST(TpcOnChip, AStreamingKernelRunsNearTheMemorysRate) {
  auto m = model({}, false);
  sc_core::sc_start(sc_core::SC_ZERO_TIME);
  const Outcome got = run_on_chip(*m, {"add", tpc::Dtype::kF32, std::nullopt, {2u << 20}, {}}, {});
  EXPECT_TRUE(got.ok);
  const double bytes = 3.0 * 8 * (1 << 20);
  const double bound_ps = bytes / 2.45e12 * 1e12;
  EXPECT_GT(static_cast<double>(got.time), bound_ps);
  EXPECT_LT(static_cast<double>(got.time), 1.5 * bound_ps)
      << got.time << " ps against " << bound_ps;
  std::uint64_t bundles = 0;
  for (int t = 0; t < m->chip(0).tpc_cores(); ++t)
    bundles += m->chip(0).tpc(t).stats().bundles.value();
  EXPECT_GT(bundles, 2u * (1 << 20) / 256);
}

// A recipe launched with a tensor where nothing is mapped: the faulting core stops, raises an
// address error and writes no sync object, so the launch never completes (the runtime gives up
// waiting) and the chip says why.
TEST(TpcOnChip, AKernelOutsideTheMemoryStopsWithAnErrorEvent) {
  auto m = model();
  sc_core::sc_start(sc_core::SC_ZERO_TIME);
  const std::string failure = test::with_runtime(*m, [&](synapse::Runtime& rt) {
    synapse::Graph g;
    const auto x = g.tensor("x", tpc::Dtype::kF32, {1000}, synapse::TensorKind::kPersistent);
    const auto y = g.tensor("y", tpc::Dtype::kF32, {1000}, synapse::TensorKind::kPersistent);
    g.kernel("relu", {"relu", tpc::Dtype::kF32, std::nullopt, {1000}, {}}, {x, y});
    synapse::Target target = rt.target();
    target.tpcs = 2;
    const synapse::Recipe recipe = synapse::compile(g, target);
    const auto stream = rt.create_stream(synapse::StreamKind::kCompute);
    rt.launch(stream, recipe, {0x7F00000000, rt.device_malloc(4000)}, 0);
    rt.synchronize(stream);
  });
  EXPECT_THAT(failure, HasSubstr("synapse"));
  ASSERT_GE(m->chip(0).errors().size(), 1u);
  const core::ErrorEvent& e = m->chip(0).errors().front();
  EXPECT_EQ(e.kind, core::ErrorEvent::Kind::kAddressError);
  EXPECT_THAT(e.block, HasSubstr("tpc0"));
  EXPECT_THAT(e.detail, HasSubstr("is not mapped"));
}

// A kernel written by hand, started through the registers: with checking on, reading a result
// before its latency is reported; the kernel still runs to its end and writes its sync object.
TEST(TpcOnChip, CheckingModeReportsEarlyReadsThroughTheRegisters) {
  auto m = model({"chip.tpc.core.check_hazards=true"});
  sc_core::sc_start(sc_core::SC_ZERO_TIME);
  chip::Chip& c = m->chip(0);
  const tpc::Assembly a = tpc::assemble("mov.i32 s1, 5\nadd.i32 s2, s1, 1\nhalt\n");
  const std::vector<std::uint8_t> binary = tpc::serialize_binary(a.bundles, a.generation);
  const std::uint64_t at = c.config().address_map.sram.value + 0x100000;
  c.debug_write(at, binary.data(), binary.size());
  const std::uint64_t cfg = chip::Chip::tpc_cfg_base(3);
  const std::uint32_t sob = 2000;
  c.write_register(chip::Chip::sob_address(sob), 0);
  c.write_register(cfg + PODSIM_GAUDI1_TPC_CFG_KERNEL_BASE_ADDRESS_LOW_OFFSET,
                   static_cast<std::uint32_t>(at));
  c.write_register(cfg + PODSIM_GAUDI1_TPC_CFG_KERNEL_BASE_ADDRESS_HIGH_OFFSET,
                   static_cast<std::uint32_t>(at >> 32));
  c.write_register(cfg + PODSIM_GAUDI1_TPC_CFG_SYNC_OBJECT_ADDR_OFFSET,
                   static_cast<std::uint32_t>(chip::Chip::sob_address(sob)));
  c.write_register(cfg + PODSIM_GAUDI1_TPC_CFG_SYNC_OBJECT_MESSAGE_OFFSET, 0x80000001u);  // add 1
  c.write_register(cfg + PODSIM_GAUDI1_TPC_CFG_TPC_EXECUTE_OFFSET, 1);
  EXPECT_EQ(c.tpc(3).read_register(PODSIM_GAUDI1_TPC_CFG_STATUS_OFFSET) & 1u, 1u);  // busy
  core::run_to_completion();
  EXPECT_EQ(c.tpc(3).read_register(PODSIM_GAUDI1_TPC_CFG_STATUS_OFFSET), 0u);
  ASSERT_EQ(c.errors().size(), 1u);
  EXPECT_EQ(c.errors().front().kind, core::ErrorEvent::Kind::kHazard);
  EXPECT_THAT(c.errors().front().detail, HasSubstr("bundle 1 spu slot read s1"));
  EXPECT_EQ(c.tpc(3).stats().kernels.value(), 1u);
  std::uint32_t value = 0;
  c.debug_read(chip::Chip::sob_address(sob), reinterpret_cast<std::uint8_t*>(&value), 4);
  EXPECT_EQ(value, 1u);
}

}  // namespace
}  // namespace podsim::chip
