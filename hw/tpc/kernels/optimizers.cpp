// Glue of the optimiser updates: SGD with momentum, Adam (AdamW's decoupled weight decay), LAMB
// (Adam's direction scaled by the layer's trust ratio |w| / |u|) and LARS (momentum SGD scaled by
// eta |w| / (|g| + wd |w|)). Every update runs in
// place on the weights and moments.
#include <fmt/format.h>

#include <cmath>

#include "hw/tpc/kernels/glue.h"

namespace podsim::tpc::glue {
namespace {

using Role = BufferSpec::Role;
std::array<Coord, kMaxTensors> flat_scale(int per_point, int tensors) {
  std::array<Coord, kMaxTensors> s{};
  for (int t = 0; t < tensors; ++t) s[static_cast<std::size_t>(t)] = {per_point};
  return s;
}

const std::vector<std::pair<std::string, double>> kAdamParams = {
    {"lr", 1e-3},  {"beta1", 0.9},         {"beta2", 0.999},
    {"eps", 1e-8}, {"weight_decay", 0.01}, {"step", 1}};

struct AdamFactors {
  double lr, b1, b2, eps, wd, c1, c2;
};

AdamFactors adam_factors(const KernelRequest& r, const Params& p) {
  AdamFactors f{p["lr"], p["beta1"], p["beta2"], p["eps"], p["weight_decay"], 0, 0};
  const double step = p["step"];
  if (!(f.b1 >= 0 && f.b1 < 1) || !(f.b2 >= 0 && f.b2 < 1)) {
    throw std::invalid_argument(
        fmt::format("kernel '{}': beta1 and beta2 must lie in [0, 1)", r.kernel));
  }
  if (step < 1 || step != std::floor(step)) {
    throw std::invalid_argument(
        fmt::format("kernel '{}': step = {} (a whole number from 1)", r.kernel, step));
  }
  if (!(f.eps > 0))
    throw std::invalid_argument(fmt::format("kernel '{}': eps must be > 0", r.kernel));
  f.c1 = 1.0 / (1.0 - std::pow(f.b1, step));
  f.c2 = 1.0 / (1.0 - std::pow(f.b2, step));
  return f;
}

void adam_srf(LaunchSpec& l, const AdamFactors& f) {
  const double values[] = {f.lr, f.b1, f.b2, f.eps, f.wd, f.c1, f.c2, 1 - f.b1, 1 - f.b2};
  for (std::size_t i = 0; i < 9; ++i) l.srf[i] = f32_bits(values[i]);
}

KernelDef sgd_momentum() {
  KernelDef d;
  d.info = {"sgd_momentum",
            "v = momentum v + (g + weight_decay w); w = w - lr v (in place)",
            float_types(),
            "the weights' shape",
            {"lr", "momentum", "weight_decay"}};
  d.plan = [](const KernelRequest& r) {
    Params p(r, {{"lr", 0.01}, {"momentum", 0.9}, {"weight_decay", 0.0}});
    check_shape(r);
    PlanBuilder b(r);
    const std::uint32_t n = static_cast<std::uint32_t>(elements(r.shape));
    const int w = b.buffer("w", r.dtype, r.shape, Role::kInOut);
    const int g = b.buffer("g", r.dtype, r.shape, Role::kInput);
    const int v = b.buffer("v", r.dtype, r.shape, Role::kInOut);
    LaunchSpec& l = b.launch(key("sgd_momentum", r.dtype), {points(ceil_div(n, 128)), 1, 1, 1, 1});
    l.tensors = {b.view(w, {n}), b.view(g, {n}), b.view(v, {n})};
    l.srf[0] = f32_bits(p["lr"]);
    l.srf[1] = f32_bits(p["momentum"]);
    l.srf[2] = f32_bits(p["weight_decay"]);
    l.access_scale = flat_scale(128, 3);
    b.tolerate(w, {1e-6, 2 * epsilon(r.dtype)});
    b.tolerate(v, {1e-6, 2 * epsilon(r.dtype)});
    b.cost(5.0 * n, 5.0 * n * info(r.dtype).bytes);
    return b.done();
  };
  d.reference = [](const KernelPlan& plan, Buffers& buffers) {
    const Params p(plan.request, {{"lr", 0.01}, {"momentum", 0.9}, {"weight_decay", 0.0}});
    std::vector<double> w = values(plan, buffers, 0), v = values(plan, buffers, 2);
    const std::vector<double> g = values(plan, buffers, 1);
    for (std::size_t i = 0; i < w.size(); ++i) {
      v[i] = p["momentum"] * v[i] + g[i] + p["weight_decay"] * w[i];
      w[i] -= p["lr"] * v[i];
    }
    store(plan, buffers, 0, w);
    store(plan, buffers, 2, v);
  };
  return d;
}

// The Adam moments and direction of one element, as both optimisers use them.
double adam_direction(const AdamFactors& f, double w, double g, double& m, double& v) {
  m = f.b1 * m + (1 - f.b1) * g;
  v = f.b2 * v + (1 - f.b2) * g * g;
  return f.c1 * m / (std::sqrt(f.c2 * v) + f.eps) + f.wd * w;
}

int adam_buffers(PlanBuilder& b, const KernelRequest& r) {
  const int w = b.buffer("w", r.dtype, r.shape, Role::kInOut);
  b.buffer("g", r.dtype, r.shape, Role::kInput);
  b.buffer("m", r.dtype, r.shape, Role::kInOut, {Fill::kUniform, -0.5, 0.5});
  b.buffer("v", r.dtype, r.shape, Role::kInOut, {Fill::kPositive, 0.01, 1});
  return w;
}

KernelDef adam() {
  KernelDef d;
  d.info = {"adam",
            "AdamW: m, v updated; w = w - lr (m^ / (sqrt(v^) + eps) + weight_decay w) (in place)",
            float_types(),
            "the weights' shape",
            {"lr", "beta1", "beta2", "eps", "weight_decay", "step"}};
  d.plan = [](const KernelRequest& r) {
    const AdamFactors f = adam_factors(r, Params(r, kAdamParams));
    check_shape(r);
    PlanBuilder b(r);
    const std::uint32_t n = static_cast<std::uint32_t>(elements(r.shape));
    const int w = adam_buffers(b, r);
    LaunchSpec& l = b.launch(key("adam", r.dtype), {points(ceil_div(n, 256)), 1, 1, 1, 1});
    l.tensors = {b.view(w, {n}), b.view(w + 1, {n}), b.view(w + 2, {n}), b.view(w + 3, {n})};
    adam_srf(l, f);
    l.access_scale = flat_scale(256, 4);
    for (int i : {w, w + 2, w + 3}) b.tolerate(i, {1e-6, 4 * epsilon(r.dtype)});
    b.cost(15.0 * n, 7.0 * n * info(r.dtype).bytes);
    return b.done();
  };
  d.reference = [](const KernelPlan& plan, Buffers& buffers) {
    const AdamFactors f = adam_factors(plan.request, Params(plan.request, kAdamParams));
    std::vector<double> w = values(plan, buffers, 0), m = values(plan, buffers, 2),
                        v = values(plan, buffers, 3);
    const std::vector<double> g = values(plan, buffers, 1);
    for (std::size_t i = 0; i < w.size(); ++i)
      w[i] -= f.lr * adam_direction(f, w[i], g[i], m[i], v[i]);
    store(plan, buffers, 0, w);
    store(plan, buffers, 2, m);
    store(plan, buffers, 3, v);
  };
  return d;
}

KernelDef lamb() {
  KernelDef d;
  d.info = {
      "lamb",
      "LAMB: Adam's direction u (with weight decay) scaled by |w| / |u| over the whole tensor "
      "(three launches: direction and partial norms, their sum, the update)",
      float_types(),
      "the weights' shape",
      {"lr", "beta1", "beta2", "eps", "weight_decay", "step"}};
  d.plan = [](const KernelRequest& r) {
    const AdamFactors f = adam_factors(r, Params(r, kAdamParams));
    check_shape(r);
    PlanBuilder b(r);
    const std::uint32_t n = static_cast<std::uint32_t>(elements(r.shape));
    const std::uint32_t parts = ceil_div(n, 256);
    const int w = adam_buffers(b, r);
    const int u = b.buffer("u", Dtype::kF32, {n}, BufferSpec::Role::kScratch);
    const int partial = b.buffer("partial", Dtype::kF32, {parts, 2}, BufferSpec::Role::kScratch);
    const int sums = b.buffer("sums", Dtype::kF32, {2}, BufferSpec::Role::kScratch);
    {
      LaunchSpec& l = b.launch(key("lamb_stage1", r.dtype), {points(parts), 1, 1, 1, 1});
      TensorView shares = b.view(partial, {1, parts, 2});
      l.tensors = {b.view(w, {n}),     b.view(w + 1, {n}), b.view(w + 2, {n}),
                   b.view(w + 3, {n}), b.view(u),          shares};
      adam_srf(l, f);
      l.access_scale = std::array<Coord, kMaxTensors>{Coord{256}, Coord{256}, Coord{256},
                                                      Coord{256}, Coord{256}, Coord{0, 1}};
    }
    {
      LaunchSpec& l = b.launch("reduce_rows_add.f32", {2, 1, 1, 1, 1});
      l.tensors[0] = b.view(partial);
      l.tensors[1] = b.lane0_view(sums);
      l.srf[0] = ceil_div(parts, 256);
    }
    {
      LaunchSpec& l = b.launch(key("lamb_stage2", r.dtype), {points(ceil_div(n, 256)), 1, 1, 1, 1});
      l.tensors = {b.view(w, {n}), b.view(u), b.view(sums)};
      l.srf[0] = f32_bits(f.lr);
    }
    for (int i : {w, w + 2, w + 3}) b.tolerate(i, {2e-6, 4 * epsilon(r.dtype)});
    b.cost(20.0 * n, 9.0 * n * info(r.dtype).bytes);
    return b.done();
  };
  d.reference = [](const KernelPlan& plan, Buffers& buffers) {
    const AdamFactors f = adam_factors(plan.request, Params(plan.request, kAdamParams));
    std::vector<double> w = values(plan, buffers, 0), m = values(plan, buffers, 2),
                        v = values(plan, buffers, 3);
    const std::vector<double> g = values(plan, buffers, 1);
    std::vector<double> u(w.size());
    double ww = 0, uu = 0;
    for (std::size_t i = 0; i < w.size(); ++i) {
      u[i] = adam_direction(f, w[i], g[i], m[i], v[i]);
      ww += w[i] * w[i];
      uu += u[i] * u[i];
    }
    const double ratio = ww > 0 && uu > 0 ? std::sqrt(ww) / std::sqrt(uu) : 1.0;
    for (std::size_t i = 0; i < w.size(); ++i) w[i] -= f.lr * ratio * u[i];
    store(plan, buffers, 0, w);
    store(plan, buffers, 2, m);
    store(plan, buffers, 3, v);
  };
  return d;
}

// LARS as MLPerf's ResNet-50 runs it: momentum SGD whose learning rate each tensor scales by its
// trust ratio eta |w| / (|g| + weight_decay |w|) [T16].
const std::vector<std::pair<std::string, double>> kLarsParams = {
    {"lr", 0.1}, {"momentum", 0.9}, {"weight_decay", 5e-5}, {"eta", 0.001}};

KernelDef lars() {
  KernelDef d;
  d.info = {"lars",
            "LARS: v = momentum v + lr r (g + weight_decay w), w = w - v, with the trust ratio "
            "r = eta |w| / (|g| + weight_decay |w|) over the whole tensor (three launches: "
            "partial norms, their sum, the update)",
            float_types(),
            "the weights' shape",
            {"lr", "momentum", "weight_decay", "eta"}};
  d.plan = [](const KernelRequest& r) {
    const Params p(r, kLarsParams);
    if (!(p["momentum"] >= 0 && p["momentum"] < 1)) {
      throw std::invalid_argument(
          fmt::format("kernel 'lars': momentum = {} (it must lie in [0, 1))", p["momentum"]));
    }
    if (!(p["eta"] > 0) || !(p["weight_decay"] >= 0)) {
      throw std::invalid_argument("kernel 'lars': eta must be > 0 and weight_decay >= 0");
    }
    check_shape(r);
    PlanBuilder b(r);
    const std::uint32_t n = static_cast<std::uint32_t>(elements(r.shape));
    const std::uint32_t parts = ceil_div(n, 256);
    const int w = b.buffer("w", r.dtype, r.shape, Role::kInOut);
    const int g = b.buffer("g", r.dtype, r.shape, Role::kInput);
    const int v = b.buffer("v", r.dtype, r.shape, Role::kInOut, {Fill::kUniform, -0.5, 0.5});
    const int partial = b.buffer("partial", Dtype::kF32, {parts, 2}, Role::kScratch);
    const int sums = b.buffer("sums", Dtype::kF32, {2}, Role::kScratch);
    {
      LaunchSpec& l = b.launch(key("lars_stage1", r.dtype), {points(parts), 1, 1, 1, 1});
      l.tensors = {b.view(w, {n}), b.view(g, {n}), b.view(partial, {1, parts, 2})};
      l.access_scale = std::array<Coord, kMaxTensors>{Coord{256}, Coord{256}, Coord{0, 1}};
    }
    {
      LaunchSpec& l = b.launch("reduce_rows_add.f32", {2, 1, 1, 1, 1});
      l.tensors[0] = b.view(partial);
      l.tensors[1] = b.lane0_view(sums);
      l.srf[0] = ceil_div(parts, 256);
    }
    {
      LaunchSpec& l = b.launch(key("lars_stage2", r.dtype), {points(ceil_div(n, 256)), 1, 1, 1, 1});
      l.tensors = {b.view(w, {n}), b.view(g, {n}), b.view(v, {n}), b.view(sums)};
      const double values[] = {p["lr"], p["momentum"], p["weight_decay"], p["eta"]};
      for (std::size_t i = 0; i < 4; ++i) l.srf[i] = f32_bits(values[i]);
    }
    for (int i : {w, v}) b.tolerate(i, {2e-6, 4 * epsilon(r.dtype)});
    b.cost(8.0 * n, 7.0 * n * info(r.dtype).bytes);
    return b.done();
  };
  d.reference = [](const KernelPlan& plan, Buffers& buffers) {
    const Params p(plan.request, kLarsParams);
    std::vector<double> w = values(plan, buffers, 0), v = values(plan, buffers, 2);
    const std::vector<double> g = values(plan, buffers, 1);
    double ww = 0, gg = 0;
    for (std::size_t i = 0; i < w.size(); ++i) {
      ww += w[i] * w[i];
      gg += g[i] * g[i];
    }
    const double wn = std::sqrt(ww), gn = std::sqrt(gg);
    const double ratio = wn > 0 && gn > 0 ? p["eta"] * wn / (gn + p["weight_decay"] * wn) : 1.0;
    for (std::size_t i = 0; i < w.size(); ++i) {
      v[i] = p["momentum"] * v[i] + p["lr"] * ratio * (g[i] + p["weight_decay"] * w[i]);
      w[i] -= v[i];
    }
    store(plan, buffers, 0, w);
    store(plan, buffers, 2, v);
  };
  return d;
}

}  // namespace

std::vector<KernelDef> optimizer_kernels() { return {sgd_momentum(), adam(), lamb(), lars()}; }

}  // namespace podsim::tpc::glue
