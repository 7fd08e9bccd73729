#include "hw/mme/operation.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace podsim::mme {
namespace {

bool float_type(Dtype t) { return t == Dtype::kF32 || t == Dtype::kBf16 || t == Dtype::kF16; }

// Where the input (NHWC) holds what output pixel (n, p, q) takes through filter tap (r, s) at
// channel ch, or -1 in the padding: a forward convolution's A and a weight gradient's B.
std::int64_t input_at(const ConvDesc& c, std::uint64_t n, std::uint64_t p, std::uint64_t q,
                      std::uint64_t r, std::uint64_t s, std::uint64_t ch) {
  const std::int64_t h = static_cast<std::int64_t>(p * c.stride_h + r * c.dil_h) - c.pad_h;
  const std::int64_t w = static_cast<std::int64_t>(q * c.stride_w + s * c.dil_w) - c.pad_w;
  if (h < 0 || h >= c.h || w < 0 || w >= c.w) return -1;
  return static_cast<std::int64_t>(
      ((n * c.h + static_cast<std::uint64_t>(h)) * c.w + static_cast<std::uint64_t>(w)) * c.c + ch);
}

// Where the output gradient (NPQK, P x Q pixels) holds what input pixel (n, h, w) takes through
// tap (r, s) from filter ko, or -1 where no output pixel reaches it (padding, a stride's gap):
// a data gradient's A.
std::int64_t output_grad_at(const ConvDesc& c, std::uint64_t p_count, std::uint64_t q_count,
                            std::uint64_t n, std::uint64_t h, std::uint64_t w, std::uint64_t r,
                            std::uint64_t s, std::uint64_t ko) {
  const std::int64_t pn =
      static_cast<std::int64_t>(h + c.pad_h) - static_cast<std::int64_t>(r * c.dil_h);
  const std::int64_t qn =
      static_cast<std::int64_t>(w + c.pad_w) - static_cast<std::int64_t>(s * c.dil_w);
  if (pn < 0 || qn < 0 || pn % c.stride_h || qn % c.stride_w) return -1;
  const std::uint64_t p = static_cast<std::uint64_t>(pn) / c.stride_h,
                      q = static_cast<std::uint64_t>(qn) / c.stride_w;
  if (p >= p_count || q >= q_count) return -1;
  return static_cast<std::int64_t>(((n * p_count + p) * q_count + q) * c.k + ko);
}

std::uint32_t packed(std::uint32_t given, std::uint32_t fallback) {
  return given ? given : fallback;
}

// The GEMM with its leading dimensions and batch strides filled in where left at 0.
GemmDesc resolved(const GemmDesc& g) {
  GemmDesc r = g;
  r.lda = packed(g.lda, g.trans_a ? g.m : g.k);
  r.ldb = packed(g.ldb, g.trans_b ? g.k : g.n);
  r.ldc = packed(g.ldc, g.n);
  if (!r.stride_a) r.stride_a = static_cast<std::uint64_t>(g.trans_a ? g.k : g.m) * r.lda;
  if (!r.stride_b) r.stride_b = static_cast<std::uint64_t>(g.trans_b ? g.n : g.k) * r.ldb;
  if (!r.stride_c) r.stride_c = static_cast<std::uint64_t>(g.m) * r.ldc;
  return r;
}

// Adds `length` elements, consecutive in memory from `at` and in the panel from `pos` by `step`,
// as one element at a time would: each joins the last run when it follows it in memory and in
// the panel (a run of one taking the step its second element gives).
void append(std::vector<Run>& runs, std::uint64_t at, std::uint32_t pos, std::uint32_t step,
            std::uint64_t length) {
  const auto joins = [&](std::uint64_t offset, std::uint32_t position) {
    if (runs.empty()) return false;
    const Run& last = runs.back();
    const std::uint32_t s = last.count == 1 ? position - last.first : last.step;
    return offset == last.offset + last.count && position == last.first + last.count * s &&
           position > last.first;
  };
  const auto add = [&](std::uint64_t offset, std::uint32_t position) {
    if (joins(offset, position)) {
      Run& last = runs.back();
      if (last.count == 1) last.step = position - last.first;
      ++last.count;
    } else {
      runs.push_back(Run{offset, 1, position, 1});
    }
  };
  add(at, pos);
  if (length == 1) return;
  add(at + 1, pos + step);
  if (length == 2) return;
  // The rest follow the second in memory and in the panel by the same step.
  Run& last = runs.back();
  last.step = step;  // the third element sets it when the second started a run
  last.count += static_cast<std::uint32_t>(length - 2);
}

// Runs of a panel, found by walking its elements in the order that makes them consecutive in
// memory (`outer` then `inner`) and joining neighbours whose panel positions step evenly. When
// the panel is `dense` (a GEMM's: every element in memory, consecutive along `inner`), each
// outer line is one run, found from its first two elements. Otherwise each outer line is still
// consecutive in memory (the operands a convolution walks tap by tap take tap_runs instead) but
// may read as zeros (-1) and is joined to its neighbours element by element.
template <class Offset, class Position>
std::vector<Run> walk(std::uint64_t outer0, std::uint64_t outer1, std::uint64_t inner0,
                      std::uint64_t inner1, Offset offset, Position position, bool dense) {
  std::vector<Run> runs;
  const auto count = static_cast<std::uint32_t>(inner1 - inner0);
  for (std::uint64_t o = outer0; dense && o < outer1; ++o) {
    const auto at = static_cast<std::uint64_t>(offset(o, inner0));
    const auto pos = static_cast<std::uint32_t>(position(o, inner0));
    const std::uint32_t step =
        count > 1 ? static_cast<std::uint32_t>(position(o, inner0 + 1)) - pos : 1;
    if (!runs.empty()) {
      Run& last = runs.back();
      if (at == last.offset + last.count && step == last.step &&
          pos == last.first + last.count * step) {
        last.count += count;
        continue;
      }
    }
    runs.push_back(Run{at, count, pos, step});
  }
  for (std::uint64_t o = outer0; !dense && o < outer1; ++o) {
    const std::int64_t at = offset(o, inner0);
    if (at < 0) continue;
    const auto pos = static_cast<std::uint32_t>(position(o, inner0));
    const std::uint32_t step =
        count > 1 ? static_cast<std::uint32_t>(position(o, inner0 + 1)) - pos : 1;
    append(runs, static_cast<std::uint64_t>(at), pos, step, count);
  }
  return runs;
}

}  // namespace

