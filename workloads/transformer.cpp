#include "workloads/transformer.h"

#include <fmt/format.h>

#include <cmath>

#include "core/random.h"
#include "workloads/dense.h"
#include "workloads/values.h"

namespace podsim::workloads {
namespace {

using synapse::Session;
using tpc::Dtype;

constexpr double kGeluC = 0.7978845608028654;  // sqrt(2 / pi)

double gelu(double x) { return 0.5 * x * (1 + std::tanh(kGeluC * (x + 0.044715 * x * x * x))); }
double gelu_grad(double x) {
  const double u = kGeluC * (x + 0.044715 * x * x * x);
  const double t = std::tanh(u);
  return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * kGeluC * (1 + 3 * 0.044715 * x * x);
}

// Row-major matrices as the device stores them, element (row, column) at row * ld + column.
struct Mat {
  const std::vector<double>* data;
  std::size_t offset, ld;
  bool trans;  // the operand is the transpose of what is stored
  double at(std::size_t r, std::size_t c) const {
    return trans ? (*data)[offset + c * ld + r] : (*data)[offset + r * ld + c];
  }
};

// c[offset + i * ldc + j] = sum_k a(i, k) b(k, j), i < m, j < n.
void matmul(const Mat& a, const Mat& b, std::vector<double>& c, std::size_t c_offset,
            std::size_t ldc, std::size_t m, std::size_t n, std::size_t k) {
  for (std::size_t i = 0; i < m; ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      double v = 0;
      for (std::size_t l = 0; l < k; ++l) v += a.at(i, l) * b.at(l, j);
      c[c_offset + i * ldc + j] = v;
    }
  }
}

// Per token (a row of `width`): mean, rstd, and y = (x - mean) rstd gamma + beta.
void layer_norm(const std::vector<double>& x, const std::vector<double>& g,
                const std::vector<double>& b, std::size_t width, double eps, std::vector<double>& y,
                std::vector<double>& xhat, std::vector<double>& rstd) {
  const std::size_t rows = x.size() / width;
  y.resize(x.size());
  xhat.resize(x.size());
  rstd.resize(rows);
  for (std::size_t t = 0; t < rows; ++t) {
    double mean = 0, var = 0;
    for (std::size_t i = 0; i < width; ++i) mean += x[t * width + i];
    mean /= double(width);
    for (std::size_t i = 0; i < width; ++i) var += std::pow(x[t * width + i] - mean, 2);
    rstd[t] = 1 / std::sqrt(var / double(width) + eps);
    for (std::size_t i = 0; i < width; ++i) {
      xhat[t * width + i] = (x[t * width + i] - mean) * rstd[t];
      y[t * width + i] = xhat[t * width + i] * g[i] + b[i];
    }
  }
}

void layer_norm_backward(const std::vector<double>& dy, const std::vector<double>& xhat,
                         const std::vector<double>& rstd, const std::vector<double>& g,
                         std::size_t width, std::vector<double>& dx, std::vector<double>& dg,
                         std::vector<double>& db) {
  const std::size_t rows = dy.size() / width;
  dx.assign(dy.size(), 0.0);
  dg.assign(width, 0.0);
  db.assign(width, 0.0);
  for (std::size_t t = 0; t < rows; ++t) {
    double mean_d = 0, mean_dx = 0;
    for (std::size_t i = 0; i < width; ++i) {
      const double d = dy[t * width + i] * g[i];
      mean_d += d;
      mean_dx += d * xhat[t * width + i];
      dg[i] += dy[t * width + i] * xhat[t * width + i];
      db[i] += dy[t * width + i];
    }
    mean_d /= double(width);
    mean_dx /= double(width);
    for (std::size_t i = 0; i < width; ++i) {
      const double d = dy[t * width + i] * g[i];
      dx[t * width + i] = rstd[t] * (d - mean_d - xhat[t * width + i] * mean_dx);
    }
  }
}

std::vector<double> add(const std::vector<double>& a, const std::vector<double>& b) {
  std::vector<double> c(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) c[i] = a[i] + b[i];
  return c;
}

// y[t, o] = sum_i x[t, i] w[i, o] + b[o].
std::vector<double> linear(const std::vector<double>& x, const std::vector<double>& w,
                           const std::vector<double>& b, std::size_t tokens, std::size_t in,
                           std::size_t out) {
  std::vector<double> y(tokens * out);
  matmul({&x, 0, in, false}, {&w, 0, out, false}, y, 0, out, tokens, out, in);
  for (std::size_t t = 0; t < tokens; ++t) {
    for (std::size_t o = 0; o < out; ++o) y[t * out + o] += b[o];
  }
  return y;
}

// dw = x^T dy, db = column sums of dy, dx = dy w^T.
void linear_backward(const std::vector<double>& x, const std::vector<double>& w,
                     const std::vector<double>& dy, std::size_t tokens, std::size_t in,
                     std::size_t out, std::vector<double>& dw, std::vector<double>& db,
                     std::vector<double>* dx) {
  dw.assign(in * out, 0.0);
  matmul({&x, 0, in, true}, {&dy, 0, out, false}, dw, 0, out, in, out, tokens);
  db.assign(out, 0.0);
  for (std::size_t t = 0; t < tokens; ++t) {
    for (std::size_t o = 0; o < out; ++o) db[o] += dy[t * out + o];
  }
  if (dx != nullptr) {
    dx->assign(tokens * in, 0.0);
    matmul({&dy, 0, out, false}, {&w, 0, out, true}, *dx, 0, in, tokens, in, out);
  }
}

}  // namespace

