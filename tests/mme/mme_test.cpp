// The MME's arithmetic without the kernel: the implicit-GEMM view against the direct
// definition of each convolution, the panel runs against the view, the walk's cycles against
// the closed form, the descriptor's registers both ways, and the operations it refuses.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <numeric>

#include "core/config_binding.h"
#include "hw/mme/mme_registers.h"
#include "hw/mme/operation.h"
#include "hw/mme/schedule.h"

namespace podsim::mme {
namespace {

using ::testing::HasSubstr;

MmeOperation gemm(std::uint32_t m, std::uint32_t n, std::uint32_t k, bool ta = false,
                  bool tb = false, std::uint32_t batch = 1) {
  MmeOperation op;
  op.gemm = GemmDesc{m, n, k, batch, ta, tb};
  return op;
}

MmeOperation conv(MmeOp kind, ConvDesc c) {
  MmeOperation op;
  op.op = kind;
  op.conv = c;
  return op;
}

std::vector<MmeOperation> convolutions() {
  std::vector<MmeOperation> ops;
  const ConvDesc shapes[] = {
      {2, 3, 7, 6, 4, 3, 3, 1, 1, 1, 1, 1, 1},  // padded 3x3
      {1, 5, 9, 8, 3, 3, 2, 2, 3, 0, 1, 1, 1},  // strided, no padding
      {2, 2, 8, 8, 3, 3, 3, 1, 1, 2, 2, 2, 2},  // dilated
      {1, 4, 5, 5, 6, 1, 1, 1, 1, 0, 0, 1, 1},  // 1x1
  };
  for (const ConvDesc& c : shapes)
    for (MmeOp kind : {MmeOp::kConvForward, MmeOp::kConvDataGrad, MmeOp::kConvWeightGrad})
      ops.push_back(conv(kind, c));
  return ops;
}

std::vector<double> ramp(std::uint64_t n, double scale) {
  std::vector<double> v(n);
  for (std::uint64_t i = 0; i < n; ++i) v[i] = static_cast<double>((i * 7919) % 23) * scale - 1;
  return v;
}

// The result computed through the view (as the engine walks it) equals the reference's direct
// loops over each operation's definition.
TEST(MmeOperation, TheImplicitGemmViewComputesWhatEachOperationDefines) {
  std::vector<MmeOperation> ops = convolutions();
  ops.push_back(gemm(5, 7, 3));
  ops.push_back(gemm(4, 6, 9, true, false, 3));
  ops.push_back(gemm(4, 6, 9, false, true, 2));
  MmeOperation padded = gemm(3, 4, 5, true, true, 2);
  padded.gemm.lda = 7, padded.gemm.ldb = 6, padded.gemm.ldc = 9;
  ops.push_back(padded);
  for (const MmeOperation& op : ops) {
    ASSERT_EQ(op.problem(), std::nullopt) << to_string(op.op);
    const auto a = ramp(a_elements(op), 0.125), b = ramp(b_elements(op), 0.0625);
    std::vector<double> want(c_elements(op)), got(c_elements(op), 0.0);
    reference(op, a, b, want);
    const GemmView v(op);
    for (std::uint64_t t = 0; t < v.batch(); ++t)
      for (std::uint64_t m = 0; m < v.m(); ++m)
        for (std::uint64_t n = 0; n < v.n(); ++n) {
          double sum = 0;
          for (std::uint64_t k = 0; k < v.k(); ++k) {
            const std::int64_t x = v.a(t, m, k), y = v.b(t, k, n);
            if (x >= 0 && y >= 0)
              sum += a[static_cast<std::size_t>(x)] * b[static_cast<std::size_t>(y)];
          }
          got[static_cast<std::size_t>(v.c(t, m, n))] += sum;
        }
    EXPECT_EQ(got, want) << to_string(op.op) << " " << v.m() << "x" << v.n() << "x" << v.k();
  }
}

// Every panel position the view maps to memory is covered by exactly one run element, at the
// offset the view gives.
TEST(MmeOperation, PanelRunsCoverThePanelAsTheViewMapsIt) {
  std::vector<MmeOperation> ops = convolutions();
  ops.push_back(gemm(9, 10, 11, true, true, 2));
  ops.push_back(gemm(9, 10, 11));
  for (const MmeOperation& op : ops) {
    const GemmView v(op);
    const std::uint64_t m0 = v.m() / 3, m1 = v.m(), k0 = 1, k1 = v.k(), n0 = v.n() / 2, n1 = v.n();
    const auto check = [&](const std::vector<mme::Run>& runs, std::uint64_t rows,
                           std::uint64_t cols, auto expected) {
      std::vector<std::int64_t> panel(rows * cols, -1);
      for (const mme::Run& r : runs)
        for (std::uint32_t i = 0; i < r.count; ++i) {
          ASSERT_LT(r.first + i * r.step, panel.size());
          EXPECT_EQ(panel[r.first + i * r.step], -1) << "covered twice";
          panel[r.first + i * r.step] = static_cast<std::int64_t>(r.offset + i);
        }
      for (std::uint64_t i = 0; i < rows; ++i)
        for (std::uint64_t j = 0; j < cols; ++j)
          EXPECT_EQ(panel[i * cols + j], expected(i, j))
              << to_string(op.op) << " at " << i << "," << j;
    };
    check(a_runs(v, 0, m0, m1, k0, k1), m1 - m0, k1 - k0,
          [&](std::uint64_t i, std::uint64_t j) { return v.a(0, m0 + i, k0 + j); });
    check(b_runs(v, v.batch() - 1, k0, k1, n0, n1), k1 - k0, n1 - n0,
          [&](std::uint64_t i, std::uint64_t j) { return v.b(v.batch() - 1, k0 + i, n0 + j); });
    check(c_runs(v, 0, m0, m1, n0, n1), m1 - m0, n1 - n0,
          [&](std::uint64_t i, std::uint64_t j) { return v.c(0, m0 + i, n0 + j); });
  }
}

// Element by element, as the walk joins them: each element joins the last run when it follows it
// in memory and in the panel.
std::vector<mme::Run> runs_one_by_one(
    std::uint64_t outer0, std::uint64_t outer1, std::uint64_t inner0, std::uint64_t inner1,
    const std::function<std::int64_t(std::uint64_t, std::uint64_t)>& at,
    const std::function<std::uint32_t(std::uint64_t, std::uint64_t)>& pos) {
  std::vector<mme::Run> runs;
  for (std::uint64_t o = outer0; o < outer1; ++o)
    for (std::uint64_t i = inner0; i < inner1; ++i) {
      const std::int64_t offset = at(o, i);
      if (offset < 0) continue;
      const std::uint32_t p = pos(o, i);
      if (!runs.empty()) {
        mme::Run& last = runs.back();
        const std::uint32_t step = last.count == 1 ? p - last.first : last.step;
        if (static_cast<std::uint64_t>(offset) == last.offset + last.count &&
            p == last.first + last.count * step && p > last.first) {
          last.step = step;
          ++last.count;
          continue;
        }
      }
      runs.push_back(mme::Run{static_cast<std::uint64_t>(offset), 1, p, 1});
    }
  return runs;
}

bool same_runs(const std::vector<mme::Run>& a, const std::vector<mme::Run>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](const Run& x, const Run& y) {
    return x.offset == y.offset && x.count == y.count && x.first == y.first && x.step == y.step;
  });
}