const char* to_string(MmeOp op) {
  switch (op) {
    case MmeOp::kGemm:
      return "gemm";
    case MmeOp::kConvForward:
      return "conv_fwd";
    case MmeOp::kConvDataGrad:
      return "conv_dgrad";
    case MmeOp::kConvWeightGrad:
      return "conv_wgrad";
  }
  return "?";
}

std::uint32_t ConvDesc::p() const {
  const std::int64_t span = static_cast<std::int64_t>(dil_h) * (r - 1) + 1;
  const std::int64_t room = static_cast<std::int64_t>(h) + 2 * pad_h - span;
  return room < 0 || stride_h == 0 ? 0 : static_cast<std::uint32_t>(room / stride_h + 1);
}
std::uint32_t ConvDesc::q() const {
  const std::int64_t span = static_cast<std::int64_t>(dil_w) * (s - 1) + 1;
  const std::int64_t room = static_cast<std::int64_t>(w) + 2 * pad_w - span;
  return room < 0 || stride_w == 0 ? 0 : static_cast<std::uint32_t>(room / stride_w + 1);
}

std::optional<std::string> MmeOperation::problem() const {
  if (!float_type(in)) return fmt::format("operand type {} (f32, bf16 or f16)", tpc::info(in).name);
  if (!float_type(out))
    return fmt::format("result type {} (f32, bf16 or f16)", tpc::info(out).name);
  if (op == MmeOp::kGemm) {
    if (gemm.m == 0 || gemm.n == 0 || gemm.k == 0 || gemm.batch == 0) {
      return fmt::format("GEMM of {} x {} x {} (batch {}): no dimension may be 0", gemm.m, gemm.n,
                         gemm.k, gemm.batch);
    }
    const GemmDesc g = resolved(gemm);
    if (g.lda < (g.trans_a ? g.m : g.k) || g.ldb < (g.trans_b ? g.k : g.n) || g.ldc < g.n) {
      return std::string("a leading dimension shorter than its row");
    }
  } else {
    const ConvDesc& c = conv;
    if (c.n == 0 || c.c == 0 || c.h == 0 || c.w == 0 || c.k == 0 || c.r == 0 || c.s == 0) {
      return std::string("convolution with a dimension of 0");
    }
    if (c.stride_h == 0 || c.stride_w == 0 || c.dil_h == 0 || c.dil_w == 0) {
      return std::string("convolution strides and dilations must be 1 or more");
    }
    if (c.p() == 0 || c.q() == 0) {
      return fmt::format(
          "a {}x{} filter (dilation {}x{}) does not fit a {}x{} input padded by {}x{}", c.r, c.s,
          c.dil_h, c.dil_w, c.h, c.w, c.pad_h, c.pad_w);
    }
  }
  const GemmView v(*this);
  if (m_count != 0 && static_cast<std::uint64_t>(m_start) + m_count > v.m()) {
    return fmt::format("rows {} to {} of a GEMM of {} rows", m_start, m_start + m_count, v.m());
  }
  if (n_count != 0 && static_cast<std::uint64_t>(n_start) + n_count > v.n()) {
    return fmt::format("columns {} to {} of a GEMM of {} columns", n_start, n_start + n_count,
                       v.n());
  }
  if (v.m() * v.n() > (1ull << 40) || v.k() > (1ull << 31))
    return std::string("an operation too large to describe");
  return std::nullopt;
}