std::string TransformerConfig::problem() const {
  if (batch == 0 || sequence == 0 || hidden == 0 || heads == 0 || ffn == 0)
    return "batch, sequence, hidden, heads and ffn must be at least 1";
  if (hidden % heads != 0)
    return fmt::format("hidden {} is not a multiple of heads {}", hidden, heads);
  if (hidden > 10240) return "hidden at most 10240 (layer norm's backward rows)";
  if (ffn > 20480) return fmt::format("ffn {} at most 20480 (the MLP's rows)", ffn);
  if (sequence > 20480) return "sequence at most 20480 (softmax rows)";
  if (dtype != Dtype::kF32 && dtype != Dtype::kBf16 && dtype != Dtype::kF16)
    return fmt::format("type {}: f32, bf16 or f16", tpc::info(dtype).name);
  if (!(dropout >= 0 && dropout < 1))
    return fmt::format("dropout {} is not in [0, 1) (the probability of dropping)", dropout);
  if (dropout > 0 && dtype == Dtype::kF32)
    return "dropout takes bf16 or f16 (the dropout kernels' types), not f32";
  if (fused_attention && dropout > 0 && heads % 2 != 0 && sequence % 2 != 0) {
    return fmt::format(
        "fused attention with dropout takes an even number of scores a sequence (heads {} x "
        "sequence {} squared is odd): each sequence's draws start at an even element",
        heads, sequence);
  }
  if (packed > 1 && sequence % packed != 0)
    return fmt::format("sequence {} is not a multiple of packed {} (sequences a row)", sequence,
                       packed);
  return {};
}

std::uint32_t TransformerConfig::dropout_seed(int which) const {
  // One seed per node, spread over 32 bits from the layer's seed (a SplitMix64 step each).
  return static_cast<std::uint32_t>(
      core::Random::mix(seed + 0x9E3779B97F4A7C15ull * static_cast<std::uint64_t>(which)) >> 32);
}

Tensors transformer_inputs(const TransformerConfig& c) {
  core::Random r(c.seed ^ 0x7a5f0e3b1c2d4e6full);
  const auto fill = [&](std::size_t n, double lo, double hi, double scale = 1) {
    std::vector<double> v(n);
    for (double& x : v) x = rounded(scale * (lo + (hi - lo) * r.uniform()), c.dtype);
    return v;
  };
  const std::size_t h = c.hidden, f = c.ffn, t = c.tokens();
  const double wh = 1 / std::sqrt(double(h)), wf = 1 / std::sqrt(double(f));
  Tensors in;
  in["x"] = fill(h * t, -1, 1);
  in["r"] = fill(h * t, -1, 1);
  in["ln1.gamma"] = fill(h, 0.8, 1.2);
  in["ln1.beta"] = fill(h, -0.1, 0.1);
  // [H, 3H] row-major: query columns (the first H) carry the 1/sqrt(head size) scale.
  std::vector<double> qkv(h * 3 * h);
  const double scale = 1 / std::sqrt(double(c.head_size()));
  for (std::size_t i = 0; i < h; ++i) {
    for (std::size_t o = 0; o < 3 * h; ++o)
      qkv[i * 3 * h + o] = rounded((o < h ? scale : 1) * wh * (2 * r.uniform() - 1), c.dtype);
  }
  in["qkv.w"] = qkv;
  in["qkv.b"] = fill(3 * h, -0.1, 0.1);
  in["proj.w"] = fill(h * h, -wh, wh);
  in["proj.b"] = fill(h, -0.1, 0.1);
  in["ln2.gamma"] = fill(h, 0.8, 1.2);
  in["ln2.beta"] = fill(h, -0.1, 0.1);
  in["fc1.w"] = fill(h * f, -wh, wh);
  in["fc1.b"] = fill(f, -0.1, 0.1);
  in["fc2.w"] = fill(f * h, -wf, wf);
  in["fc2.b"] = fill(h, -0.1, 0.1);
  if (c.packed > 1) {  // [batch][head][query][key], as the scores are laid out
    const std::size_t s = c.sequence, length = s / c.packed;
    const double across = rounded(-10000, c.dtype);
    std::vector<double> mask(s * s * c.heads * c.batch);
    for (std::size_t i = 0; i < mask.size(); ++i) {
      const std::size_t k = i % s, q = i / s % s;
      mask[i] = q / length == k / length ? 0.0 : across;
    }
    in["mask"] = mask;
  }
  return in;
}