// The walk takes a convolution tap's channels at once; the runs are those one element at a time
// gives, so the engine's timing does not change.
TEST(MmeOperation, PanelRunsAreTheElementByElementRuns) {
  for (const MmeOperation& op : convolutions()) {
    const GemmView v(op);
    const std::uint64_t m0 = v.m() / 3, m1 = v.m(), k0 = 1, k1 = v.k(), n0 = v.n() / 2, n1 = v.n();
    const std::uint64_t width_a = k1 - k0, width_b = n1 - n0;
    const auto a = [&](std::uint64_t m, std::uint64_t k) { return v.a(0, m, k); };
    const auto a_pos = [&](std::uint64_t m, std::uint64_t k) {
      return static_cast<std::uint32_t>((m - m0) * width_a + (k - k0));
    };
    const auto b = [&](std::uint64_t k, std::uint64_t n) { return v.b(0, k, n); };
    const auto b_pos = [&](std::uint64_t k, std::uint64_t n) {
      return static_cast<std::uint32_t>((k - k0) * width_b + (n - n0));
    };
    const auto flip = [](auto f) {
      return [f](std::uint64_t x, std::uint64_t y) { return f(y, x); };
    };
    const auto want_a = v.a_along_m() ? runs_one_by_one(k0, k1, m0, m1, flip(a), flip(a_pos))
                                      : runs_one_by_one(m0, m1, k0, k1, a, a_pos);
    const auto want_b = v.b_along_k() ? runs_one_by_one(n0, n1, k0, k1, flip(b), flip(b_pos))
                                      : runs_one_by_one(k0, k1, n0, n1, b, b_pos);
    EXPECT_TRUE(same_runs(a_runs(v, 0, m0, m1, k0, k1), want_a)) << to_string(op.op);
    EXPECT_TRUE(same_runs(b_runs(v, 0, k0, k1, n0, n1), want_b)) << to_string(op.op);
  }
}

TEST(MmeOperation, ContiguousOperandsMakeFewRuns) {
  const GemmView v(gemm(256, 256, 512));
  EXPECT_EQ(a_runs(v, 0, 0, 256, 0, 512).size(), 1u);    // whole rows of A: one run
  EXPECT_EQ(b_runs(v, 0, 0, 512, 0, 128).size(), 512u);  // a column slice: a run per row
}