double MmeOperation::flops() const {
  const GemmView v(*this);
  return 2.0 * static_cast<double>(v.batch()) * static_cast<double>(v.m()) *
         static_cast<double>(v.n()) * static_cast<double>(v.k());
}

GemmView::GemmView(const MmeOperation& op) : op_(op) {
  const ConvDesc& c = op.conv;
  p_ = c.p();
  q_ = c.q();
  switch (op.op) {
    case MmeOp::kGemm:
      op_.gemm = resolved(op.gemm);
      m_ = op.gemm.m, n_ = op.gemm.n, k_ = op.gemm.k, batch_ = op.gemm.batch;
      break;
    case MmeOp::kConvForward:
      m_ = std::uint64_t{c.n} * p_ * q_, n_ = c.k, k_ = std::uint64_t{c.r} * c.s * c.c;
      break;
    case MmeOp::kConvDataGrad:
      m_ = std::uint64_t{c.n} * c.h * c.w, n_ = c.c, k_ = std::uint64_t{c.r} * c.s * c.k;
      break;
    case MmeOp::kConvWeightGrad:
      m_ = c.k, n_ = std::uint64_t{c.r} * c.s * c.c, k_ = std::uint64_t{c.n} * p_ * q_;
      break;
  }
  m_begin_ = op.m_count ? op.m_start : 0;
  m_end_ = op.m_count ? std::uint64_t{op.m_start} + op.m_count : m_;
  n_begin_ = op.n_count ? op.n_start : 0;
  n_end_ = op.n_count ? std::uint64_t{op.n_start} + op.n_count : n_;
}

std::int64_t GemmView::a(std::uint64_t batch, std::uint64_t m, std::uint64_t k) const {
  const ConvDesc& c = op_.conv;
  switch (op_.op) {
    case MmeOp::kGemm: {
      const GemmDesc& g = op_.gemm;
      return static_cast<std::int64_t>(batch * g.stride_a +
                                       (g.trans_a ? k * g.lda + m : m * g.lda + k));
    }
    case MmeOp::kConvForward: {  // m = (n, p, q), k = (r, s, c) over the input
      const std::uint64_t n = m / (std::uint64_t{p_} * q_), p = m / q_ % p_, q = m % q_;
      const std::uint64_t r = k / (std::uint64_t{c.s} * c.c), s = k / c.c % c.s, ch = k % c.c;
      return input_at(c, n, p, q, r, s, ch);
    }
    case MmeOp::kConvDataGrad: {  // m = (n, h, w), k = (r, s, ko) over the output gradient
      const std::uint64_t n = m / (std::uint64_t{c.h} * c.w), h = m / c.w % c.h, w = m % c.w;
      const std::uint64_t r = k / (std::uint64_t{c.s} * c.k), s = k / c.k % c.s, ko = k % c.k;
      return output_grad_at(c, p_, q_, n, h, w, r, s, ko);
    }
    case MmeOp::kConvWeightGrad:  // m = ko, k = (n, p, q) over the output gradient
      return static_cast<std::int64_t>(k * c.k + m);
  }
  return -1;
}