namespace {

// Dropout node `which` of the layer on v, as the TPC's kernel draws it; and its gradient (the
// same mask and scale). No dropout: v unchanged.
// `v` holds the elements from `first` of the node's tensor.
std::vector<double> drop(const TransformerConfig& c, int which, std::vector<double> v,
                         std::size_t first = 0) {
  if (c.dropout == 0) return v;
  const std::uint32_t seed = c.dropout_seed(which), threshold = tpc::dropout_threshold(c.dropout);
  const double scale = rounded(static_cast<float>(1.0 / (1.0 - c.dropout)), c.dtype);
  for (std::size_t e = 0; e < v.size(); ++e)
    v[e] = tpc::dropout_keeps(seed, first + e, threshold) ? v[e] * scale : 0.0;
  return v;
}

}  // namespace

Tensors transformer_reference(const TransformerConfig& c, const Tensors& p) {
  const std::size_t h = c.hidden, f = c.ffn, t = c.tokens(), s = c.sequence, a = c.heads,
                    d = c.head_size(), b = c.batch;
  const auto& x = p.at("x");
  std::vector<double> ln1, xhat1, rstd1;
  layer_norm(x, p.at("ln1.gamma"), p.at("ln1.beta"), h, c.eps, ln1, xhat1, rstd1);
  const std::vector<double> qkv = linear(ln1, p.at("qkv.w"), p.at("qkv.b"), t, h, 3 * h);
  // probs[b][head][q][k], ctx [T, H].
  std::vector<double> probs(b * a * s * s), ctx(t * h);
  for (std::size_t n = 0; n < b; ++n) {
    for (std::size_t head = 0; head < a; ++head) {
      const std::size_t base = n * s * 3 * h, pb = (n * a + head) * s * s;
      matmul({&qkv, base + head * d, 3 * h, false}, {&qkv, base + h + head * d, 3 * h, true}, probs,
             pb, s, s, s, d);
      if (c.packed > 1) {
        const std::vector<double>& mask = p.at("mask");
        for (std::size_t i = 0; i < s * s; ++i) probs[pb + i] += mask[pb + i];
      }
      for (std::size_t q = 0; q < s; ++q) {
        double m = -1e300, sum = 0;
        for (std::size_t k = 0; k < s; ++k) m = std::max(m, probs[pb + q * s + k]);
        for (std::size_t k = 0; k < s; ++k) sum += std::exp(probs[pb + q * s + k] - m);
        for (std::size_t k = 0; k < s; ++k)
          probs[pb + q * s + k] = std::exp(probs[pb + q * s + k] - m) / sum;
      }
    }
  }
  const std::vector<double> dropped = drop(c, 0, probs);
  for (std::size_t n = 0; n < b; ++n) {
    for (std::size_t head = 0; head < a; ++head) {
      const std::size_t base = n * s * 3 * h, pb = (n * a + head) * s * s;
      matmul({&dropped, pb, s, false}, {&qkv, base + 2 * h + head * d, 3 * h, false}, ctx,
             n * s * h + head * d, h, s, d, s);
    }
  }
  const std::vector<double> x1 =
      add(x, drop(c, 1, linear(ctx, p.at("proj.w"), p.at("proj.b"), t, h, h)));
  std::vector<double> ln2, xhat2, rstd2;
  layer_norm(x1, p.at("ln2.gamma"), p.at("ln2.beta"), h, c.eps, ln2, xhat2, rstd2);
  const std::vector<double> f1 = linear(ln2, p.at("fc1.w"), p.at("fc1.b"), t, h, f);
  std::vector<double> a1(f1.size());
  for (std::size_t i = 0; i < f1.size(); ++i) a1[i] = gelu(f1[i]);
  Tensors out;
  out["out"] = add(x1, drop(c, 2, linear(a1, p.at("fc2.w"), p.at("fc2.b"), t, f, h)));
  const auto& r = p.at("r");
  double loss = 0, scale = 0;
  for (std::size_t i = 0; i < r.size(); ++i) {
    loss += out["out"][i] * r[i];
    scale += std::abs(out["out"][i] * r[i]);
  }
  out["loss"] = {loss};
  out["loss_scale"] = {scale};

  std::vector<double> da1, df1(f1.size()), dln2, dx1_ln, dctx, dqkv(t * 3 * h), dln1, dx_ln;
  linear_backward(a1, p.at("fc2.w"), drop(c, 2, r), t, f, h, out["dfc2.w"], out["dfc2.b"], &da1);
  for (std::size_t i = 0; i < f1.size(); ++i) df1[i] = da1[i] * gelu_grad(f1[i]);
  linear_backward(ln2, p.at("fc1.w"), df1, t, h, f, out["dfc1.w"], out["dfc1.b"], &dln2);
  layer_norm_backward(dln2, xhat2, rstd2, p.at("ln2.gamma"), h, dx1_ln, out["dln2.gamma"],
                      out["dln2.beta"]);
  const std::vector<double> dx1 = add(r, dx1_ln);
  linear_backward(ctx, p.at("proj.w"), drop(c, 1, dx1), t, h, h, out["dproj.w"], out["dproj.b"],
                  &dctx);
  std::vector<double> dp(s * s);
  for (std::size_t n = 0; n < b; ++n) {
    for (std::size_t head = 0; head < a; ++head) {
      const std::size_t base = n * s * 3 * h, pb = (n * a + head) * s * s;
      const std::size_t q_at = base + head * d, k_at = base + h + head * d,
                        v_at = base + 2 * h + head * d, c_at = n * s * h + head * d;
      matmul({&dctx, c_at, h, false}, {&qkv, v_at, 3 * h, true}, dp, 0, s, s, s, d);
      matmul({&dropped, pb, s, true}, {&dctx, c_at, h, false}, dqkv, v_at, 3 * h, s, d, s);
      dp = drop(c, 0, dp, pb);
      for (std::size_t q = 0; q < s; ++q) {
        double dot = 0;
        for (std::size_t k = 0; k < s; ++k) dot += dp[q * s + k] * probs[pb + q * s + k];
        for (std::size_t k = 0; k < s; ++k)
          dp[q * s + k] = probs[pb + q * s + k] * (dp[q * s + k] - dot);
      }
      matmul({&dp, 0, s, false}, {&qkv, k_at, 3 * h, false}, dqkv, q_at, 3 * h, s, d, s);
      matmul({&dp, 0, s, true}, {&qkv, q_at, 3 * h, false}, dqkv, k_at, 3 * h, s, d, s);
    }
  }
  linear_backward(ln1, p.at("qkv.w"), dqkv, t, h, 3 * h, out["dqkv.w"], out["dqkv.b"], &dln1);
  layer_norm_backward(dln1, xhat1, rstd1, p.at("ln1.gamma"), h, dx_ln, out["dln1.gamma"],
                      out["dln1.beta"]);
  out["dx"] = add(dx1, dx_ln);
  return out;
}