TEST(MmeOperation, RefusesWhatItCannotRun) {
  MmeOperation zero = gemm(0, 4, 4);
  EXPECT_THAT(zero.problem().value_or(""), HasSubstr("no dimension may be 0"));
  MmeOperation ints = gemm(4, 4, 4);
  ints.in = Dtype::kI32;
  EXPECT_THAT(ints.problem().value_or(""), HasSubstr("operand type i32"));
  MmeOperation lda = gemm(4, 8, 8);
  lda.gemm.lda = 4;
  EXPECT_THAT(lda.problem().value_or(""), HasSubstr("leading dimension"));
  MmeOperation big_filter = conv(MmeOp::kConvForward, {1, 1, 3, 3, 1, 5, 5});
  EXPECT_THAT(big_filter.problem().value_or(""), HasSubstr("does not fit"));
  MmeOperation rows = gemm(8, 8, 8);
  rows.m_start = 6, rows.m_count = 4;
  EXPECT_THAT(rows.problem().value_or(""), HasSubstr("rows 6 to 10 of a GEMM of 8"));
  MmeOperation cols = gemm(8, 8, 8);
  cols.n_start = 3, cols.n_count = 6;
  EXPECT_THAT(cols.problem().value_or(""), HasSubstr("columns 3 to 9 of a GEMM of 8"));
}

TEST(MmeRegisters, TheImageLatchesBackToTheSameOperation) {
  OperationRegisters r;
  r.op = conv(MmeOp::kConvDataGrad, {2, 3, 17, 19, 5, 3, 2, 2, 1, 1, 0, 1, 2});
  r.op.in = Dtype::kF16, r.op.out = Dtype::kF32, r.op.accumulate = true;
  r.op.gemm = GemmDesc{3, 4, 5, 6, true, false, 7, 8, 9, 100, 200, 300};
  r.op.a = 0x12345678901, r.op.b = 0x2000000040, r.op.c = 0xFFFF00001234;
  r.op.m_start = 128, r.op.m_count = 256;
  r.op.n_start = 64, r.op.n_count = 192;
  r.op.tall = 2;
  r.sync_object = 0x7FFC4F2000, r.sync_message = 0x80000001;
  const auto image = register_image(r);
  ASSERT_EQ(image.size(), 1u);
  EXPECT_EQ(image[0].values.size() % 2, 0u);  // one WREG_BULK
  std::vector<std::uint32_t> words(0x1000 / 4, 0);
  for (std::size_t i = 0; i < image[0].values.size(); ++i)
    words[image[0].offset / 4 + i] = image[0].values[i];
  const OperationRegisters back = latch(words);
  EXPECT_EQ(back.op.op, r.op.op);
  EXPECT_EQ(back.op.in, r.op.in);
  EXPECT_EQ(back.op.out, r.op.out);
  EXPECT_TRUE(back.op.accumulate);
  EXPECT_EQ(back.op.tall, 2u);
  EXPECT_EQ(back.op.wide, 0u);
  EXPECT_EQ(back.op.a, r.op.a);
  EXPECT_EQ(back.op.b, r.op.b);
  EXPECT_EQ(back.op.c, r.op.c);
  EXPECT_EQ(back.op.gemm.trans_a, true);
  EXPECT_EQ(back.op.gemm.ldc, 9u);
  EXPECT_EQ(back.op.gemm.stride_c, 300u);
  EXPECT_EQ(back.op.conv.h, 17u);
  EXPECT_EQ(back.op.conv.stride_h, 2u);
  EXPECT_EQ(back.op.conv.pad_w, 0u);
  EXPECT_EQ(back.op.conv.dil_w, 2u);
  EXPECT_EQ(back.op.m_start, 128u);
  EXPECT_EQ(back.op.m_count, 256u);
  EXPECT_EQ(back.op.n_start, 64u);
  EXPECT_EQ(back.op.n_count, 192u);
  EXPECT_EQ(back.sync_object, r.sync_object);
  EXPECT_EQ(back.sync_message, r.sync_message);
}

TEST(MmeRegisters, AValueTooWideForItsRegisterIsRefused) {
  OperationRegisters r;
  r.op = gemm(4, 4, 4, false, false, 2);
  r.op.gemm.stride_a = 1ull << 33;
  EXPECT_THROW(
      {
        try {
          register_image(r);
        } catch (const std::invalid_argument& e) {
          EXPECT_THAT(e.what(), HasSubstr("stride_a"));
          throw;
        }
      },
      std::invalid_argument);
}

