// MME operations on the chip: the compute launcher's descriptors on the MME QMANs, the engines
// reading operands from HBM through the NoC. Results are checked against the double-precision
// reference within the bound the arithmetic allows; a large GEMM takes its analytic cycles;
// bad descriptors and accesses are raised as error events.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "collectives/system_file.h"
#include "compute/launcher.h"
#include "compute/mme_check.h"
#include "hw/core/kernel.h"
#include "hw/mme/mme_registers.h"
#include "hw/system/topology.h"
#include "podsim/spec/gaudi1.h"

namespace podsim::compute {
namespace {

using mme::ConvDesc;
using mme::GemmDesc;
using mme::MmeOp;
using mme::MmeOperation;
using ::testing::HasSubstr;
using tpc::Dtype;

constexpr std::uint64_t kA = 0x10000000, kB = 0x50000000, kC = 0x90000000;

std::unique_ptr<system::SystemModel> model(const std::string& system,
                                           std::vector<std::string> overrides = {},
                                           bool functional = true) {
  auto loaded = collectives::load_system_file(system, overrides);
  return std::make_unique<system::SystemModel>("system", loaded.config,
                                               system::build_topology(loaded.config),
                                               system::ModelOptions{1, functional});
}

struct Outcome {
  bool finished = false, ok = false;
  core::TimePs time = 0;
  std::vector<std::uint8_t> c;
};

Outcome run_on_chip(system::SystemModel& m, MmeOperation op, const MmeOperands& in,
                    int engines = 0) {
  chip::Chip& chip = m.chip(0);
  op.a = chip.memory_base() + kA, op.b = chip.memory_base() + kB, op.c = chip.memory_base() + kC;
  if (!in.a.empty()) {
    chip.debug_write(op.a, in.a.data(), in.a.size());
    chip.debug_write(op.b, in.b.data(), in.b.size());
    chip.debug_write(op.c, in.c.data(), in.c.size());
  }
  Outcome out;
  const core::TimePs start = core::now_ps();
  m.attached<Launcher>().run(0, op, engines, [&](bool ok) {
    out.finished = true;
    out.ok = ok;
    out.time = core::now_ps() - start;
  });
  core::run_to_completion();
  out.c.resize(in.c.size());
  if (!in.c.empty()) chip.debug_read(op.c, out.c.data(), out.c.size());
  return out;
}

void expect_matches_reference(system::SystemModel& m, const MmeOperation& op, int seed,
                              int engines = 0) {
  const MmeOperands in = make_operands(op, static_cast<std::uint64_t>(seed));
  const Outcome got = run_on_chip(m, op, in, engines);
  const std::string what = fmt::format(
      "{} {}->{} m {} n {} k {}", mme::to_string(op.op), tpc::info(op.in).name,
      tpc::info(op.out).name, mme::GemmView(op).m(), mme::GemmView(op).n(), mme::GemmView(op).k());
  ASSERT_TRUE(got.finished && got.ok) << what;
  const MmeCheck check = check_result(op, in, got.c);
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
  int seed = 1;
  for (auto [in, out] : {std::pair{Dtype::kBf16, Dtype::kBf16},
                         {Dtype::kF16, Dtype::kF16},
                         {Dtype::kF32, Dtype::kF32},
                         {Dtype::kBf16, Dtype::kF32}}) {
    expect_matches_reference(*m, gemm({300, 270, 600}, in, out), seed++);
    expect_matches_reference(*m, gemm({64, 96, 33, 3, true, false}, in, out), seed++);
    expect_matches_reference(*m, gemm({70, 50, 40, 2, false, true}, in, out), seed++);
    expect_matches_reference(*m, gemm({17, 530, 260, 1, true, true, 40, 300, 600}, in, out, true),
                             seed++);
  }
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
  int seed = 100;
  for (Dtype t : {Dtype::kBf16, Dtype::kF16, Dtype::kF32})
    for (const ConvDesc& c : shapes)
      for (MmeOp kind : {MmeOp::kConvForward, MmeOp::kConvDataGrad, MmeOp::kConvWeightGrad}) {
        MmeOperation op;
        op.op = kind, op.conv = c, op.in = t, op.out = t;
        expect_matches_reference(*m, op, seed++);
      }
  EXPECT_EQ(m->chip(0).error_count(), 0u);
}

// Each result element is computed by one engine in the same k order however the rows are
// dealt out, so one engine and two give the same bits.
TEST(MmeOnChip, SplittingRowsAcrossEnginesChangesNoBit) {
  auto m = model("hls2");
  sc_core::sc_start(sc_core::SC_ZERO_TIME);
  const MmeOperation op = gemm({700, 300, 520}, Dtype::kBf16, Dtype::kBf16);
  const MmeOperands in = make_operands(op, 7);
  const Outcome one = run_on_chip(*m, op, in, 1);
  const Outcome both = run_on_chip(*m, op, in, 2);
  ASSERT_TRUE(one.ok && both.ok);
  EXPECT_EQ(one.c, both.c);
  EXPECT_LT(both.time, one.time);
  EXPECT_GT(m->chip(0).mme(1).stats().operations.value(), 0u);
}

// 4096^3 in bf16 on Gaudi2's two 256 x 256 arrays at 1.65 GHz: the operand panels arrive while
// the previous step computes, so the time is the array's cycles within 2%.
TEST(MmeOnChip, ALargeGemmTakesItsAnalyticCycles) {
  auto m = model("hls2", {}, false);
  sc_core::sc_start(sc_core::SC_ZERO_TIME);
  const MmeOperation op = gemm({4096, 4096, 4096}, Dtype::kBf16, Dtype::kBf16);
  const Outcome got = run_on_chip(*m, op, MmeOperands{});
  ASSERT_TRUE(got.ok);
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

TEST(MmeOnChip, AnOperandOutsideTheMemoryStopsWithAnErrorEvent) {
  auto m = model("hls2");
  sc_core::sc_start(sc_core::SC_ZERO_TIME);
  MmeOperation op = gemm({128, 128, 128}, Dtype::kBf16, Dtype::kBf16);
  op.a = 0x7F00000000, op.b = m->chip(0).memory_base(), op.c = m->chip(0).memory_base() + kC;
  bool finished = false;
  m->attached<Launcher>().run(0, op, 1, [&](bool) { finished = true; });
  core::run_to_completion();
  EXPECT_FALSE(finished);  // the engine wrote no sync object
  ASSERT_GE(m->chip(0).errors().size(), 1u);
  EXPECT_EQ(m->chip(0).errors()[0].kind, core::ErrorEvent::Kind::kAddressError);
  EXPECT_THAT(m->chip(0).errors()[0].detail, HasSubstr("operand read"));
}

TEST(MmeOnChip, TheLauncherRefusesWhatTheChipCannotRun) {
  auto m = model("hls2");
  sc_core::sc_start(sc_core::SC_ZERO_TIME);
  const MmeOperation op = gemm({64, 64, 64}, Dtype::kBf16, Dtype::kBf16);
  EXPECT_THROW(m->attached<Launcher>().run(0, op, 3, [](bool) {}), std::invalid_argument);
  MmeOperation bad = op;
  bad.in = Dtype::kU8;
  try {
    m->attached<Launcher>().run(0, bad, 0, [](bool) {});
    FAIL() << "u8 operands accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("operand type u8"));
  }
}

}  // namespace
}  // namespace podsim::compute