TransformerBlock::TransformerBlock(Session& session, const TransformerConfig& config)
    : s_(session), c_(config) {
  if (auto p = c_.problem(); !p.empty()) throw std::invalid_argument("transformer-block: " + p);
  const std::uint32_t h = c_.hidden, f = c_.ffn, t = c_.tokens();
  const std::map<std::string, std::vector<std::uint32_t>> shapes{
      {"x", {h, t}},         {"r", {h, t}},      {"ln1.gamma", {h}}, {"ln1.beta", {h}},
      {"qkv.w", {3 * h, h}}, {"qkv.b", {3 * h}}, {"proj.w", {h, h}}, {"proj.b", {h}},
      {"ln2.gamma", {h}},    {"ln2.beta", {h}},  {"fc1.w", {f, h}},  {"fc1.b", {f}},
      {"fc2.w", {h, f}},     {"fc2.b", {h}}};
  const Tensors inputs = transformer_inputs(c_);
  for (const auto& [name, shape] : shapes) {
    v_[name] = s_.persistent(name, c_.dtype, shape);
    s_.write(v_[name], inputs.at(name));
    if (name != "x" && name != "r") v_["d" + name] = s_.persistent("d" + name, c_.dtype, shape);
  }
  v_["out"] = s_.persistent("out", c_.dtype, {h, t});
  v_["dx"] = s_.persistent("dx", c_.dtype, {h, t});
  if (c_.packed > 1) {
    // The fused attention masks one sequence's heads at a time: every row's block is the same.
    const std::uint32_t rows = c_.fused_attention ? 1 : c_.batch;
    const std::vector<double>& mask = inputs.at("mask");
    v_["mask"] = s_.persistent("mask", c_.dtype, {c_.sequence, c_.sequence * c_.heads * rows});
    s_.write(v_["mask"],
             std::vector<double>(mask.begin(), mask.begin() + static_cast<std::ptrdiff_t>(
                                                                  mask.size() / c_.batch * rows)));
  }
}

