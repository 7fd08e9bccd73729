// ConvUnit::reference: the unit's forward and backward in double precision, by definitions.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "workloads/convnet.h"

namespace podsim::workloads {
namespace {

using Values = std::vector<double>;

Values conv_op(mme::MmeOp op, const mme::ConvDesc& d, const Values& a, const Values& b) {
  mme::MmeOperation o;
  o.op = op;
  o.in = o.out = tpc::Dtype::kF32;
  o.conv = d;
  Values out(mme::c_elements(o), 0.0);
  mme::reference(o, a, b, out);
  return out;
}

// Batch norm over the rows of [channels, rows] with the batch's statistics.
struct NormStats {
  Values mean, rstd;
};

Values exact_norm_forward(const Values& x, const Values& gamma, const Values& beta, double eps,
                          NormStats* n) {
  const std::size_t c = gamma.size(), rows = x.size() / c;
  n->mean.assign(c, 0.0);
  n->rstd.assign(c, 0.0);
  Values var(c, 0.0), y(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) n->mean[i % c] += x[i] / double(rows);
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double d = x[i] - n->mean[i % c];
    var[i % c] += d * d / double(rows);
  }
  for (std::size_t k = 0; k < c; ++k) n->rstd[k] = 1 / std::sqrt(var[k] + eps);
  for (std::size_t i = 0; i < x.size(); ++i) {
    const std::size_t k = i % c;
    y[i] = (x[i] - n->mean[k]) * n->rstd[k] * gamma[k] + beta[k];
  }
  return y;
}

Values exact_norm_backward(const Values& x, const Values& dy, const Values& gamma,
                           const NormStats& n, Values* dgamma, Values* dbeta) {
  const std::size_t c = gamma.size(), rows = x.size() / c;
  dgamma->assign(c, 0.0);
  dbeta->assign(c, 0.0);
  for (std::size_t i = 0; i < x.size(); ++i) {
    const std::size_t k = i % c;
    (*dbeta)[k] += dy[i];
    (*dgamma)[k] += dy[i] * (x[i] - n.mean[k]) * n.rstd[k];
  }
  Values dx(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    const std::size_t k = i % c;
    const double xhat = (x[i] - n.mean[k]) * n.rstd[k];
    dx[i] = gamma[k] * n.rstd[k] / double(rows) *
            (double(rows) * dy[i] - (*dbeta)[k] - xhat * (*dgamma)[k]);
  }
  return dx;
}

Values exact_relu(Values x) {
  for (double& v : x) v = std::max(v, 0.0);
  return x;
}

Values exact_relu_backward(const Values& y, Values dy) {
  for (std::size_t i = 0; i < dy.size(); ++i) dy[i] = y[i] > 0 ? dy[i] : 0.0;
  return dy;
}

Values sum(Values a, const Values& b) {
  for (std::size_t i = 0; i < a.size(); ++i) a[i] += b[i];
  return a;
}

// Max pooling of x [C, W, H, N] (padding never wins); `argmax` gets each output's input index.
struct Pool {
  std::uint32_t c, w, h, n, window, stride, pad, p, q;
};

Values max_pool(const Values& x, const Pool& s, std::vector<std::size_t>* argmax) {
  Values y(std::size_t{s.c} * s.q * s.p * s.n);
  argmax->assign(y.size(), 0);
  for (std::size_t i = 0; i < y.size(); ++i) {
    const std::size_t k = i % s.c, oq = i / s.c % s.q, op = i / s.c / s.q % s.p,
                      n = i / s.c / s.q / s.p;
    double best = -std::numeric_limits<double>::infinity();
    for (std::uint32_t r = 0; r < s.window; ++r) {
      for (std::uint32_t t = 0; t < s.window; ++t) {
        const long hh = long(op * s.stride + r) - s.pad, ww = long(oq * s.stride + t) - s.pad;
        if (hh < 0 || ww < 0 || hh >= long(s.h) || ww >= long(s.w)) continue;
        const std::size_t at = ((n * s.h + std::size_t(hh)) * s.w + std::size_t(ww)) * s.c + k;
        if (x[at] > best) {  // strictly: the first maximum in window order keeps it
          best = x[at];
          (*argmax)[i] = at;
        }
      }
    }
    y[i] = best;
  }
  return y;
}

// Dense layers [n, in] x [in, out] + b, and their gradients.
Values dense(const Values& h, const Values& w, const Values& b, std::size_t n) {
  const std::size_t out = b.size(), in = w.size() / out;
  Values z(n * out);
  for (std::size_t s = 0; s < n; ++s) {
    for (std::size_t o = 0; o < out; ++o) {
      double v = b[o];
      for (std::size_t i = 0; i < in; ++i) v += h[s * in + i] * w[i * out + o];
      z[s * out + o] = v;
    }
  }
  return z;
}

}  // namespace