std::int64_t GemmView::b(std::uint64_t batch, std::uint64_t k, std::uint64_t n) const {
  const ConvDesc& c = op_.conv;
  switch (op_.op) {
    case MmeOp::kGemm: {
      const GemmDesc& g = op_.gemm;
      return static_cast<std::int64_t>(batch * g.stride_b +
                                       (g.trans_b ? n * g.ldb + k : k * g.ldb + n));
    }
    case MmeOp::kConvForward:  // k = (r, s, c), n = ko over the filters KRSC
      return static_cast<std::int64_t>(n * k_ + k);
    case MmeOp::kConvDataGrad: {  // k = (r, s, ko), n = c
      const std::uint64_t r = k / (std::uint64_t{c.s} * c.k), s = k / c.k % c.s, ko = k % c.k;
      return static_cast<std::int64_t>(((ko * c.r + r) * c.s + s) * c.c + n);
    }
    case MmeOp::kConvWeightGrad: {  // k = (n, p, q), n = (r, s, c) over the input
      const std::uint64_t img = k / (std::uint64_t{p_} * q_), p = k / q_ % p_, q = k % q_;
      const std::uint64_t r = n / (std::uint64_t{c.s} * c.c), s = n / c.c % c.s, ch = n % c.c;
      return input_at(c, img, p, q, r, s, ch);
    }
  }
  return -1;
}

std::int64_t GemmView::c(std::uint64_t batch, std::uint64_t m, std::uint64_t n) const {
  if (op_.op == MmeOp::kGemm) {
    return static_cast<std::int64_t>(batch * op_.gemm.stride_c + m * op_.gemm.ldc + n);
  }
  return static_cast<std::int64_t>(m * n_ + n);
}

namespace {

// Runs of the row-major panel [r0, r1) x [c0, c1) of a matrix whose element (r, c) sits at
// `offset(r, c)`; `down_rows` says memory is consecutive down a column rather than along a row.
template <class Offset>
std::vector<Run> block_runs(std::uint64_t r0, std::uint64_t r1, std::uint64_t c0, std::uint64_t c1,
                            Offset offset, bool down_rows, bool dense) {
  const std::uint64_t width = c1 - c0;
  const auto position = [&](std::uint64_t r, std::uint64_t c) {
    return (r - r0) * width + (c - c0);
  };
  if (down_rows) {
    const auto swap = [](auto f) {
      return [f](std::uint64_t c, std::uint64_t r) { return f(r, c); };
    };
    return walk(c0, c1, r0, r1, swap(offset), swap(position), dense);
  }
  return walk(r0, r1, c0, c1, offset, position, dense);
}

// The runs of a convolution operand walked pixel by pixel and, within a pixel, tap by tap: a
// forward convolution's input (pixels [o0, o1) of the output, taps and channels [i0, i1)), a
// data gradient's output gradient (pixels of the input gradient) and a weight gradient's input
// (rows k, columns n), in runs of one tap's channels (consecutive in memory, or all padding).
// The elements GemmView::a and b give, but where they take every element's coordinates apart
// with divisions, a pixel's are taken apart once here and each tap's follow from the one before
// (the MME's panels of a ResNet profile spent most of their set-up there).
std::vector<Run> tap_runs(const MmeOperation& op, std::uint64_t o0, std::uint64_t o1,
                          std::uint64_t i0, std::uint64_t i1) {
  const ConvDesc& c = op.conv;
  const bool data_grad = op.op == MmeOp::kConvDataGrad;
  const std::uint64_t p_count = c.p(), q_count = c.q();
  // Pixels are (n, y, x) of the output (forward, weight gradient) or of the input (data
  // gradient); taps (r, s, ch) with ch over C, or over K for the data gradient.
  const std::uint64_t rows = data_grad ? c.h : p_count, cols = data_grad ? c.w : q_count;
  const std::uint64_t channels = data_grad ? c.k : c.c;
  const std::uint64_t width = i1 - i0;
  // The walk, given where a pixel's tap reads (chosen once, not per tap).
  const auto walk_taps = [&](auto at_of) {
    std::vector<Run> runs;
    for (std::uint64_t o = o0; o < o1; ++o) {
      const std::uint64_t n = o / (rows * cols), y = o / cols % rows, x = o % cols;
      std::uint64_t r = i0 / (std::uint64_t{c.s} * channels), s = i0 / channels % c.s,
                    ch = i0 % channels;
      const auto row_pos = static_cast<std::uint32_t>((o - o0) * width);
      for (std::uint64_t i = i0; i < i1;) {
        const std::uint64_t length = std::min(channels - ch, i1 - i);
        const std::int64_t at = at_of(n, y, x, r, s, ch);
        if (at >= 0) {
          append(runs, static_cast<std::uint64_t>(at), row_pos + static_cast<std::uint32_t>(i - i0),
                 1, length);
        }
        i += length;
        ch = 0;
        if (++s == c.s) {
          s = 0;
          ++r;
        }
      }
    }
    return runs;
  };
  using U = std::uint64_t;
  if (data_grad) {
    return walk_taps([&](U n, U y, U x, U r, U s, U ch) {
      return output_grad_at(c, p_count, q_count, n, y, x, r, s, ch);
    });
  }
  return walk_taps([&](U n, U y, U x, U r, U s, U ch) { return input_at(c, n, y, x, r, s, ch); });
}

}  // namespace