// y = in w + b (workloads/dense.h) over the layer's tokens.
TransformerBlock::Value TransformerBlock::linear(const std::string& name, Value in, Value w,
                                                 Value b, std::uint32_t in_features,
                                                 std::uint32_t out_features) {
  return dense(s_, name, in, w, b, {c_.tokens(), in_features, out_features, c_.dtype});
}

void TransformerBlock::linear_backward(const std::string& name, Value in, Value w, Value dout,
                                       Value* din, std::uint32_t in_features,
                                       std::uint32_t out_features) {
  if (din != nullptr) *din = s_.temporary(name + ".din", c_.dtype, {in_features, c_.tokens()});
  dense_backward(s_, name, in, w, dout, v_.at("d" + name + ".w"), v_.at("d" + name + ".b"), din,
                 {c_.tokens(), in_features, out_features, c_.dtype});
}

// A GEMM batched over the heads of one sequence: c (m x n) = a (m x k) b (k x n), transposed
// where an operand says so, each walked from its offset by its leading dimension, one head
// `head_stride` elements after the other.
void TransformerBlock::head_gemm(const std::string& name, Value a, Value b, Value c,
                                 std::array<std::uint32_t, 3> mnk,
                                 std::array<HeadOperand, 3> operands) {
  mme::GemmDesc g;
  g.m = mnk[0];
  g.n = mnk[1];
  g.k = mnk[2];
  g.batch = c_.heads;
  g.trans_a = operands[0].trans;
  g.trans_b = operands[1].trans;
  g.lda = operands[0].ld;
  g.ldb = operands[1].ld;
  g.ldc = operands[2].ld;
  g.stride_a = operands[0].head_stride;
  g.stride_b = operands[1].head_stride;
  g.stride_c = operands[2].head_stride;
  s_.gemm(name, a, b, c, g, false, {operands[0].offset, operands[1].offset, operands[2].offset});
}

// Sequence n's operands: its heads' query, key or value (`part` 0, 1, 2: column blocks of qkv,
// rows 3H apart, heads D apart), their S x S probabilities (blocks of probs), their context
// (column blocks of ctx, rows H apart).
TransformerBlock::HeadOperand TransformerBlock::qkv_part(std::uint32_t n, int part,
                                                         bool trans) const {
  const std::uint64_t h = c_.hidden;
  return {std::uint64_t{n} * c_.sequence * 3 * h + static_cast<std::uint64_t>(part) * h,
          static_cast<std::uint32_t>(3 * h), c_.head_size(), trans};
}
TransformerBlock::HeadOperand TransformerBlock::probs_block(std::uint32_t n, bool trans) const {
  const std::uint64_t s = c_.sequence;
  return {std::uint64_t{n} * c_.heads * s * s, c_.sequence, s * s, trans};
}
TransformerBlock::HeadOperand TransformerBlock::ctx_part(std::uint32_t n) const {
  return {std::uint64_t{n} * c_.sequence * c_.hidden, c_.hidden, c_.head_size(), false};
}

