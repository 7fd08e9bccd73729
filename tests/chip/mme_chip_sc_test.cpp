// MME operations on the chip through the driver and the runtime: a recipe's descriptors on the
// MME QMANs, the engines reading operands from HBM through the NoC. Results are checked against
// the double-precision reference within the bound the arithmetic allows; a large GEMM takes its
// analytic cycles; bad descriptors and accesses are raised as error events.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "collectives/system_file.h"
#include "core/kernel.h"
#include "hw/mme/check.h"
#include "hw/mme/mme_registers.h"
#include "hw/system/topology.h"
#include "podsim/spec/gaudi1.h"
#include "synapse/graph.h"
#include "tests/support/on_chip.h"

namespace podsim::mme {
namespace {

using ::testing::HasSubstr;
using tpc::Dtype;

std::unique_ptr<system::SystemModel> model(const std::string& system,
                                           std::vector<std::string> overrides = {},
                                           bool functional = true) {
  auto loaded = collectives::load_system_file(system, overrides);
  return std::make_unique<system::SystemModel>("system", loaded.config,
                                               system::build_topology(loaded.config),
                                               system::ModelOptions{1, functional});
}

// Runs `op` through `rt` on operands drawn from `seed` and checks the result.
void expect_matches_reference(synapse::Runtime& rt, const MmeOperation& op, int seed) {
  const MmeOperands in = make_operands(op, static_cast<std::uint64_t>(seed));
  std::vector<std::vector<std::uint8_t>> operands{in.a, in.b, in.c};
  synapse::run_mme(rt, op, 0, &operands);
  const std::string what = fmt::format(
      "{} {}->{} m {} n {} k {}", mme::to_string(op.op), tpc::info(op.in).name,
      tpc::info(op.out).name, mme::GemmView(op).m(), mme::GemmView(op).n(), mme::GemmView(op).k());
  const MmeCheck check = check_result(op, in, operands[2]);
  EXPECT_EQ(check.beyond, 0u) << what << ": " << check.first.value_or("");
  EXPECT_GT(check.elements, 0u);
}

MmeOperation gemm(GemmDesc g, Dtype in, Dtype out, bool accumulate = false) {
  MmeOperation op;
  op.gemm = g;
  op.in = in, op.out = out, op.accumulate = accumulate;
  return op;
}

TEST(MmeOnChip, GemmsMatchTheReferenceInEveryType) {
  auto m = model("hls2");
  sc_core::sc_start(sc_core::SC_ZERO_TIME);
  const std::string failure = test::with_runtime(*m, [&](synapse::Runtime& rt) {
    int seed = 1;
    for (auto [in, out] : {std::pair{Dtype::kBf16, Dtype::kBf16},
                           {Dtype::kF16, Dtype::kF16},
                           {Dtype::kF32, Dtype::kF32},
                           {Dtype::kBf16, Dtype::kF32}}) {
      expect_matches_reference(rt, gemm({300, 270, 600}, in, out), seed++);
      expect_matches_reference(rt, gemm({64, 96, 33, 3, true, false}, in, out), seed++);
      expect_matches_reference(rt, gemm({70, 50, 40, 2, false, true}, in, out), seed++);
      expect_matches_reference(rt, gemm({17, 530, 260, 1, true, true, 40, 300, 600}, in, out, true),
                               seed++);
    }
  });
  EXPECT_EQ(failure, "");
  EXPECT_EQ(m->chip(0).error_count(), 0u);
}

TEST(MmeOnChip, ConvolutionsMatchTheReferenceInEveryType) {
  auto m = model("hls2");
  sc_core::sc_start(sc_core::SC_ZERO_TIME);
  const ConvDesc shapes[] = {
      {2, 16, 14, 14, 32, 3, 3, 1, 1, 1, 1, 1, 1},  // a ResNet-like 3x3
      {1, 8, 15, 13, 24, 3, 3, 2, 2, 1, 1, 1, 1},   // strided
      {2, 6, 12, 12, 10, 3, 3, 1, 1, 2, 2, 2, 2},   // dilated
      {4, 64, 7, 7, 48, 1, 1, 1, 1, 0, 0, 1, 1},    // 1x1
  };
  const std::string failure = test::with_runtime(*m, [&](synapse::Runtime& rt) {
    int seed = 100;
    for (Dtype t : {Dtype::kBf16, Dtype::kF16, Dtype::kF32})
      for (const ConvDesc& c : shapes)
        for (MmeOp kind : {MmeOp::kConvForward, MmeOp::kConvDataGrad, MmeOp::kConvWeightGrad}) {
          MmeOperation op;
          op.op = kind, op.conv = c, op.in = t, op.out = t;
          expect_matches_reference(rt, op, seed++);
        }
  });
  EXPECT_EQ(failure, "");
  EXPECT_EQ(m->chip(0).error_count(), 0u);
}

// `op` on one engine and on two: the same bits, in less time, the second engine used.
void expect_two_engines_change_no_bit(const MmeOperation& op, std::uint64_t seed) {
  auto m = model("hls2");
  sc_core::sc_start(sc_core::SC_ZERO_TIME);
  const MmeOperands in = make_operands(op, seed);
  std::vector<std::vector<std::uint8_t>> one{in.a, in.b, in.c}, both = one;
  core::TimePs one_ps = 0, both_ps = 0;
  const std::string failure = test::with_runtime(*m, [&](synapse::Runtime& rt) {
    one_ps = synapse::run_mme(rt, op, 1, &one).launch_ps;
    both_ps = synapse::run_mme(rt, op, 2, &both).launch_ps;
  });
  ASSERT_EQ(failure, "");
  EXPECT_EQ(one[2], both[2]);
  EXPECT_LT(both_ps, one_ps);
  EXPECT_GT(m->chip(0).mme(1).stats().operations.value(), 0u);
}

// Each result element is computed by one engine in the same k order however the rows are
// dealt out, so one engine and two give the same bits.
TEST(MmeOnChip, SplittingRowsAcrossEnginesChangesNoBit) {
  expect_two_engines_change_no_bit(gemm({700, 300, 520}, Dtype::kBf16, Dtype::kBf16), 7);
}

// A result of fewer rows than a tile (a weight gradient of 64 filters) is shared by columns: the
// two engines write disjoint columns, each element in the same k order, so the bits are one
// engine's and the time is shorter.
TEST(MmeOnChip, SplittingColumnsAcrossEnginesChangesNoBit) {
  expect_two_engines_change_no_bit(gemm({64, 1300, 520}, Dtype::kBf16, Dtype::kBf16), 9);
}

// 4096^3 in bf16 on Gaudi2's two 256 x 256 arrays at 1.65 GHz: the operand panels arrive while
// the previous step computes, so the time is the array's cycles within 2%.
TEST(MmeOnChip, ALargeGemmTakesItsAnalyticCycles) {
  auto m = model("hls2", {}, false);
  sc_core::sc_start(sc_core::SC_ZERO_TIME);
  const MmeOperation op = gemm({4096, 4096, 4096}, Dtype::kBf16, Dtype::kBf16);
  const std::string failure =
      test::with_runtime(*m, [&](synapse::Runtime& rt) { synapse::run_mme(rt, op, 0, nullptr); });
  ASSERT_EQ(failure, "");
  struct {
    core::TimePs time;
  } got{test::mme_span(*m)};
  const mme::MmeConfig& engine = m->chip(0).config().mme.engine;
  MmeOperation half = op;
  half.m_count = 2048;
  const double cycles =
      static_cast<double>(mme::analytic_cycles(engine, mme::GemmView(half), Dtype::kBf16));
  const double want_ps = cycles / engine.clock.hertz * 1e12;
  EXPECT_NEAR(static_cast<double>(got.time) / want_ps, 1.0, 0.02)
      << got.time << " ps against " << want_ps;
  const double flops = static_cast<double>(m->chip(0).mme(0).stats().flops.value() +
                                           m->chip(0).mme(1).stats().flops.value());
  EXPECT_DOUBLE_EQ(flops, op.flops());
}

// A descriptor the engine cannot run is refused with an error event and the error bit; no
// sync object is written, so nothing waiting on it goes ahead.
TEST(MmeOnChip, ABadDescriptorIsRefusedThroughTheRegisters) {
  auto m = model("hls2");
  sc_core::sc_start(sc_core::SC_ZERO_TIME);
  chip::Chip& c = m->chip(0);
  mme::OperationRegisters r;
  r.op = gemm({64, 0, 64}, Dtype::kBf16, Dtype::kBf16);
  const std::uint32_t sob = 2001;
  c.write_register(chip::Chip::sob_address(sob), 0);
  r.sync_object = chip::Chip::sob_address(sob);
  r.sync_message = 0x80000001;  // add one
  const std::uint64_t base = chip::Chip::mme_desc_base(1);
  for (const core::RegisterRun& run : mme::register_image(r))
    for (std::size_t i = 0; i < run.values.size(); ++i)
      c.write_register(base + run.offset + 4 * i, run.values[i]);
  c.write_register(base + PODSIM_GAUDI1_MME_DESC_EXECUTE_OFFSET, 1);
  core::run_to_completion();
  ASSERT_EQ(c.errors().size(), 1u);
  EXPECT_EQ(c.errors()[0].kind, core::ErrorEvent::Kind::kMalformed);
  EXPECT_THAT(c.errors()[0].block, HasSubstr("mme1"));
  EXPECT_THAT(c.errors()[0].detail, HasSubstr("no dimension may be 0"));
  EXPECT_EQ(c.mme(1).read_register(PODSIM_GAUDI1_MME_DESC_STATUS_OFFSET), 2u);  // error, idle
  std::uint32_t value = 0;
  c.debug_read(chip::Chip::sob_address(sob), reinterpret_cast<std::uint8_t*>(&value), 4);
  EXPECT_EQ(value, 0u);
  EXPECT_EQ(c.mme(1).stats().failed.value(), 1u);
}

// A recipe launched with an operand where nothing is mapped: the engine stops with an address
// error and writes no sync object, so the launch never completes.
TEST(MmeOnChip, AnOperandOutsideTheMemoryStopsWithAnErrorEvent) {
  auto m = model("hls2");
  sc_core::sc_start(sc_core::SC_ZERO_TIME);
  const std::string failure = test::with_runtime(*m, [&](synapse::Runtime& rt) {
    synapse::Graph g;
    const auto a = g.tensor("a", Dtype::kBf16, {128 * 128}, synapse::TensorKind::kPersistent);
    const auto b = g.tensor("b", Dtype::kBf16, {128 * 128}, synapse::TensorKind::kPersistent);
    const auto c = g.tensor("c", Dtype::kBf16, {128 * 128}, synapse::TensorKind::kPersistent);
    g.gemm("gemm", a, b, c, {128, 128, 128});
    synapse::Target target = rt.target();
    target.mmes = 1;
    const synapse::Recipe recipe = synapse::compile(g, target);
    const auto stream = rt.create_stream(synapse::StreamKind::kCompute);
    rt.launch(stream, recipe, {0x7F00000000, rt.device_malloc(1 << 15), rt.device_malloc(1 << 15)},
              0);
    rt.synchronize(stream);
  });
  EXPECT_THAT(failure, HasSubstr("synapse"));
  ASSERT_GE(m->chip(0).errors().size(), 1u);
  EXPECT_EQ(m->chip(0).errors()[0].kind, core::ErrorEvent::Kind::kAddressError);
  EXPECT_THAT(m->chip(0).errors()[0].detail, HasSubstr("operand read"));
}

// What the device cannot run is refused before anything is launched.
TEST(MmeOnChip, TheRuntimeRefusesWhatTheChipCannotRun) {
  auto m = model("hls2");
  sc_core::sc_start(sc_core::SC_ZERO_TIME);
  const MmeOperation op = gemm({64, 64, 64}, Dtype::kBf16, Dtype::kBf16);
  std::string three, u8;
  test::with_runtime(*m, [&](synapse::Runtime& rt) {
    try {
      synapse::run_mme(rt, op, 3, nullptr);
    } catch (const std::invalid_argument& e) {
      three = e.what();
    }
    MmeOperation bad = op;
    bad.in = Dtype::kU8;
    try {
      synapse::run_mme(rt, bad, 0, nullptr);
    } catch (const std::invalid_argument& e) {
      u8 = e.what();
    }
  });
  EXPECT_THAT(three, HasSubstr("3 MMEs asked for, and the device has 2"));
  EXPECT_THAT(u8, HasSubstr("u8"));
  EXPECT_EQ(m->chip(0).mme(0).stats().operations.value(), 0u);
}

}  // namespace
}  // namespace podsim::mme