std::vector<Run> a_runs(const GemmView& v, std::uint64_t batch, std::uint64_t m0, std::uint64_t m1,
                        std::uint64_t k0, std::uint64_t k1) {
  const MmeOp op = v.operation().op;
  if (op == MmeOp::kConvForward || op == MmeOp::kConvDataGrad)
    return tap_runs(v.operation(), m0, m1, k0, k1);
  return block_runs(
      m0, m1, k0, k1, [&](std::uint64_t m, std::uint64_t k) { return v.a(batch, m, k); },
      v.a_along_m(), v.dense());
}

std::vector<Run> b_runs(const GemmView& v, std::uint64_t batch, std::uint64_t k0, std::uint64_t k1,
                        std::uint64_t n0, std::uint64_t n1) {
  if (v.operation().op == MmeOp::kConvWeightGrad) return tap_runs(v.operation(), k0, k1, n0, n1);
  return block_runs(
      k0, k1, n0, n1, [&](std::uint64_t k, std::uint64_t n) { return v.b(batch, k, n); },
      v.b_along_k(), v.dense());
}

std::vector<Run> c_runs(const GemmView& v, std::uint64_t batch, std::uint64_t m0, std::uint64_t m1,
                        std::uint64_t n0, std::uint64_t n1) {
  return block_runs(
      m0, m1, n0, n1, [&](std::uint64_t m, std::uint64_t n) { return v.c(batch, m, n); }, false,
      v.dense());
}

namespace {
// From a matrix's first element to one past its last: the last row ends with the row itself,
// not its leading dimension (a view into a wider tensor may end there).
std::uint64_t span(std::uint64_t rows, std::uint64_t row, std::uint64_t ld) {
  return rows == 0 ? 0 : (rows - 1) * ld + row;
}
}  // namespace

std::uint64_t a_elements(const MmeOperation& op) {
  const ConvDesc& c = op.conv;
  switch (op.op) {
    case MmeOp::kGemm: {
      const GemmDesc g = resolved(op.gemm);
      return (g.batch - 1) * g.stride_a + span(g.trans_a ? g.k : g.m, g.trans_a ? g.m : g.k, g.lda);
    }
    case MmeOp::kConvForward:
      return std::uint64_t{c.n} * c.h * c.w * c.c;
    default:
      return std::uint64_t{c.n} * c.p() * c.q() * c.k;  // the output gradient
  }
}

std::uint64_t b_elements(const MmeOperation& op) {
  const ConvDesc& c = op.conv;
  switch (op.op) {
    case MmeOp::kGemm: {
      const GemmDesc g = resolved(op.gemm);
      return (g.batch - 1) * g.stride_b + span(g.trans_b ? g.n : g.k, g.trans_b ? g.k : g.n, g.ldb);
    }
    case MmeOp::kConvWeightGrad:
      return std::uint64_t{c.n} * c.h * c.w * c.c;
    default:
      return std::uint64_t{c.k} * c.r * c.s * c.c;  // the filters
  }
}