// The walk's cycles add up to the closed form for both dataflows, with and without overlapped
// fill, for whole and partial tiles and for a slice of the rows.
TEST(MmeSchedule, StepsAddUpToTheAnalyticCycles) {
  MmeConfig base;
  base.rows = 16, base.cols = 8, base.block_rows = 2, base.block_cols = 3,
  base.buffer = core::ByteSize{8192};
  std::vector<MmeOperation> ops = convolutions();
  for (std::uint32_t m : {1u, 16u, 33u, 100u})
    for (std::uint32_t n : {1u, 8u, 50u})
      for (std::uint32_t k : {1u, 7u, 64u, 300u}) ops.push_back(gemm(m, n, k, false, false, 2));
  MmeOperation slice = gemm(100, 30, 40);
  slice.m_start = 20, slice.m_count = 50;
  ops.push_back(slice);
  MmeOperation columns = gemm(30, 100, 40);
  columns.n_start = 17, columns.n_count = 60;
  ops.push_back(columns);
  for (Dataflow flow : {Dataflow::kOutputStationary, Dataflow::kWeightStationary})
    for (bool overlap : {true, false})
      for (const MmeOperation& op : ops) {
        MmeConfig c = base;
        c.dataflow = flow, c.overlap_fill = overlap;
        const GemmView v(op);
        const auto steps = schedule(c, v, Dtype::kBf16);
        const std::uint64_t sum =
            std::accumulate(steps.begin(), steps.end(), std::uint64_t{0},
                            [](std::uint64_t s, const Step& st) { return s + st.cycles; });
        EXPECT_EQ(sum, analytic_cycles(c, v, Dtype::kBf16))
            << v.m() << "x" << v.n() << "x" << v.k() << " flow " << static_cast<int>(flow)
            << " overlap " << overlap;
        std::uint64_t macs = 0;
        for (const Step& s : steps) macs += (s.m1 - s.m0) * (s.n1 - s.n0) * (s.k1 - s.k0);
        EXPECT_EQ(macs, v.batch() * (v.m_end() - v.m_begin()) * (v.n_end() - v.n_begin()) * v.k());
      }
}

// A full array does R x C multiply-accumulates a cycle: a large GEMM of whole tiles takes
// M N K / (R C) cycles plus one fill.
TEST(MmeSchedule, WholeTilesKeepTheArrayFull) {
  MmeConfig c;
  c.rows = 128, c.cols = 128;
  const GemmView v(gemm(1024, 512, 2048));
  EXPECT_EQ(analytic_cycles(c, v, Dtype::kBf16), 1024ull * 512 * 2048 / (128 * 128) + 254);
}

// Geometries: the same cells as a taller, narrower tile (or a wider, shorter one). A GEMM of 64
// columns fills a quarter of a 256 x 256 array's columns and half of a 512 x 128 tile's, so
// the tall tile takes half the cycles; an array without geometries refuses the tile, and so does
// one whose narrowest side is passed.
TEST(MmeSchedule, ATallTileFillsTheArrayOnANarrowGemm) {
  MmeConfig c;
  c.rows = c.cols = 256;
  c.min_tile_side = 128;
  MmeOperation op = gemm(4096, 64, 512);
  const std::uint64_t square = analytic_cycles(c, GemmView(op), Dtype::kBf16);
  op.tall = 1;
  const MmeConfig tall = shaped(c, op);
  EXPECT_EQ(tall.rows, 512);
  EXPECT_EQ(tall.cols, 128);
  const std::uint64_t cycles = analytic_cycles(tall, GemmView(op), Dtype::kBf16);
  EXPECT_EQ(square, 4096ull / 256 * 512 + 510);
  EXPECT_EQ(cycles, 4096ull / 512 * 512 + 638);
  op.tall = 2;  // 1024 x 64: narrower than the 128 the cells form
  EXPECT_THAT(geometry_problem(c, op).value_or(""), ::testing::HasSubstr("no narrower than 128"));
  EXPECT_THROW(shaped(c, op), std::invalid_argument);
  op.tall = 0, op.wide = 1;
  EXPECT_EQ(shaped(c, op).rows, 128);
  EXPECT_EQ(shaped(c, op).cols, 512);
  c.min_tile_side = 0;
  EXPECT_TRUE(geometry_problem(c, op).has_value());
  op.wide = 0;
  EXPECT_FALSE(geometry_problem(c, op).has_value());
}

TEST(MmeConfig, GeometriesNeedPowersOfTwo) {
  MmeConfig c;
  c.rows = 256, c.cols = 192, c.min_tile_side = 64;
  EXPECT_THROW(core::validate_config(c), std::invalid_argument);
  c.cols = 256, c.min_tile_side = 512;
  EXPECT_THROW(core::validate_config(c), std::invalid_argument);
  c.min_tile_side = 128;
  EXPECT_NO_THROW(core::validate_config(c));
}

}  // namespace
}  // namespace podsim::mme
