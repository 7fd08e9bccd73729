#include "workloads/convnet.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "core/random.h"
#include "workloads/values.h"

namespace podsim::workloads {
namespace {

using synapse::Session;
using tpc::Dtype;

std::uint32_t conv_out(std::uint32_t in, std::uint32_t window, std::uint32_t stride,
                       std::uint32_t pad) {
  return (in + 2 * pad - window) / stride + 1;
}

std::uint32_t pool_step(const ConvUnitConfig& c) { return c.pool_stride ? c.pool_stride : c.pool; }

// Uniform in [-limit, limit), type-rounded, from a generator per parameter.
std::vector<double> uniform_values(std::size_t n, double limit, std::uint64_t seed, Dtype t) {
  core::Random r(seed);
  std::vector<double> v(n);
  for (double& x : v) x = rounded(limit * (2 * r.uniform() - 1), t);
  return v;
}

std::uint64_t hash_name(const std::string& s) {
  std::uint64_t h = 1469598103934665603ull;  // FNV-1a: a stable per-parameter stream
  for (unsigned char ch : s) h = (h ^ ch) * 1099511628211ull;
  return h;
}

// The classifier's dense layers' widths, its input features' first.
std::vector<std::uint32_t> dense_widths(const ConvUnitConfig& c) {
  std::vector<std::uint32_t> widths{c.global_pool ? c.channels : c.channels * c.height * c.width};
  widths.insert(widths.end(), c.hidden.begin(), c.hidden.end());
  widths.push_back(c.classes);
  return widths;
}

std::map<std::string, double> pool_params(std::uint32_t window_h, std::uint32_t window_w,
                                          std::uint32_t stride_h, std::uint32_t stride_w,
                                          std::uint32_t pad) {
  return {{"window_h", window_h}, {"window_w", window_w}, {"stride_h", stride_h},
          {"stride_w", stride_w}, {"pad_h", pad},         {"pad_w", pad}};
}

}  // namespace

std::string ConvUnitConfig::problem() const {
  if (batch == 0 || channels == 0 || height == 0 || width == 0)
    return "a zero-sized input (batch, channels, height, width)";
  if (dtype != Dtype::kF32 && dtype != Dtype::kBf16 && dtype != Dtype::kF16)
    return fmt::format("type {}: f32, bf16 or f16", tpc::info(dtype).name);
  switch (kind) {
    case ConvUnitKind::kConvBlock:
      if (filters == 0 || window == 0 || stride == 0)
        return "a zero filter count, window or stride";
      if (height + 2 * pad < window || width + 2 * pad < window)
        return fmt::format("a {0}x{0} window over a padded {1}x{2} input", window, height + 2 * pad,
                           width + 2 * pad);
      if (pool > 0) {
        const std::uint32_t p = conv_out(height, window, stride, pad);
        const std::uint32_t q = conv_out(width, window, stride, pad);
        if (p + 2 * pool_pad < pool || q + 2 * pool_pad < pool)
          return fmt::format("a {0}x{0} pool over a {1}x{2} map", pool, p, q);
      }
      return {};
    case ConvUnitKind::kBottleneck:
      if (filters == 0 || mid == 0 || stride == 0) return "a zero filter count, mid or stride";
      return {};
    case ConvUnitKind::kClassifier:
      if (classes < 2) return "at least two classes";
      for (std::uint32_t h : hidden) {
        if (h == 0) return "a dense layer of width 0";
      }
      return {};
  }
  return "an unknown unit kind";
}

std::array<std::uint32_t, 4> ConvUnitConfig::output() const {
  switch (kind) {
    case ConvUnitKind::kConvBlock: {
      std::uint32_t p = conv_out(height, window, stride, pad);
      std::uint32_t q = conv_out(width, window, stride, pad);
      if (pool > 0) {
        p = conv_out(p, pool, pool_step(*this), pool_pad);
        q = conv_out(q, pool, pool_step(*this), pool_pad);
      }
      return {filters, q, p, batch};
    }
    case ConvUnitKind::kBottleneck:
      return {filters, conv_out(width, 3, stride, 1), conv_out(height, 3, stride, 1), batch};
    case ConvUnitKind::kClassifier:
      break;
  }
  return {classes, 1, 1, batch};
}

std::uint64_t ConvUnitConfig::parameters() const {
  const auto conv = [](std::uint64_t c, std::uint64_t k, std::uint64_t window) {
    return c * k * window * window;
  };
  switch (kind) {
    case ConvUnitKind::kConvBlock:
      return conv(channels, filters, window) + (batch_norm ? 2 : 1) * std::uint64_t{filters};
    case ConvUnitKind::kBottleneck: {
      std::uint64_t n = conv(channels, mid, 1) + conv(mid, mid, 3) + conv(mid, filters, 1) +
                        2 * (2 * std::uint64_t{mid} + filters);
      if (stride != 1 || channels != filters) n += conv(channels, filters, 1) + 2 * filters;
      return n;
    }
    case ConvUnitKind::kClassifier:
      break;
  }
  const std::vector<std::uint32_t> widths = dense_widths(*this);
  std::uint64_t n = 0;
  for (std::size_t l = 1; l < widths.size(); ++l)
    n += std::uint64_t{widths[l - 1]} * widths[l] + widths[l];
  return n;
}

std::string ConvUnitConfig::key() const {
  const std::string input =
      fmt::format("{}x{}x{} n{} {}", channels, height, width, batch, tpc::info(dtype).name);
  switch (kind) {
    case ConvUnitKind::kConvBlock:
      return fmt::format("conv {} k{} {}x{}/{} p{}{} pool{}/{}", input, filters, window, window,
                         stride, pad, batch_norm ? " bn" : " bias", pool, pool_step(*this));
    case ConvUnitKind::kBottleneck:
      return fmt::format("bottleneck {} mid{} out{} /{}", input, mid, filters, stride);
    case ConvUnitKind::kClassifier:
      break;
  }
  std::string widths;
  for (std::uint32_t h : hidden) widths += fmt::format("{}-", h);
  return fmt::format("classifier {}{} {}{}", input, global_pool ? " avgpool" : "", widths, classes);
}

ConvUnit::ConvUnit(Session& session, const ConvUnitConfig& config, const std::string& prefix,
                   bool initialize)
    : s_(session), c_(config), prefix_(prefix) {
  if (auto p = c_.problem(); !p.empty())
    throw std::invalid_argument(fmt::format("{}: {}", prefix_, p));
  const std::uint32_t cin = c_.channels, h = c_.height, w = c_.width;
  switch (c_.kind) {
    case ConvUnitKind::kConvBlock:
      convs_.push_back(add_conv("conv", cin, h, w, c_.filters, c_.window, c_.stride, c_.pad));
      if (c_.batch_norm) {
        norms_.push_back(add_norm("bn", c_.filters));
      } else {
        dense_b_.push_back(add_param("bias", {c_.filters}, std::vector<double>(c_.filters, 0.0)));
      }
      break;
    case ConvUnitKind::kBottleneck: {
      const std::uint32_t p = conv_out(h, 3, c_.stride, 1), q = conv_out(w, 3, c_.stride, 1);
      convs_.push_back(add_conv("conv1", cin, h, w, c_.mid, 1, 1, 0));
      norms_.push_back(add_norm("bn1", c_.mid));
      convs_.push_back(add_conv("conv2", c_.mid, h, w, c_.mid, 3, c_.stride, 1));
      norms_.push_back(add_norm("bn2", c_.mid));
      convs_.push_back(add_conv("conv3", c_.mid, p, q, c_.filters, 1, 1, 0));
      norms_.push_back(add_norm("bn3", c_.filters));
      if (c_.stride != 1 || cin != c_.filters) {
        convs_.push_back(add_conv("proj", cin, h, w, c_.filters, 1, c_.stride, 0));
        norms_.push_back(add_norm("proj_bn", c_.filters));
      }
      break;
    }
    case ConvUnitKind::kClassifier: {
      const std::vector<std::uint32_t> widths = dense_widths(c_);
      for (std::size_t l = 0; l + 1 < widths.size(); ++l) {
        const std::uint32_t in = widths[l], out = widths[l + 1];
        const std::string name = fmt::format("fc{}", l);
        dense_w_.push_back(
            add_param(name + ".w", {out, in},
                      uniform_values(std::size_t{in} * out, std::sqrt(6.0 / (in + out)),
                                     c_.seed ^ hash_name(prefix_ + name), c_.dtype)));
        dense_b_.push_back(add_param(name + ".b", {out}, std::vector<double>(out, 0.0)));
      }
      dloss_ = s_.persistent(prefix_ + ".dloss", Dtype::kF32, {c_.batch});
      const double samples = c_.loss_samples ? c_.loss_samples : c_.batch;
      s_.write(dloss_, std::vector<double>(c_.batch, 1.0 / samples));
      break;
    }
  }
  if (initialize) {
    for (const ConvParameter& p : params_) s_.write(p.value, p.initial);
  }
}

int ConvUnit::add_param(const std::string& name, std::vector<std::uint32_t> shape,
                        std::vector<double> initial, bool f32_gradient) {
  ConvParameter p;
  p.name = prefix_ + "." + name;
  p.value = s_.persistent(p.name, c_.dtype, shape);
  p.gradient = s_.persistent("d" + p.name, f32_gradient ? Dtype::kF32 : c_.dtype, shape);
  p.initial = std::move(initial);
  params_.push_back(std::move(p));
  return static_cast<int>(params_.size()) - 1;
}

ConvUnit::Conv ConvUnit::add_conv(const std::string& name, std::uint32_t c, std::uint32_t h,
                                  std::uint32_t w, std::uint32_t k, std::uint32_t window,
                                  std::uint32_t stride, std::uint32_t pad) {
  Conv conv;
  conv.desc.n = c_.batch;
  conv.desc.c = c;
  conv.desc.h = h;
  conv.desc.w = w;
  conv.desc.k = k;
  conv.desc.r = conv.desc.s = window;
  conv.desc.stride_h = conv.desc.stride_w = stride;
  conv.desc.pad_h = conv.desc.pad_w = pad;
  const std::size_t n = std::size_t{k} * window * window * c;
  const double limit = std::sqrt(6.0 / (double(c) * window * window));  // He-uniform
  conv.weight = add_param(name + ".w", {c, window, window, k},
                          uniform_values(n, limit, c_.seed ^ hash_name(prefix_ + name), c_.dtype));
  return conv;
}

// Gamma and beta in the unit's type; their gradients f32, as the batch-norm kernel gives them.
ConvUnit::Norm ConvUnit::add_norm(const std::string& name, std::uint32_t channels) {
  Norm n;
  n.gamma = add_param(name + ".gamma", {channels}, std::vector<double>(channels, 1.0), true);
  n.beta = add_param(name + ".beta", {channels}, std::vector<double>(channels, 0.0), true);
  return n;
}

ConvUnit::Value ConvUnit::tensor(const std::string& name, std::vector<std::uint32_t> shape) {
  return s_.temporary(prefix_ + "." + name, c_.dtype, std::move(shape));
}

ConvUnit::Value ConvUnit::conv_forward(const std::string& name, const Conv& conv, Value x) {
  const mme::ConvDesc& d = conv.desc;
  const Value y = tensor(name + ".y", {d.k, d.q(), d.p(), d.n});
  s_.convolution(prefix_ + "." + name, mme::MmeOp::kConvForward, d, x,
                 params_[static_cast<std::size_t>(conv.weight)].value, y);
  return y;
}

// The filters' gradient, and the input's when `dx`.
ConvUnit::Value ConvUnit::conv_backward(const std::string& name, const Conv& conv, Value x,
                                        Value dy, bool dx) {
  const mme::ConvDesc& d = conv.desc;
  const ConvParameter& w = params_[static_cast<std::size_t>(conv.weight)];
  s_.convolution(prefix_ + "." + name + ".wgrad", mme::MmeOp::kConvWeightGrad, d, dy, x,
                 w.gradient);
  if (!dx) return {};
  const Value g = tensor(name + ".dx", {d.c, d.w, d.h, d.n});
  s_.convolution(prefix_ + "." + name + ".dgrad", mme::MmeOp::kConvDataGrad, d, dy, w.value, g);
  return g;
}

ConvUnit::Value ConvUnit::norm_forward(const std::string& name, const Norm& n, Value x,
                                       std::uint32_t channels, std::uint64_t rows, Value* mean,
                                       Value* rstd) {
  const auto r = static_cast<std::uint32_t>(rows);
  const Value y = tensor(name + ".y", {channels, r});
  *mean = s_.temporary(prefix_ + "." + name + ".mean", Dtype::kF32, {channels});
  *rstd = s_.temporary(prefix_ + "." + name + ".rstd", Dtype::kF32, {channels});
  s_.kernel(prefix_ + "." + name, request("batch_norm", c_.dtype, {channels, r}, {{"eps", c_.eps}}),
            {x, params_[static_cast<std::size_t>(n.gamma)].value,
             params_[static_cast<std::size_t>(n.beta)].value, y, *mean, *rstd});
  return y;
}

ConvUnit::Value ConvUnit::norm_backward(const std::string& name, const Norm& n, Value x, Value dy,
                                        Value mean, Value rstd, std::uint32_t channels,
                                        std::uint64_t rows) {
  const auto r = static_cast<std::uint32_t>(rows);
  const Value dx = tensor(name + ".dx", {channels, r});
  s_.kernel(prefix_ + "." + name + ".bwd", request("batch_norm_bwd", c_.dtype, {channels, r}),
            {dy, x, mean, rstd, params_[static_cast<std::size_t>(n.gamma)].value, dx,
             params_[static_cast<std::size_t>(n.gamma)].gradient,
             params_[static_cast<std::size_t>(n.beta)].gradient});
  return dx;
}

ConvUnit::Value ConvUnit::relu(const std::string& name, Value x, std::vector<std::uint32_t> shape) {
  const Value y = tensor(name + ".y", shape);
  s_.kernel(prefix_ + "." + name, request("relu", c_.dtype, shape), {x, y});
  return y;
}

ConvUnit::Value ConvUnit::relu_backward(const std::string& name, Value y, Value dy,
                                        std::vector<std::uint32_t> shape) {
  const Value dx = tensor(name + ".dx", shape);
  s_.kernel(prefix_ + "." + name + ".bwd", request("relu_bwd", c_.dtype, shape), {dy, y, dx});
  return dx;
}

ConvUnit::Value ConvUnit::add(const std::string& name, Value a, Value b,
                              std::vector<std::uint32_t> shape) {
  const Value y = tensor(name, shape);
  s_.kernel(prefix_ + "." + name, request("add", c_.dtype, shape), {a, b, y});
  return y;
}

ConvUnit::Value ConvUnit::forward(Value x, Value labels) {
  saved_.clear();
  saved_["x"] = x;
  switch (c_.kind) {
    case ConvUnitKind::kConvBlock:
      return conv_block_forward(x);
    case ConvUnitKind::kBottleneck:
      return bottleneck_forward(x);
    case ConvUnitKind::kClassifier:
      break;
  }
  return classifier_forward(x, labels);
}

ConvUnit::Value ConvUnit::backward(Value dy, bool input_gradient) {
  if (saved_.empty())
    throw std::logic_error(fmt::format("{}: backward without a forward pass", prefix_));
  switch (c_.kind) {
    case ConvUnitKind::kConvBlock:
      return conv_block_backward(dy, input_gradient);
    case ConvUnitKind::kBottleneck:
      return bottleneck_backward(dy, input_gradient);
    case ConvUnitKind::kClassifier:
      break;
  }
  return classifier_backward(input_gradient);
}

ConvUnit::Value ConvUnit::conv_block_forward(Value x) {
  const Conv& conv = convs_.front();
  const mme::ConvDesc& d = conv.desc;
  const std::vector<std::uint32_t> shape{d.k, d.q(), d.p(), d.n};
  const std::uint64_t rows = std::uint64_t{d.q()} * d.p() * d.n;
  const Value y = saved_["conv"] = conv_forward("conv", conv, x);
  Value b;
  if (c_.batch_norm) {
    b = norm_forward("bn", norms_.front(), y, d.k, rows, &saved_["mean"], &saved_["rstd"]);
  } else {
    b = tensor("bias.y", shape);
    s_.kernel(prefix_ + ".bias",
              request("bias_add", c_.dtype, {d.k, static_cast<std::uint32_t>(rows)}),
              {y, params_[static_cast<std::size_t>(dense_b_.front())].value, b});
  }
  const Value a = saved_["relu"] = relu("relu", b, shape);
  if (c_.pool == 0) return a;
  const std::array<std::uint32_t, 4> out = c_.output();
  const Value pooled = saved_["pool"] = tensor("pool.y", {out[0], out[1], out[2], out[3]});
  s_.kernel(prefix_ + ".pool",
            request("max_pool", c_.dtype, shape,
                    pool_params(c_.pool, c_.pool, pool_step(c_), pool_step(c_), c_.pool_pad)),
            {a, pooled});
  return pooled;
}

ConvUnit::Value ConvUnit::conv_block_backward(Value dy, bool input_gradient) {
  const Conv& conv = convs_.front();
  const mme::ConvDesc& d = conv.desc;
  const std::vector<std::uint32_t> shape{d.k, d.q(), d.p(), d.n};
  const std::uint64_t rows = std::uint64_t{d.q()} * d.p() * d.n;
  Value da = dy;
  if (c_.pool > 0) {
    da = tensor("pool.dx", shape);
    s_.kernel(prefix_ + ".pool.bwd",
              request("max_pool_bwd", c_.dtype, shape,
                      pool_params(c_.pool, c_.pool, pool_step(c_), pool_step(c_), c_.pool_pad)),
              {dy, saved_.at("relu"), saved_.at("pool"), da});
  }
  const Value db = relu_backward("relu", saved_.at("relu"), da, shape);
  Value dc = db;
  if (c_.batch_norm) {
    dc = norm_backward("bn", norms_.front(), saved_.at("conv"), db, saved_.at("mean"),
                       saved_.at("rstd"), d.k, rows);
  } else {
    s_.kernel(
        prefix_ + ".bias.grad",
        request("reduce_sum", c_.dtype, {d.k, static_cast<std::uint32_t>(rows)}, {{"dim", 1}}),
        {db, params_[static_cast<std::size_t>(dense_b_.front())].gradient});
  }
  return conv_backward("conv", conv, saved_.at("x"), dc, input_gradient);
}

ConvUnit::Value ConvUnit::bottleneck_forward(Value x) {
  Value a = x;
  for (std::size_t i = 0; i < 3; ++i) {
    const std::string n = fmt::format("{}", i + 1);
    const mme::ConvDesc& d = convs_[i].desc;
    const std::uint64_t rows = std::uint64_t{d.q()} * d.p() * d.n;
    const Value c = saved_["conv" + n] = conv_forward("conv" + n, convs_[i], a);
    const Value b =
        norm_forward("bn" + n, norms_[i], c, d.k, rows, &saved_["mean" + n], &saved_["rstd" + n]);
    if (i == 2) {
      saved_["bn3"] = b;
      break;
    }
    a = saved_["relu" + n] = relu("relu" + n, b, {d.k, d.q(), d.p(), d.n});
  }
  const mme::ConvDesc& last = convs_[2].desc;
  const std::vector<std::uint32_t> shape{last.k, last.q(), last.p(), last.n};
  const std::uint64_t rows = std::uint64_t{last.q()} * last.p() * last.n;
  Value shortcut = x;
  if (convs_.size() == 4) {
    const Value c = saved_["proj"] = conv_forward("proj", convs_[3], x);
    shortcut = norm_forward("proj_bn", norms_[3], c, last.k, rows, &saved_["proj_mean"],
                            &saved_["proj_rstd"]);
  }
  const Value sum = add("sum", saved_.at("bn3"), shortcut, shape);
  return saved_["out"] = relu("relu_out", sum, shape);
}

ConvUnit::Value ConvUnit::bottleneck_backward(Value dy, bool input_gradient) {
  const mme::ConvDesc& last = convs_[2].desc;
  const std::vector<std::uint32_t> shape{last.k, last.q(), last.p(), last.n};
  const Value dsum = relu_backward("relu_out", saved_.at("out"), dy, shape);
  Value g = dsum;
  for (std::size_t i = 3; i-- > 0;) {
    const std::string n = fmt::format("{}", i + 1);
    const mme::ConvDesc& d = convs_[i].desc;
    const std::uint64_t rows = std::uint64_t{d.q()} * d.p() * d.n;
    if (i < 2) g = relu_backward("relu" + n, saved_.at("relu" + n), g, {d.k, d.q(), d.p(), d.n});
    const Value dc = norm_backward("bn" + n, norms_[i], saved_.at("conv" + n), g,
                                   saved_.at("mean" + n), saved_.at("rstd" + n), d.k, rows);
    const Value in = i == 0 ? saved_.at("x") : saved_.at(fmt::format("relu{}", i));
    g = conv_backward("conv" + n, convs_[i], in, dc, i > 0 || input_gradient);
  }
  Value dshort = dsum;
  if (convs_.size() == 4) {
    const std::uint64_t rows = std::uint64_t{last.q()} * last.p() * last.n;
    const Value dc = norm_backward("proj_bn", norms_[3], saved_.at("proj"), dsum,
                                   saved_.at("proj_mean"), saved_.at("proj_rstd"), last.k, rows);
    dshort = conv_backward("proj", convs_[3], saved_.at("x"), dc, input_gradient);
  }
  if (!input_gradient) return {};
  return add("dx", g, dshort, {c_.channels, c_.width, c_.height, c_.batch});
}

ConvUnit::Value ConvUnit::classifier_forward(Value x, Value labels) {
  const std::uint32_t n = c_.batch;
  const std::vector<std::uint32_t> widths = dense_widths(c_);
  Value features = x;
  if (c_.global_pool) {
    features = saved_["pooled"] = tensor("pool.y", {c_.channels, n});
    s_.kernel(prefix_ + ".pool",
              request("avg_pool", c_.dtype, {c_.channels, c_.width, c_.height, n},
                      pool_params(c_.height, c_.width, c_.height, c_.width, 0)),
              {x, features});
  }
  saved_["in0"] = features;
  Value logits;
  for (std::size_t l = 0; l < dense_w_.size(); ++l) {
    const ConvParameter& w = params_[static_cast<std::size_t>(dense_w_[l])];
    const std::uint32_t in = widths[l], out = widths[l + 1];
    const std::string name = fmt::format("fc{}", l);
    const Value z = tensor(name + ".z", {out, n}), a = tensor(name + ".a", {out, n});
    mme::GemmDesc fwd;  // [n, in] x [in, out]
    fwd.m = n;
    fwd.n = out;
    fwd.k = in;
    s_.gemm(prefix_ + "." + name, saved_.at(fmt::format("in{}", l)), w.value, z, fwd);
    s_.kernel(prefix_ + "." + name + ".bias", request("bias_add", c_.dtype, {out, n}),
              {z, params_[static_cast<std::size_t>(dense_b_[l])].value, a});
    if (l + 1 == dense_w_.size()) {
      logits = saved_["logits"] = a;
      break;
    }
    saved_[fmt::format("in{}", l + 1)] = relu(name + ".relu", a, {out, n});
  }
  labels_ = labels;
  const Value loss = s_.temporary(prefix_ + ".loss", Dtype::kF32, {n});
  s_.kernel(prefix_ + ".loss", request("cross_entropy", c_.dtype, {c_.classes, n}),
            {logits, labels, loss});
  return loss;
}

ConvUnit::Value ConvUnit::classifier_backward(bool input_gradient) {
  const std::uint32_t n = c_.batch;
  const std::vector<std::uint32_t> widths = dense_widths(c_);
  Value g = tensor("dlogits", {c_.classes, n});
  s_.kernel(prefix_ + ".loss.bwd", request("cross_entropy_bwd", c_.dtype, {c_.classes, n}),
            {saved_.at("logits"), labels_, dloss_, g});
  for (std::size_t l = dense_w_.size(); l-- > 0;) {
    const ConvParameter& w = params_[static_cast<std::size_t>(dense_w_[l])];
    const std::uint32_t in = widths[l], out = widths[l + 1];
    const std::string name = fmt::format("fc{}", l);
    const Value h = saved_.at(fmt::format("in{}", l));
    mme::GemmDesc wgrad;  // h^T g: [in, n] x [n, out]
    wgrad.m = in;
    wgrad.n = out;
    wgrad.k = n;
    wgrad.trans_a = true;
    s_.gemm(prefix_ + "." + name + ".wgrad", h, g, w.gradient, wgrad);
    s_.kernel(prefix_ + "." + name + ".bias.grad",
              request("reduce_sum", c_.dtype, {out, n}, {{"dim", 1}}),
              {g, params_[static_cast<std::size_t>(dense_b_[l])].gradient});
    if (l == 0 && !input_gradient) return {};
    const Value dh = tensor(name + ".dx", {in, n});
    mme::GemmDesc dgrad;  // g W^T: [n, out] x [out, in]
    dgrad.m = n;
    dgrad.n = in;
    dgrad.k = out;
    dgrad.trans_b = true;
    s_.gemm(prefix_ + "." + name + ".dgrad", g, w.value, dh, dgrad);
    g = l == 0 ? dh : relu_backward(name + ".relu", h, dh, {in, n});
  }
  if (!c_.global_pool) return g;
  const Value dx = tensor("pool.dx", {c_.channels, c_.width, c_.height, n});
  s_.kernel(prefix_ + ".pool.bwd",
            request("avg_pool_bwd", c_.dtype, {c_.channels, c_.width, c_.height, n},
                    pool_params(c_.height, c_.width, c_.height, c_.width, 0)),
            {g, dx});
  return dx;
}

ConvUnitStep::ConvUnitStep(Session& session, const ConvUnitConfig& config, bool functional,
                           bool input_gradient)
    : s_(session),
      unit_(session, config, "unit", functional),
      functional_(functional),
      input_gradient_(input_gradient) {
  const ConvUnitConfig& c = unit_.config();
  const std::array<std::uint32_t, 4> out = c.output();
  x_ = s_.persistent("step.x", c.dtype, {c.channels, c.width, c.height, c.batch});
  if (c.kind == ConvUnitKind::kClassifier) {
    labels_ = s_.persistent("step.labels", Dtype::kI32, {c.batch});
    core::Random r(c.seed ^ 0x1abe15ull);
    dy_values_.resize(c.batch);
    for (double& l : dy_values_) l = static_cast<double>(r.next() % c.classes);
    s_.write(labels_, dy_values_);
  } else {
    dy_ = s_.persistent("step.dy", c.dtype, {out[0], out[1], out[2], out[3]});
  }
  if (!functional_) return;
  const std::uint64_t inputs = std::uint64_t{c.channels} * c.width * c.height * c.batch;
  x_values_ = uniform_values(inputs, 1.0, c.seed ^ 0x1e9u, c.dtype);
  s_.write(x_, x_values_);
  if (c.kind != ConvUnitKind::kClassifier) {
    dy_values_ = uniform_values(std::uint64_t{out[0]} * out[1] * out[2] * out[3], 1.0,
                                c.seed ^ 0xd1u, c.dtype);
    s_.write(dy_, dy_values_);
    y_ = s_.persistent("step.y", c.dtype, {out[0], out[1], out[2], out[3]});
  } else {
    y_ = s_.persistent("step.y", Dtype::kF32, {c.batch});
  }
  dx_ = s_.persistent("step.dx", c.dtype, {c.channels, c.width, c.height, c.batch});
}

void ConvUnitStep::step(bool backward) {
  const synapse::Session::Value y = unit_.forward(x_, labels_);
  if (functional_) s_.copy("step.keep_y", y, y_);
  if (backward) {
    const synapse::Session::Value dx = unit_.backward(dy_, input_gradient_);
    if (functional_ && input_gradient_) s_.copy("step.keep_dx", dx, dx_);
  }
  s_.mark_step();
}

Tensors ConvUnitStep::results() {
  if (!functional_) throw std::logic_error("unit step: results of a timing-only unit");
  Tensors r;
  r["y"] = s_.read(y_);
  if (input_gradient_) r["dx"] = s_.read(dx_);
  for (const ConvParameter& p : unit_.parameters()) r["d" + p.name] = s_.read(p.gradient);
  return r;
}

ConvNet::ConvNet(Session& session, std::vector<ConvUnitConfig> units) : s_(session) {
  if (units.empty() || units.back().kind != ConvUnitKind::kClassifier)
    throw std::invalid_argument("convnet: the last unit must be a classifier");
  for (std::size_t i = 0; i < units.size(); ++i) {
    units_.push_back(
        std::make_unique<ConvUnit>(s_, units[i], fmt::format("u{}", i), /*initialize=*/true));
  }
  for (const ConvParameter* p : parameters()) {
    const synapse::Tensor& t = s_.tensor(p->value);
    momenta_.push_back(s_.persistent("m" + p->name, t.dtype, t.shape));
    s_.write(momenta_.back(), std::vector<double>(t.elements(), 0.0));
  }
  const ConvUnitConfig& first = units.front();
  x_ = s_.persistent("x", first.dtype, {first.channels, first.width, first.height, first.batch});
  labels_ = s_.persistent("labels", Dtype::kI32, {first.batch});
  loss_ = s_.persistent("loss", Dtype::kF32, {first.batch});
}

std::vector<const ConvParameter*> ConvNet::parameters() const {
  std::vector<const ConvParameter*> all;
  for (const auto& u : units_) {
    for (const ConvParameter& p : u->parameters()) all.push_back(&p);
  }
  return all;
}

double ConvNet::compute_gradients(const std::vector<double>& x, const std::vector<double>& labels) {
  s_.write(x_, x);
  s_.write(labels_, labels);
  Session::Value h = x_;
  for (auto& u : units_) h = u->forward(h, labels_);
  s_.copy("keep_loss", h, loss_);
  Session::Value g;
  for (std::size_t i = units_.size(); i-- > 0;) g = units_[i]->backward(g, i > 0);
  s_.mark_step();
  const std::vector<double> loss = s_.read(loss_);
  double total = 0;
  for (double l : loss) total += l;
  return total / static_cast<double>(loss.size());
}

// The update in the parameters' type, as the MLP's (no master weights: the small nets this
// trains functionally are checked against each other, not against a mixed-precision run).
void ConvNet::update(double lr, double momentum) {
  const auto params = parameters();
  for (std::size_t i = 0; i < params.size(); ++i) {
    const ConvParameter& p = *params[i];
    const synapse::Tensor& t = s_.tensor(p.value);
    const std::vector<std::uint32_t> shape{static_cast<std::uint32_t>(t.elements())};
    s_.kernel("sgd." + p.name,
              request("sgd_momentum", t.dtype, shape, {{"lr", lr}, {"momentum", momentum}}),
              {p.value, p.gradient, momenta_[i]});
  }
  s_.mark_step();
}

std::vector<double> ConvNet::read_parameters() {
  std::vector<double> all;
  for (const ConvParameter* p : parameters()) {
    const std::vector<double> v = s_.read(p->value);
    all.insert(all.end(), v.begin(), v.end());
  }
  return all;
}

ImageBatch mnist_like_batch(std::uint32_t batch, int step, std::uint64_t seed, Dtype dtype) {
  constexpr std::uint32_t kPixels = 28 * 28, kClasses = 10;
  core::Random teacher(seed ^ 0x7eac4e5ull);
  std::vector<double> t(std::size_t{kPixels} * kClasses);
  for (double& v : t) v = 2 * teacher.uniform() - 1;
  core::Random r(seed ^ (0x9E3779B97F4A7C15ull * (1000 + static_cast<std::uint64_t>(step))));
  ImageBatch b;
  b.x.resize(std::size_t{kPixels} * batch);
  for (double& v : b.x) v = rounded(r.uniform(), dtype);
  for (std::uint32_t n = 0; n < batch; ++n) {
    std::vector<double> score(kClasses, 0.0);
    for (std::uint32_t i = 0; i < kPixels; ++i) {
      for (std::uint32_t k = 0; k < kClasses; ++k)
        score[k] += (b.x[n * kPixels + i] - 0.5) * t[i * kClasses + k];
    }
    b.labels.push_back(
        static_cast<double>(std::max_element(score.begin(), score.end()) - score.begin()));
  }
  return b;
}

ImageBatch slice(const ImageBatch& b, std::uint32_t first, std::uint32_t count) {
  const std::size_t per_sample = b.x.size() / b.labels.size();
  ImageBatch s;
  s.x.assign(b.x.begin() + static_cast<std::ptrdiff_t>(first * per_sample),
             b.x.begin() + static_cast<std::ptrdiff_t>((first + count) * per_sample));
  s.labels.assign(b.labels.begin() + first, b.labels.begin() + first + count);
  return s;
}

namespace {

ConvUnitConfig unit(ConvUnitKind kind, std::uint32_t batch, Dtype dtype,
                    std::array<std::uint32_t, 3> chw) {
  ConvUnitConfig c;
  c.kind = kind;
  c.batch = batch;
  c.dtype = dtype;
  c.channels = chw[0];
  c.height = chw[1];
  c.width = chw[2];
  return c;
}

}  // namespace

std::vector<ConvUnitConfig> resnet50_units(std::uint32_t batch, Dtype dtype) {
  std::vector<ConvUnitConfig> units;
  ConvUnitConfig stem = unit(ConvUnitKind::kConvBlock, batch, dtype, {3, 224, 224});
  stem.filters = 64;
  stem.window = 7;
  stem.stride = 2;
  stem.pad = 3;
  stem.pool = 3;
  stem.pool_stride = 2;
  stem.pool_pad = 1;
  units.push_back(stem);
  std::array<std::uint32_t, 3> in{64, 56, 56};
  const std::array<std::uint32_t, 4> blocks{3, 4, 6, 3}, mids{64, 128, 256, 512};
  for (std::size_t stage = 0; stage < 4; ++stage) {
    for (std::uint32_t b = 0; b < blocks[stage]; ++b) {
      ConvUnitConfig c = unit(ConvUnitKind::kBottleneck, batch, dtype, in);
      c.mid = mids[stage];
      c.filters = 4 * mids[stage];
      c.stride = stage > 0 && b == 0 ? 2 : 1;
      const std::array<std::uint32_t, 4> out = c.output();
      in = {out[0], out[2], out[1]};
      units.push_back(c);
    }
  }
  ConvUnitConfig head = unit(ConvUnitKind::kClassifier, batch, dtype, in);
  head.global_pool = true;
  head.classes = 1000;
  units.push_back(head);
  return units;
}

std::vector<ConvUnitConfig> mnist_units(std::uint32_t batch, Dtype dtype) {
  ConvUnitConfig conv = unit(ConvUnitKind::kConvBlock, batch, dtype, {1, 28, 28});
  conv.filters = 8;
  conv.window = 3;
  conv.batch_norm = false;
  conv.pool = 2;
  ConvUnitConfig head = unit(ConvUnitKind::kClassifier, batch, dtype, {8, 13, 13});
  head.hidden = {8};
  head.classes = 10;
  return {conv, head};
}

}  // namespace podsim::workloads