std::uint64_t c_elements(const MmeOperation& op) {
  const ConvDesc& c = op.conv;
  switch (op.op) {
    case MmeOp::kGemm: {
      const GemmDesc g = resolved(op.gemm);
      return (g.batch - 1) * g.stride_c + span(g.m, g.n, g.ldc);
    }
    case MmeOp::kConvForward:
      return std::uint64_t{c.n} * c.p() * c.q() * c.k;
    case MmeOp::kConvDataGrad:
      return std::uint64_t{c.n} * c.h * c.w * c.c;
    case MmeOp::kConvWeightGrad:
      return std::uint64_t{c.k} * c.r * c.s * c.c;
  }
  return 0;
}

void reference(const MmeOperation& op, const std::vector<double>& a, const std::vector<double>& b,
               std::vector<double>& out, std::vector<double>* magnitude) {
  if (!op.accumulate) std::fill(out.begin(), out.end(), 0.0);
  if (magnitude) magnitude->assign(out.size(), 0.0);
  if (op.op == MmeOp::kGemm) {
    // Row by row, k outer and n inner: the same sums, walked in the order memory is laid out.
    const GemmDesc g = resolved(op.gemm);
    std::vector<double> row(g.n), row_magnitude(g.n);
    const std::uint64_t b_step = g.trans_b ? g.ldb : 1;
    for (std::uint64_t t = 0; t < g.batch; ++t)
      for (std::uint64_t m = 0; m < g.m; ++m) {
        std::fill(row.begin(), row.end(), 0.0);
        std::fill(row_magnitude.begin(), row_magnitude.end(), 0.0);
        for (std::uint64_t k = 0; k < g.k; ++k) {
          const double x = a[t * g.stride_a + (g.trans_a ? k * g.lda + m : m * g.lda + k)];
          const double* y = b.data() + t * g.stride_b + (g.trans_b ? k : k * g.ldb);
          if (b_step == 1) {
            for (std::uint64_t n = 0; n < g.n; ++n) row[n] += x * y[n];
          } else {
            for (std::uint64_t n = 0; n < g.n; ++n) row[n] += x * y[n * b_step];
          }
          if (magnitude) {
            for (std::uint64_t n = 0; n < g.n; ++n)
              row_magnitude[n] += std::fabs(x * y[n * b_step]);
          }
        }
        for (std::uint64_t n = 0; n < g.n; ++n) {
          out[t * g.stride_c + m * g.ldc + n] += row[n];
          if (magnitude) (*magnitude)[t * g.stride_c + m * g.ldc + n] = row_magnitude[n];
        }
      }
    return;
  }
  // Convolutions: every (image, output position, filter tap) pair, scattered or gathered by
  // the operation's own definition.
  const ConvDesc& c = op.conv;
  const std::uint64_t P = c.p(), Q = c.q();
  for (std::uint64_t n = 0; n < c.n; ++n)
    for (std::uint64_t p = 0; p < P; ++p)
      for (std::uint64_t q = 0; q < Q; ++q)
        for (std::uint64_t r = 0; r < c.r; ++r)
          for (std::uint64_t s = 0; s < c.s; ++s) {
            const std::int64_t h =
                static_cast<std::int64_t>(p * c.stride_h + r * c.dil_h) - c.pad_h;
            const std::int64_t w =
                static_cast<std::int64_t>(q * c.stride_w + s * c.dil_w) - c.pad_w;
            if (h < 0 || h >= c.h || w < 0 || w >= c.w) continue;
            const std::uint64_t x_at =
                ((n * c.h + static_cast<std::uint64_t>(h)) * c.w + static_cast<std::uint64_t>(w)) *
                c.c;
            const std::uint64_t y_at = ((n * P + p) * Q + q) * c.k;
            for (std::uint64_t ko = 0; ko < c.k; ++ko) {
              const std::uint64_t w_at = ((ko * c.r + r) * c.s + s) * c.c;
              for (std::uint64_t ch = 0; ch < c.c; ++ch) {
                std::uint64_t to = 0;
                double product = 0;
                switch (op.op) {
                  case MmeOp::kConvForward:
                    to = y_at + ko, product = a[x_at + ch] * b[w_at + ch];
                    break;
                  case MmeOp::kConvDataGrad:
                    to = x_at + ch, product = a[y_at + ko] * b[w_at + ch];
                    break;
                  default:
                    to = w_at + ch, product = a[y_at + ko] * b[x_at + ch];
                    break;
                }
                out[to] += product;
                if (magnitude) (*magnitude)[to] += std::fabs(product);
              }
            }
          }
}

}  // namespace podsim::mme