void TransformerBlock::attention(Value qkv, Value ctx, Value probs, Saved& saved) {
  const std::uint32_t s = c_.sequence, d = c_.head_size();
  const std::vector<std::uint32_t> shape{s, s * c_.heads * c_.batch};
  const Value raw = s_.temporary("scores", c_.dtype, shape);
  for (std::uint32_t n = 0; n < c_.batch; ++n) {  // q k^T
    head_gemm(fmt::format("scores{}", n), qkv, qkv, raw, {s, s, d},
              {qkv_part(n, 0), qkv_part(n, 1, true), probs_block(n)});
  }
  Value scores = raw;
  if (c_.packed > 1) {
    scores = s_.temporary("masked", c_.dtype, shape);
    s_.kernel("mask", request("add", c_.dtype, shape), {raw, v_.at("mask"), scores});
  }
  s_.kernel("softmax", request("softmax", c_.dtype, shape), {scores, probs});
  saved.dropped_probs =
      c_.dropout > 0 ? dropout("probs.dropout", probs, 0, saved.probs_mask) : probs;
  for (std::uint32_t n = 0; n < c_.batch; ++n) {  // p v
    head_gemm(fmt::format("context{}", n), saved.dropped_probs, qkv, ctx, {s, d, s},
              {probs_block(n), qkv_part(n, 2), ctx_part(n)});
  }
}

void TransformerBlock::attention_backward(Value qkv, const Saved& saved, Value dctx, Value dqkv) {
  const std::uint32_t s = c_.sequence, d = c_.head_size();
  const std::vector<std::uint32_t> shape{s, s * c_.heads * c_.batch};
  const Value dprobs = s_.temporary("dprobs", c_.dtype, shape);
  const Value dscores = s_.temporary("dscores", c_.dtype, shape);
  for (std::uint32_t n = 0; n < c_.batch; ++n) {
    head_gemm(fmt::format("dprobs{}", n), dctx, qkv, dprobs, {s, s, d},  // dctx v^T
              {ctx_part(n), qkv_part(n, 2, true), probs_block(n)});
    head_gemm(fmt::format("dv{}", n), saved.dropped_probs, dctx, dqkv, {s, d, s},  // p^T dctx
              {probs_block(n, true), ctx_part(n), qkv_part(n, 2)});
  }
  const Value dkept =
      c_.dropout > 0 ? dropout_backward("probs.dropout_bwd", dprobs, saved.probs_mask, 0) : dprobs;
  s_.kernel("softmax_bwd", request("softmax_bwd", c_.dtype, shape), {dkept, saved.probs, dscores});
  for (std::uint32_t n = 0; n < c_.batch; ++n) {
    head_gemm(fmt::format("dq{}", n), dscores, qkv, dqkv, {s, d, s},  // dscores k
              {probs_block(n), qkv_part(n, 1), qkv_part(n, 0)});
    head_gemm(fmt::format("dk{}", n), dscores, qkv, dqkv, {s, d, s},  // dscores^T q
              {probs_block(n, true), qkv_part(n, 0), qkv_part(n, 1)});
  }
}

// Sequence n's heads: scores q k^T, the mask, the softmax and the dropout, [S, S heads] apart
// from the other sequences'. `pass` names the nodes (the forward's, or the backward's again).
TransformerBlock::SequenceAttention TransformerBlock::sequence_attention(const std::string& pass,
                                                                         std::uint32_t n,
                                                                         Value qkv) {
  const std::uint32_t s = c_.sequence, d = c_.head_size();
  const std::vector<std::uint32_t> shape{s, s * c_.heads};
  const std::string at = fmt::format("{}{}", pass, n);
  const Value raw = s_.temporary(at + ".scores", c_.dtype, shape);
  head_gemm(at + ".scores", qkv, qkv, raw, {s, s, d},
            {qkv_part(n, 0), qkv_part(n, 1, true), probs_block(0)});
  Value scores = raw;
  if (c_.packed > 1) {
    scores = s_.temporary(at + ".masked", c_.dtype, shape);
    s_.kernel(at + ".mask", request("add", c_.dtype, shape), {raw, v_.at("mask"), scores});
  }
  SequenceAttention a;
  a.probs = s_.temporary(at + ".probs", c_.dtype, shape);
  s_.kernel(at + ".softmax", request("softmax", c_.dtype, shape), {scores, a.probs});
  a.dropped = c_.dropout > 0 ? dropout(at + ".dropout", a.probs, 0, a.mask,
                                       std::uint64_t{n} * c_.heads * s * s)
                             : a.probs;
  return a;
}

void TransformerBlock::fused_attention(Value qkv, Value ctx) {
  const std::uint32_t s = c_.sequence, d = c_.head_size();
  for (std::uint32_t n = 0; n < c_.batch; ++n) {
    const SequenceAttention a = sequence_attention("sdpa", n, qkv);
    head_gemm(fmt::format("sdpa{}.context", n), a.dropped, qkv, ctx, {s, d, s},  // p v
              {probs_block(0), qkv_part(n, 2), ctx_part(n)});
  }
}

