#include "workloads/mlp.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/random.h"
#include "workloads/values.h"

namespace podsim::workloads {
namespace {

using synapse::Session;
using tpc::Dtype;

constexpr std::uint64_t kTeacherStream = 0x7eac4e5, kWeightStream = 0x3e16475;

double uniform(core::Random& r, double lo, double hi) { return lo + (hi - lo) * r.uniform(); }

// One generator per purpose, all from the config's seed.
core::Random stream(std::uint64_t seed, std::uint64_t purpose) {
  return core::Random(seed ^ (purpose * 0x9E3779B97F4A7C15ull));
}

// The teacher: labels = argmax over classes of x T, T [inputs, classes].
std::vector<double> teacher(const MlpConfig& c) {
  core::Random r = stream(c.seed, kTeacherStream);
  std::vector<double> t(static_cast<std::size_t>(c.layers.front()) * c.layers.back());
  for (double& v : t) v = uniform(r, -1, 1);
  return t;
}

}  // namespace

std::string MlpConfig::problem() const {
  if (layers.size() < 2) return "an MLP needs at least inputs and classes (two layer sizes)";
  for (std::uint32_t n : layers) {
    if (n == 0) return "a layer of width 0";
  }
  if (layers.back() < 2) return "at least two classes";
  if (batch == 0) return "batch 0";
  if (dtype != Dtype::kF32 && dtype != Dtype::kBf16 && dtype != Dtype::kF16)
    return fmt::format("type {}: f32, bf16 or f16", tpc::info(dtype).name);
  if (!(lr > 0) || !(momentum >= 0 && momentum < 1)) return "lr > 0 and 0 <= momentum < 1";
  return {};
}

Batch make_batch(const MlpConfig& c, int step) {
  core::Random r = stream(c.seed, 1000 + static_cast<std::uint64_t>(step));
  const std::uint32_t in = c.layers.front(), classes = c.layers.back();
  Batch b;
  b.x.resize(static_cast<std::size_t>(in) * c.batch);
  for (double& v : b.x) v = rounded(uniform(r, -1, 1), c.dtype);
  const std::vector<double> t = teacher(c);
  for (std::uint32_t n = 0; n < c.batch; ++n) {
    std::vector<double> score(classes, 0.0);
    for (std::uint32_t i = 0; i < in; ++i) {
      for (std::uint32_t k = 0; k < classes; ++k) score[k] += b.x[n * in + i] * t[i * classes + k];
    }
    b.labels.push_back(
        static_cast<double>(std::max_element(score.begin(), score.end()) - score.begin()));
  }
  return b;
}

std::vector<double> initial_weights(const MlpConfig& c, std::size_t layer) {
  const std::uint32_t in = c.layers[layer], out = c.layers[layer + 1];
  core::Random r = stream(c.seed, kWeightStream + layer);
  const double limit = std::sqrt(6.0 / (in + out));
  std::vector<double> w(static_cast<std::size_t>(in) * out);
  for (double& v : w) v = rounded(uniform(r, -limit, limit), c.dtype);
  return w;
}

Mlp::Mlp(Session& session, const MlpConfig& config) : s_(session), c_(config) {
  if (auto p = c_.problem(); !p.empty()) throw std::invalid_argument("mlp: " + p);
  const std::uint32_t batch = c_.batch;
  x_ = s_.persistent("x", c_.dtype, {c_.layers.front(), batch});
  labels_ = s_.persistent("labels", Dtype::kI32, {batch});
  loss_ = s_.persistent("loss", Dtype::kF32, {batch});
  dloss_ = s_.persistent("dloss", Dtype::kF32, {batch});
  s_.write(dloss_, std::vector<double>(batch, 1.0 / batch));
  for (std::size_t l = 0; l + 1 < c_.layers.size(); ++l) {
    const std::uint32_t in = c_.layers[l], out = c_.layers[l + 1];
    w_.push_back(s_.persistent(fmt::format("w{}", l), c_.dtype, {out, in}));
    b_.push_back(s_.persistent(fmt::format("b{}", l), c_.dtype, {out}));
    vw_.push_back(s_.persistent(fmt::format("vw{}", l), c_.dtype, {out, in}));
    vb_.push_back(s_.persistent(fmt::format("vb{}", l), c_.dtype, {out}));
    s_.write(w_.back(), initial_weights(c_, l));
    s_.write(b_.back(), std::vector<double>(out, 0.0));
    s_.write(vw_.back(), std::vector<double>(static_cast<std::size_t>(in) * out, 0.0));
    s_.write(vb_.back(), std::vector<double>(out, 0.0));
  }
}

double Mlp::step(int step) {
  const Batch b = make_batch(c_, step);
  s_.write(x_, b.x);
  s_.write(labels_, b.labels);
  forward_backward();
  s_.mark_step();
  const std::vector<double> loss = s_.read(loss_);
  return std::accumulate(loss.begin(), loss.end(), 0.0) / static_cast<double>(loss.size());
}

// Shapes are dimension 0 first: an activation [width, batch] is a row-major batch x width
// matrix, a weight [out, in] a row-major in x out one.
void Mlp::forward_backward() {
  const Dtype t = c_.dtype;
  const std::uint32_t batch = c_.batch;
  const std::size_t layers = w_.size();
  std::vector<Session::Value> h{x_};  // each layer's input
  Session::Value logits;
  for (std::size_t l = 0; l < layers; ++l) {
    const std::uint32_t in = c_.layers[l], out = c_.layers[l + 1];
    const Session::Value z = s_.temporary(fmt::format("z{}", l), t, {out, batch});
    const Session::Value a = s_.temporary(fmt::format("a{}", l), t, {out, batch});
    mme::GemmDesc fwd;
    fwd.m = batch;
    fwd.n = out;
    fwd.k = in;
    s_.gemm(fmt::format("fc{}", l), h.back(), w_[l], z, fwd);
    s_.kernel(fmt::format("bias{}", l), request("bias_add", t, {out, batch}), {z, b_[l], a});
    if (l + 1 == layers) {
      logits = a;
      break;
    }
    const Session::Value y = s_.temporary(fmt::format("h{}", l + 1), t, {out, batch});
    s_.kernel(fmt::format("relu{}", l), request("relu", t, {out, batch}), {a, y});
    h.push_back(y);
  }
  const std::uint32_t classes = c_.layers.back();
  s_.kernel("loss", request("cross_entropy", t, {classes, batch}), {logits, labels_, loss_});
  Session::Value g = s_.temporary("dlogits", t, {classes, batch});
  s_.kernel("loss_bwd", request("cross_entropy_bwd", t, {classes, batch}),
            {logits, labels_, dloss_, g});
  for (std::size_t l = layers; l-- > 0;) {
    const std::uint32_t in = c_.layers[l], out = c_.layers[l + 1];
    const Session::Value dw = s_.temporary(fmt::format("dw{}", l), t, {out, in});
    const Session::Value db = s_.temporary(fmt::format("db{}", l), t, {out});
    mme::GemmDesc wgrad;  // h^T g: [in, batch] x [batch, out]
    wgrad.m = in;
    wgrad.n = out;
    wgrad.k = batch;
    wgrad.trans_a = true;
    s_.gemm(fmt::format("fc{}_wgrad", l), h[l], g, dw, wgrad);
    s_.kernel(fmt::format("bias{}_grad", l), request("reduce_sum", t, {out, batch}, {{"dim", 1}}),
              {g, db});
    if (l > 0) {
      const Session::Value dh = s_.temporary(fmt::format("dh{}", l), t, {in, batch});
      mme::GemmDesc dgrad;  // g W^T: [batch, out] x [out, in]
      dgrad.m = batch;
      dgrad.n = in;
      dgrad.k = out;
      dgrad.trans_b = true;
      s_.gemm(fmt::format("fc{}_dgrad", l), g, w_[l], dh, dgrad);
      const Session::Value next = s_.temporary(fmt::format("g{}", l), t, {in, batch});
      s_.kernel(fmt::format("relu{}_bwd", l - 1), request("relu_bwd", t, {in, batch}),
                {dh, h[l], next});
      g = next;
    }
    const std::map<std::string, double> sgd{{"lr", c_.lr}, {"momentum", c_.momentum}};
    s_.kernel(fmt::format("sgd_w{}", l), request("sgd_momentum", t, {out, in}, sgd),
              {w_[l], dw, vw_[l]});
    s_.kernel(fmt::format("sgd_b{}", l), request("sgd_momentum", t, {out}, sgd),
              {b_[l], db, vb_[l]});
  }
}

std::vector<double> reference_losses(const MlpConfig& c, int steps) {
  if (auto p = c.problem(); !p.empty()) throw std::invalid_argument("mlp: " + p);
  const std::size_t layers = c.layers.size() - 1;
  const std::size_t batch = c.batch;
  std::vector<std::vector<double>> w(layers), b(layers), vw(layers), vb(layers);
  for (std::size_t l = 0; l < layers; ++l) {
    w[l] = initial_weights(c, l);
    b[l].assign(c.layers[l + 1], 0.0);
    vw[l].assign(w[l].size(), 0.0);
    vb[l].assign(b[l].size(), 0.0);
  }
  std::vector<double> losses;
  for (int s = 0; s < steps; ++s) {
    const Batch data = make_batch(c, s);
    std::vector<std::vector<double>> h{data.x};
    for (std::size_t l = 0; l < layers; ++l) {
      const std::size_t in = c.layers[l], out = c.layers[l + 1];
      std::vector<double> a(batch * out);
      for (std::size_t n = 0; n < batch; ++n) {
        for (std::size_t o = 0; o < out; ++o) {
          double v = b[l][o];
          for (std::size_t i = 0; i < in; ++i) v += h[l][n * in + i] * w[l][i * out + o];
          a[n * out + o] = l + 1 == layers ? v : std::max(v, 0.0);
        }
      }
      h.push_back(std::move(a));
    }
    const std::size_t classes = c.layers.back();
    std::vector<double> g(batch * classes);
    double total = 0;
    for (std::size_t n = 0; n < batch; ++n) {
      const double* row = &h[layers][n * classes];
      const double m = *std::max_element(row, row + classes);
      double sum = 0;
      for (std::size_t k = 0; k < classes; ++k) sum += std::exp(row[k] - m);
      const auto label = static_cast<std::size_t>(data.labels[n]);
      total += std::log(sum) + m - row[label];
      for (std::size_t k = 0; k < classes; ++k)
        g[n * classes + k] = (std::exp(row[k] - m) / sum - (k == label ? 1 : 0)) / double(batch);
    }
    losses.push_back(total / double(batch));
    for (std::size_t l = layers; l-- > 0;) {
      const std::size_t in = c.layers[l], out = c.layers[l + 1];
      std::vector<double> dh(batch * in, 0.0);
      for (std::size_t n = 0; n < batch; ++n) {
        for (std::size_t i = 0; i < in; ++i) {
          double v = 0;
          for (std::size_t o = 0; o < out; ++o) v += g[n * out + o] * w[l][i * out + o];
          dh[n * in + i] = h[l][n * in + i] > 0 ? v : 0.0;
        }
      }
      for (std::size_t i = 0; i < in; ++i) {
        for (std::size_t o = 0; o < out; ++o) {
          double dw = 0;
          for (std::size_t n = 0; n < batch; ++n) dw += h[l][n * in + i] * g[n * out + o];
          double& v = vw[l][i * out + o];
          v = c.momentum * v + dw;
          w[l][i * out + o] -= c.lr * v;
        }
      }
      for (std::size_t o = 0; o < out; ++o) {
        double db = 0;
        for (std::size_t n = 0; n < batch; ++n) db += g[n * out + o];
        vb[l][o] = c.momentum * vb[l][o] + db;
        b[l][o] -= c.lr * vb[l][o];
      }
      g = std::move(dh);
    }
  }
  return losses;
}

}  // namespace podsim::workloads
