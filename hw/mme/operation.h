// What an MME computes, as plain data: a (batched) GEMM with optional transposes, or a
// convolution (forward, data gradient, weight gradient) seen as an implicit GEMM, with bf16, f16
// or f32 operands accumulated in f32. The implicit-GEMM view maps every (m, k) of the left
// operand, (k, n) of the right one and (m, n) of the result to an element of a tensor in memory
// (or to a zero: convolution padding), which is how the MME's address generators walk them.
// Layouts (dimension 0 fastest): GEMM matrices row-major with leading dimensions; convolution
// activations NHWC (channels fastest), filters KRSC, outputs NPQK (docs/mme.md).
// Captures: shapes, strides, padding, dilation, the rows of the GEMM a descriptor covers (so
// several engines can share one operation). Ignores: grouped and depthwise convolutions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "hw/tpc/isa.h"

namespace podsim::mme {

using tpc::Dtype;

enum class MmeOp : std::uint8_t {
  kGemm = 0,
  kConvForward = 1,
  kConvDataGrad = 2,
  kConvWeightGrad = 3
};
const char* to_string(MmeOp op);

struct GemmDesc {
  std::uint32_t m = 0, n = 0, k = 0, batch = 1;
  bool trans_a = false, trans_b = false;
  std::uint32_t lda = 0, ldb = 0, ldc = 0;  // elements between rows as stored (0: packed)
  std::uint64_t stride_a = 0, stride_b = 0, stride_c = 0;  // elements between batch matrices
};

struct ConvDesc {
  std::uint32_t n = 0, c = 0, h = 0, w = 0;  // input: images, channels, height, width
  std::uint32_t k = 0, r = 0, s = 0;         // filters: output channels, height, width
  std::uint32_t stride_h = 1, stride_w = 1, pad_h = 0, pad_w = 0, dil_h = 1, dil_w = 1;
  std::uint32_t p() const;  // output height
  std::uint32_t q() const;  // output width
};

struct MmeOperation {
  MmeOp op = MmeOp::kGemm;
  Dtype in = Dtype::kBf16, out = Dtype::kBf16;
  bool accumulate = false;  // add the result to what the output holds
  GemmDesc gemm;
  ConvDesc conv;
  std::uint64_t a = 0, b = 0, c = 0;  // operand and result addresses
  std::uint32_t m_start = 0,
                m_count = 0;  // rows of the implicit GEMM this descriptor covers (0: all)
  std::uint32_t n_start = 0,
                n_count = 0;  // and columns (0: all): engines share a short result by columns
  // The output tile the array's cells form (MmeConfig::min_tile_side): rows * 2^tall / 2^wide
  // by cols / 2^tall * 2^wide; at most one of the two is not 0.
  std::uint8_t tall = 0, wide = 0;

  // Why the MME cannot run it, or nullopt.
  std::optional<std::string> problem() const;
  double flops() const;  // 2 M N K (the whole operation, not just this descriptor's rows)
};

// The operation as a GEMM of `batch` products, rows [m_begin, m_end) and columns [n_begin, n_end)
// of M x N = (M x K) (K x N).
class GemmView {
 public:
  explicit GemmView(const MmeOperation& op);
  std::uint64_t m() const { return m_; }
  std::uint64_t n() const { return n_; }
  std::uint64_t k() const { return k_; }
  std::uint64_t batch() const { return batch_; }
  std::uint64_t m_begin() const { return m_begin_; }
  std::uint64_t m_end() const { return m_end_; }
  std::uint64_t n_begin() const { return n_begin_; }
  std::uint64_t n_end() const { return n_end_; }
  // Which way operands lie in memory: A contiguous along m (a transposed A, a weight
  // gradient's output gradient) rather than k; B along k (a transposed B, the forward
  // convolution's filters) rather than n.
  bool a_along_m() const {
    return op_.op == MmeOp::kConvWeightGrad || (op_.op == MmeOp::kGemm && op_.gemm.trans_a);
  }
  bool b_along_k() const {
    return op_.op == MmeOp::kConvForward || (op_.op == MmeOp::kGemm && op_.gemm.trans_b);
  }

  // Every element of every operand is in memory (a GEMM: no convolution padding).
  bool dense() const { return op_.op == MmeOp::kGemm; }
  const MmeOperation& operation() const { return op_; }
  // Element offsets from the operand's address, or -1 where the operand reads as zero.
  std::int64_t a(std::uint64_t batch, std::uint64_t m, std::uint64_t k) const;
  std::int64_t b(std::uint64_t batch, std::uint64_t k, std::uint64_t n) const;
  std::int64_t c(std::uint64_t batch, std::uint64_t m, std::uint64_t n) const;

 private:
  MmeOperation op_;
  std::uint64_t m_ = 0, n_ = 0, k_ = 0, batch_ = 1, m_begin_ = 0, m_end_ = 0, n_begin_ = 0,
                n_end_ = 0;
  std::uint32_t p_ = 0, q_ = 0;
};

// A contiguous run of operand elements in memory and where they go in a panel: element i of the
// run is panel position first + i * step.
struct Run {
  std::uint64_t offset;  // elements from the operand's address
  std::uint32_t count;
  std::uint32_t first, step;
};

// The runs covering a panel: rows [m0, m1) x columns [k0, k1) of the left operand, laid out
// (m - m0) * (k1 - k0) + (k - k0); or [k0, k1) x [n0, n1) of the right one, laid out
// (k - k0) * (n1 - n0) + (n - n0); or the result's [m0, m1) x [n0, n1). Zeros are left out.
std::vector<Run> a_runs(const GemmView& v, std::uint64_t batch, std::uint64_t m0, std::uint64_t m1,
                        std::uint64_t k0, std::uint64_t k1);
std::vector<Run> b_runs(const GemmView& v, std::uint64_t batch, std::uint64_t k0, std::uint64_t k1,
                        std::uint64_t n0, std::uint64_t n1);
std::vector<Run> c_runs(const GemmView& v, std::uint64_t batch, std::uint64_t m0, std::uint64_t m1,
                        std::uint64_t n0, std::uint64_t n1);

// The CPU reference: every output element in double precision, by direct loops over the
// operation's definition (not through the implicit GEMM), from operands given as doubles in
// their memory layout; `out` holds the previous output when accumulating. `magnitude`, when
// given, receives sum |a b| per output element (the scale of its rounding errors).
void reference(const MmeOperation& op, const std::vector<double>& a, const std::vector<double>& b,
               std::vector<double>& out, std::vector<double>* magnitude = nullptr);
// Elements each operand spans in memory (for allocating and for the reference).
std::uint64_t a_elements(const MmeOperation& op);
std::uint64_t b_elements(const MmeOperation& op);
std::uint64_t c_elements(const MmeOperation& op);

}  // namespace podsim::mme