void TransformerBlock::fused_attention_backward(Value qkv, Value dctx, Value dqkv) {
  const std::uint32_t s = c_.sequence, d = c_.head_size();
  const std::vector<std::uint32_t> shape{s, s * c_.heads};
  for (std::uint32_t n = 0; n < c_.batch; ++n) {
    const SequenceAttention a = sequence_attention("sdpa_bwd", n, qkv);
    const std::string at = fmt::format("sdpa_bwd{}", n);
    const Value dprobs = s_.temporary(at + ".dprobs", c_.dtype, shape);
    const Value dscores = s_.temporary(at + ".dscores", c_.dtype, shape);
    head_gemm(at + ".dprobs", dctx, qkv, dprobs, {s, s, d},  // dctx v^T
              {ctx_part(n), qkv_part(n, 2, true), probs_block(0)});
    head_gemm(at + ".dv", a.dropped, dctx, dqkv, {s, d, s},  // p^T dctx
              {probs_block(0, true), ctx_part(n), qkv_part(n, 2)});
    const Value dkept =
        c_.dropout > 0 ? dropout_backward(at + ".dropout_bwd", dprobs, a.mask, 0) : dprobs;
    s_.kernel(at + ".softmax_bwd", request("softmax_bwd", c_.dtype, shape),
              {dkept, a.probs, dscores});
    head_gemm(at + ".dq", dscores, qkv, dqkv, {s, d, s},  // dscores k
              {probs_block(0), qkv_part(n, 1), qkv_part(n, 0)});
    head_gemm(at + ".dk", dscores, qkv, dqkv, {s, d, s},  // dscores^T q
              {probs_block(0, true), qkv_part(n, 0), qkv_part(n, 1)});
  }
}

TransformerBlock::Value TransformerBlock::dropout(const std::string& name, Value x, int which,
                                                  Value& mask, std::uint64_t offset) {
  const std::vector<std::uint32_t> shape = s_.tensor(x).shape;
  const Value y = s_.temporary(name + ".y", c_.dtype, shape);
  mask = s_.temporary(name + ".mask", Dtype::kU8, shape);
  s_.kernel(name,
            request("dropout", c_.dtype, shape,
                    {{"p", c_.dropout},
                     {"seed", static_cast<double>(c_.dropout_seed(which))},
                     {"offset", static_cast<double>(offset)}}),
            {x, y, mask});
  return y;
}

TransformerBlock::Value TransformerBlock::dropout_backward(const std::string& name, Value dy,
                                                           Value mask, int which) {
  const std::vector<std::uint32_t> shape = s_.tensor(dy).shape;
  const Value dx = s_.temporary(name + ".dx", c_.dtype, shape);
  s_.kernel(name,
            request("dropout_bwd", c_.dtype, shape,
                    {{"p", c_.dropout}, {"seed", static_cast<double>(c_.dropout_seed(which))}}),
            {dy, mask, dx});
  return dx;
}

TransformerBlock::Value TransformerBlock::layer_norm(const std::string& name, Value x, Value& mean,
                                                     Value& rstd) {
  const std::uint32_t h = c_.hidden, tokens = c_.tokens();
  const Value y = s_.temporary(name + ".y", c_.dtype, {h, tokens});
  mean = s_.temporary(name + ".mean", Dtype::kF32, {tokens});
  rstd = s_.temporary(name + ".rstd", Dtype::kF32, {tokens});
  s_.kernel(name, request("layer_norm", c_.dtype, {h, tokens}, {{"eps", c_.eps}}),
            {x, v_.at(name + ".gamma"), v_.at(name + ".beta"), y, mean, rstd});
  return y;
}

TransformerBlock::Value TransformerBlock::residual(const std::string& name, Value a, Value b,
                                                   const Value* into) {
  const std::uint32_t h = c_.hidden, tokens = c_.tokens();
  const Value y = into ? *into : s_.temporary(name, c_.dtype, {h, tokens});
  s_.kernel(name, request("add", c_.dtype, {h, tokens}), {a, b, y});
  return y;
}

double TransformerBlock::step(bool backward) {
  const Saved saved = forward();
  if (backward) this->backward(saved);
  s_.mark_step();
  const std::vector<double> o = s_.read(v_.at("out")), rv = s_.read(v_.at("r"));
  double loss = 0;
  for (std::size_t i = 0; i < o.size(); ++i) loss += o[i] * rv[i];
  return loss;
}