Tensors ConvUnit::reference(const std::vector<double>& x, const std::vector<double>& dy) const {
  Tensors r;
  const auto param = [&](int i) -> const Values& {
    return params_[static_cast<std::size_t>(i)].initial;
  };
  const auto grad = [&](int i) -> Values& {
    return r["d" + params_[static_cast<std::size_t>(i)].name];
  };
  const auto conv_backward = [&](const Conv& conv, const Values& in, const Values& g) {
    grad(conv.weight) = conv_op(mme::MmeOp::kConvWeightGrad, conv.desc, g, in);
    return conv_op(mme::MmeOp::kConvDataGrad, conv.desc, g, param(conv.weight));
  };
  const auto norm_bwd = [&](const Norm& n, const NormStats& stats, const Values& in,
                            const Values& g) {
    return exact_norm_backward(in, g, param(n.gamma), stats, &grad(n.gamma), &grad(n.beta));
  };
  const auto norm_fwd = [&](const Norm& n, const Values& in, NormStats* stats) {
    return exact_norm_forward(in, param(n.gamma), param(n.beta), c_.eps, stats);
  };
  switch (c_.kind) {
    case ConvUnitKind::kConvBlock: {
      const Conv& conv = convs_.front();
      const Values c = conv_op(mme::MmeOp::kConvForward, conv.desc, x, param(conv.weight));
      NormStats stats;
      Values b = c;
      if (c_.batch_norm) {
        b = norm_fwd(norms_.front(), c, &stats);
      } else {
        const Values& bias = param(dense_b_.front());
        for (std::size_t i = 0; i < b.size(); ++i) b[i] += bias[i % bias.size()];
      }
      const Values a = exact_relu(b);
      Values da = dy;
      if (c_.pool > 0) {
        const mme::ConvDesc& d = conv.desc;
        const std::uint32_t stride = c_.pool_stride ? c_.pool_stride : c_.pool;
        const std::array<std::uint32_t, 4> out = c_.output();
        const Pool s{d.k, d.q(), d.p(), d.n, c_.pool, stride, c_.pool_pad, out[2], out[1]};
        std::vector<std::size_t> argmax;
        r["y"] = max_pool(a, s, &argmax);
        da.assign(a.size(), 0.0);
        for (std::size_t i = 0; i < argmax.size(); ++i) da[argmax[i]] += dy[i];
      } else {
        r["y"] = a;
      }
      const Values db = exact_relu_backward(a, da);
      Values dc = db;
      if (c_.batch_norm) {
        dc = norm_bwd(norms_.front(), stats, c, db);
      } else {
        Values& dbias = grad(dense_b_.front());
        dbias.assign(c_.filters, 0.0);
        for (std::size_t i = 0; i < db.size(); ++i) dbias[i % c_.filters] += db[i];
      }
      r["dx"] = conv_backward(conv, x, dc);
      return r;
    }
    case ConvUnitKind::kBottleneck: {
      std::array<Values, 3> convs, relus;
      std::array<NormStats, 4> stats;
      Values a = x;
      for (std::size_t i = 0; i < 3; ++i) {
        convs[i] = conv_op(mme::MmeOp::kConvForward, convs_[i].desc, a, param(convs_[i].weight));
        a = relus[i] = i < 2 ? exact_relu(norm_fwd(norms_[i], convs[i], &stats[i]))
                             : norm_fwd(norms_[i], convs[i], &stats[i]);
      }
      Values shortcut = x, proj;
      if (convs_.size() == 4) {
        proj = conv_op(mme::MmeOp::kConvForward, convs_[3].desc, x, param(convs_[3].weight));
        shortcut = norm_fwd(norms_[3], proj, &stats[3]);
      }
      const Values y = exact_relu(sum(relus[2], shortcut));
      r["y"] = y;
      const Values dsum = exact_relu_backward(y, dy);
      Values g = dsum;
      for (std::size_t i = 3; i-- > 0;) {
        if (i < 2) g = exact_relu_backward(relus[i], g);
        g = conv_backward(convs_[i], i == 0 ? x : relus[i - 1],
                          norm_bwd(norms_[i], stats[i], convs[i], g));
      }
      Values dshort = dsum;
      if (convs_.size() == 4)
        dshort = conv_backward(convs_[3], x, norm_bwd(norms_[3], stats[3], proj, dsum));
      r["dx"] = sum(g, dshort);
      return r;
    }
    case ConvUnitKind::kClassifier:
      break;
  }
  const std::size_t n = c_.batch, spatial = std::size_t{c_.height} * c_.width;
  std::vector<Values> h{x};
  if (c_.global_pool) {
    Values pooled(std::size_t{c_.channels} * n, 0.0);
    for (std::size_t i = 0; i < x.size(); ++i) {
      const std::size_t k = i % c_.channels, s = i / c_.channels / spatial;
      pooled[s * c_.channels + k] += x[i] / double(spatial);
    }
    h.front() = pooled;
  }
  for (std::size_t l = 0; l < dense_w_.size(); ++l) {
    const Values z = dense(h.back(), param(dense_w_[l]), param(dense_b_[l]), n);
    h.push_back(l + 1 == dense_w_.size() ? z : exact_relu(z));
  }
  const std::size_t classes = c_.classes;
  Values loss(n), g(n * classes);
  for (std::size_t s = 0; s < n; ++s) {
    const double* z = &h.back()[s * classes];
    const double top = *std::max_element(z, z + classes);
    double total = 0;
    for (std::size_t k = 0; k < classes; ++k) total += std::exp(z[k] - top);
    const auto label = static_cast<std::size_t>(dy[s]);
    loss[s] = top + std::log(total) - z[label];
    for (std::size_t k = 0; k < classes; ++k) {
      g[s * classes + k] = (std::exp(z[k] - top) / total - (k == label ? 1 : 0)) / double(n);
    }
  }
  r["y"] = loss;
  for (std::size_t l = dense_w_.size(); l-- > 0;) {
    const Values& w = param(dense_w_[l]);
    const std::size_t out = param(dense_b_[l]).size(), in = w.size() / out;
    Values& dw = grad(dense_w_[l]);
    Values& db = grad(dense_b_[l]);
    dw.assign(in * out, 0.0);
    db.assign(out, 0.0);
    Values dh(n * in, 0.0);
    for (std::size_t s = 0; s < n; ++s) {
      for (std::size_t o = 0; o < out; ++o) {
        const double go = g[s * out + o];
        db[o] += go;
        for (std::size_t i = 0; i < in; ++i) {
          dw[i * out + o] += h[l][s * in + i] * go;
          dh[s * in + i] += go * w[i * out + o];
        }
      }
    }
    g = l == 0 ? dh : exact_relu_backward(h[l], dh);
  }
  if (c_.global_pool) {
    Values dx(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) {
      const std::size_t k = i % c_.channels, s = i / c_.channels / spatial;
      dx[i] = g[s * c_.channels + k] / double(spatial);
    }
    g = dx;
  }
  r["dx"] = g;
  return r;
}

}  // namespace podsim::workloads