TransformerBlock::Saved TransformerBlock::forward() {
  const Dtype t = c_.dtype;
  const std::uint32_t h = c_.hidden, f = c_.ffn, tokens = c_.tokens();
  Saved v;
  v.ln1 = layer_norm("ln1", v_.at("x"), v.mean1, v.rstd1);
  v.qkv = linear("qkv", v.ln1, v_.at("qkv.w"), v_.at("qkv.b"), h, 3 * h);
  v.ctx = s_.temporary("ctx", t, {h, tokens});
  if (c_.fused_attention) {
    fused_attention(v.qkv, v.ctx);
  } else {
    v.probs = s_.temporary("probs", t, {c_.sequence, c_.sequence * c_.heads * c_.batch});
    attention(v.qkv, v.ctx, v.probs, v);
  }
  Value attn = linear("proj", v.ctx, v_.at("proj.w"), v_.at("proj.b"), h, h);
  if (c_.dropout > 0) attn = dropout("proj.dropout", attn, 1, v.attn_mask);
  v.x1 = residual("residual1", v_.at("x"), attn);
  v.ln2 = layer_norm("ln2", v.x1, v.mean2, v.rstd2);
  v.f1 = linear("fc1", v.ln2, v_.at("fc1.w"), v_.at("fc1.b"), h, f);
  v.a1 = s_.temporary("gelu", t, {f, tokens});
  s_.kernel("gelu", request("gelu", t, {f, tokens}), {v.f1, v.a1});
  Value f2 = linear("fc2", v.a1, v_.at("fc2.w"), v_.at("fc2.b"), f, h);
  if (c_.dropout > 0) f2 = dropout("fc2.dropout", f2, 2, v.mlp_mask);
  residual("residual2", v.x1, f2, &v_.at("out"));
  return v;
}

void TransformerBlock::backward(const Saved& v) {
  const Dtype t = c_.dtype;
  const std::uint32_t h = c_.hidden, f = c_.ffn, tokens = c_.tokens();
  const Value r = v_.at("r");
  Value da1, dln2, dctx, dln1;
  const Value df2 = c_.dropout > 0 ? dropout_backward("fc2.dropout_bwd", r, v.mlp_mask, 2) : r;
  linear_backward("fc2", v.a1, v_.at("fc2.w"), df2, &da1, f, h);
  const Value df1 = s_.temporary("gelu_bwd", t, {f, tokens});
  s_.kernel("gelu_bwd", request("gelu_bwd", t, {f, tokens}), {da1, v.f1, df1});
  linear_backward("fc1", v.ln2, v_.at("fc1.w"), df1, &dln2, h, f);
  const Value dx1_ln = s_.temporary("ln2_bwd.dx", t, {h, tokens});
  s_.kernel("ln2_bwd", request("layer_norm_bwd", t, {h, tokens}),
            {dln2, v.x1, v.mean2, v.rstd2, v_.at("ln2.gamma"), dx1_ln, v_.at("dln2.gamma"),
             v_.at("dln2.beta")});
  const Value dx1 = residual("residual2_bwd", r, dx1_ln);
  const Value dattn =
      c_.dropout > 0 ? dropout_backward("proj.dropout_bwd", dx1, v.attn_mask, 1) : dx1;
  linear_backward("proj", v.ctx, v_.at("proj.w"), dattn, &dctx, h, h);
  const Value dqkv = s_.temporary("dqkv", t, {3 * h, tokens});
  if (c_.fused_attention) {
    fused_attention_backward(v.qkv, dctx, dqkv);
  } else {
    attention_backward(v.qkv, v, dctx, dqkv);
  }
  linear_backward("qkv", v.ln1, v_.at("qkv.w"), dqkv, &dln1, h, 3 * h);
  const Value dx_ln = s_.temporary("ln1_bwd.dx", t, {h, tokens});
  s_.kernel("ln1_bwd", request("layer_norm_bwd", t, {h, tokens}),
            {dln1, v_.at("x"), v.mean1, v.rstd1, v_.at("ln1.gamma"), dx_ln, v_.at("dln1.gamma"),
             v_.at("dln1.beta")});
  residual("residual1_bwd", dx1, dx_ln, &v_.at("dx"));
}

Tensors TransformerBlock::results() {
  Tensors out;
  for (const auto& [name, value] : v_) {
    if (name == "out" || name == "dx" || name.rfind("d", 0) == 0) out[name] = s_.read(value);
  }
  return out;
}

}  // namespace podsim::workloads
