// Glue of the normalisation kernels: layer norm over dimension 0 of each row, batch norm over
// the rows of each channel (dimension 0 being the channel, as in NHWC), forward and backward.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "hw/tpc/kernels/glue.h"

namespace podsim::tpc::glue {
namespace {

using Role = BufferSpec::Role;

// The widest rows whose kernels keep everything in vector local memory (80 KiB): layer_norm the
// row, gamma and beta (3 regions of 8-vector octets), layer_norm_bwd the row's xhat and g, gamma
// and the block's two sums (5 regions).
constexpr std::uint32_t kLayerNormVlmColumns = 6656;
constexpr std::uint32_t kLayerNormBwdVlmColumns = 4096;
// The variants of layer_norm_short and layer_norm_bwd_short, in vectors a row (at most 16: two
// rows at a time forward, one row's dy and x backward, in 32 of the 40 registers); 0 when the
// row is wider.
std::uint32_t short_vectors(std::uint32_t columns) {
  return register_variant(columns, {4, 8, 12, 16});
}

const Fill kGamma{Fill::kUniform, 0.5, 1.5};
const Fill kMean{Fill::kUniform, -1, 1};
const Fill kRstd{Fill::kPositive, 0.5, 2};

void check_eps(const KernelRequest& r, double eps) {
  if (!(eps > 0))
    throw std::invalid_argument(fmt::format("kernel '{}': eps = {} (must be > 0)", r.kernel, eps));
}

// Mean and 1 / sqrt(var + eps) of `n` values spaced `stride` apart from `first`.
std::pair<double, double> moments(const std::vector<double>& x, std::size_t first, std::size_t n,
                                  std::size_t stride, double eps) {
  double mean = 0, var = 0;
  for (std::size_t i = 0; i < n; ++i) mean += x[first + i * stride];
  mean /= static_cast<double>(n);
  for (std::size_t i = 0; i < n; ++i)
    var += (x[first + i * stride] - mean) * (x[first + i * stride] - mean);
  return {mean, 1.0 / std::sqrt(var / static_cast<double>(n) + eps)};
}

KernelDef layer_norm() {
  KernelDef d;
  d.info = {"layer_norm",
            "y = (x - mean) / sqrt(var + eps) * gamma + beta over dimension 0; keeps mean and rstd",
            float_types(),
            "x [C, R...], C at most 20480; gamma, beta [C]",
            {"eps"}};
  d.plan = [](const KernelRequest& r) {
    Params p(r, {{"eps", 1e-5}});
    check_eps(r, p["eps"]);
    const Rows rows = as_rows(r);
    if (rows.columns > 20480)
      throw std::invalid_argument(fmt::format(
          "kernel 'layer_norm': rows of {} elements; at most 20480 (vector local memory)",
          rows.columns));
    PlanBuilder b(r);
    const int x = b.buffer("x", r.dtype, r.shape, Role::kInput);
    const int gamma = b.buffer("gamma", r.dtype, {rows.columns}, Role::kInput, kGamma);
    const int beta =
        b.buffer("beta", r.dtype, {rows.columns}, Role::kInput, {Fill::kUniform, -1, 1});
    const int y = b.buffer("y", r.dtype, r.shape, Role::kOutput);
    const int mean = b.buffer("mean", Dtype::kF32, {rows.rows}, Role::kOutput);
    const int rstd = b.buffer("rstd", Dtype::kF32, {rows.rows}, Role::kOutput);
    // Rows of a few vectors stay in registers, two a pass (layer_norm_short); rows that fit
    // vector local memory beside gamma and beta read those once a core.
    const std::uint32_t vectors = short_vectors(rows.columns);
    const std::string binary =
        vectors != 0 ? fmt::format("layer_norm_short{}", vectors)
                     : (rows.columns > kLayerNormVlmColumns ? "layer_norm_wide" : "layer_norm");
    LaunchSpec& l = b.launch(key(binary, r.dtype), {points(rows.rows), 1, 1, 1, 1});
    l.tensors[0] = b.view(x, {rows.columns, rows.rows});
    l.tensors[1] = b.view(gamma);
    l.tensors[2] = b.view(beta);
    l.tensors[3] = b.view(y, {rows.columns, rows.rows});
    l.tensors[4] = b.lane0_view(mean);
    l.tensors[5] = b.lane0_view(rstd);
    if (vectors != 0) l.tensors[6] = l.tensors[3];  // the second rows' y, a stream apart
    l.srf[0] = ceil_div(rows.columns, 64);
    l.srf[1] = f32_bits(p["eps"]);
    l.srf[2] = f32_bits(1.0 / rows.columns);
    l.srf[3] = rows.columns;
    l.access_scale = std::array<Coord, kMaxTensors>{
        Coord{0, 1}, Coord{}, Coord{}, Coord{0, 1}, Coord{0, 1}, Coord{0, 1}, Coord{0, 1}};
    b.tolerate(y, {4e-6, 8 * epsilon(r.dtype)});
    b.tolerate(mean, {1e-6, 1e-6});
    b.tolerate(rstd, {1e-6, 1e-5});
    const double n = static_cast<double>(elements(r.shape));
    b.cost(8 * n, 2 * n * info(r.dtype).bytes);
    return b.done();
  };
  d.reference = [](const KernelPlan& plan, Buffers& buffers) {
    const std::vector<double> x = values(plan, buffers, 0), gamma = values(plan, buffers, 1),
                              beta = values(plan, buffers, 2);
    const std::size_t c = gamma.size(), rows = x.size() / c;
    const double eps = plan.request.params.count("eps") ? plan.request.params.at("eps") : 1e-5;
    std::vector<double> y(x.size()), mean(rows), rstd(rows);
    for (std::size_t r = 0; r < rows; ++r) {
      std::tie(mean[r], rstd[r]) = moments(x, r * c, c, 1, eps);
      for (std::size_t i = 0; i < c; ++i)
        y[r * c + i] = (x[r * c + i] - mean[r]) * rstd[r] * gamma[i] + beta[i];
    }
    store(plan, buffers, 3, y);
    store(plan, buffers, 4, mean);
    store(plan, buffers, 5, rstd);
  };
  return d;
}

KernelDef layer_norm_bwd() {
  KernelDef d;
  d.info = {"layer_norm_bwd",
            "dx, dgamma, dbeta of layer_norm from dy, x, mean, rstd, gamma (three launches; rows "
            "over 4096: two)",
            float_types(),
            "x [C, R...], C at most 10240",
            {}};
  d.plan = [](const KernelRequest& r) {
    Params(r, {});
    const Rows rows = as_rows(r);
    if (rows.columns > 10240)
      throw std::invalid_argument(fmt::format(
          "kernel 'layer_norm_bwd': rows of {} elements; at most 10240 (vector local memory)",
          rows.columns));
    PlanBuilder b(r);
    const std::vector<std::uint32_t> cr = {rows.columns, rows.rows};
    const int dy = b.buffer("dy", r.dtype, r.shape, Role::kInput);
    const int x = b.buffer("x", r.dtype, r.shape, Role::kInput);
    const int mean = b.buffer("mean", Dtype::kF32, {rows.rows}, Role::kInput, kMean);
    const int rstd = b.buffer("rstd", Dtype::kF32, {rows.rows}, Role::kInput, kRstd);
    const int gamma = b.buffer("gamma", r.dtype, {rows.columns}, Role::kInput, kGamma);
    const int dx = b.buffer("dx", r.dtype, r.shape, Role::kOutput);
    const int dgamma = b.buffer("dgamma", r.dtype, {rows.columns}, Role::kOutput);
    const int dbeta = b.buffer("dbeta", r.dtype, {rows.columns}, Role::kOutput);
    if (rows.columns <= kLayerNormBwdVlmColumns) {
      // Blocks of rows, a point each: the rows' dx, and the block's sums for dgamma and dbeta
      // kept in vector local memory and written as a column of the scratch buffers, which a
      // combine per parameter adds up.
      const ColumnBlocks c = column_blocks(rows);
      const std::vector<std::uint32_t> cb = {rows.columns, c.blocks};
      const int part_g = b.buffer("part_g", Dtype::kF32, cb, Role::kScratch);
      const int part_b = b.buffer("part_b", Dtype::kF32, cb, Role::kScratch);
      // Rows of a few vectors stay in registers (layer_norm_bwd_short), xhat and g with them.
      const std::uint32_t vectors = short_vectors(rows.columns);
      const std::string binary =
          vectors != 0 ? fmt::format("layer_norm_bwd_short{}", vectors) : "layer_norm_bwd";
      LaunchSpec& l = b.launch(key(binary, r.dtype), {1, points(c.blocks), 1, 1, 1});
      l.tensors = {b.view(dy, cr), b.view(x, cr),  b.view(mean),   b.view(rstd),
                   b.view(gamma),  b.view(dx, cr), b.view(part_g), b.view(part_b)};
      l.srf[0] = ceil_div(rows.columns, 256);
      l.srf[1] = ceil_div(rows.columns, 512);
      l.srf[2] = f32_bits(1.0 / rows.columns);
      l.srf[3] = c.block_rows;
      l.srf[4] = rows.rows;
      combine_columns(b, "add", r.dtype, part_g, dgamma, rows.columns, c.blocks);
      combine_columns(b, "add", r.dtype, part_b, dbeta, rows.columns, c.blocks);
    } else {
      {
        LaunchSpec& l =
            b.launch(key("layer_norm_bwd_wide", r.dtype), {points(rows.rows), 1, 1, 1, 1});
        l.tensors = {b.view(dy, cr), b.view(x, cr), b.view(mean),
                     b.view(rstd),   b.view(gamma), b.view(dx, cr)};
        l.srf[0] = ceil_div(rows.columns, 64);
        l.srf[2] = f32_bits(1.0 / rows.columns);
        l.access_scale = std::array<Coord, kMaxTensors>{Coord{0, 1}, Coord{0, 1}, Coord{1},
                                                        Coord{1},    Coord{},     Coord{0, 1}};
      }
      LaunchSpec& l = b.launch(key("layer_norm_bwd_params", r.dtype),
                               {points(ceil_div(rows.columns, 64)), 1, 1, 1, 1});
      l.tensors = {b.view(dy, cr), b.view(x, cr),  b.view(mean),
                   b.view(rstd),   b.view(dgamma), b.view(dbeta)};
      l.srf[0] = rows.rows;
      l.access_scale = std::array<Coord, kMaxTensors>{Coord{64}, Coord{64}, Coord{},
                                                      Coord{},   Coord{64}, Coord{64}};
    }
    b.tolerate(dx, {1e-5, 8 * epsilon(r.dtype)});
    b.tolerate(dgamma, {4e-7 * rows.rows, 4 * epsilon(r.dtype)});
    b.tolerate(dbeta, {4e-7 * rows.rows, 4 * epsilon(r.dtype)});
    const double n = static_cast<double>(elements(r.shape));
    b.cost(12 * n, 5 * n * info(r.dtype).bytes);
    return b.done();
  };
  d.reference = [](const KernelPlan& plan, Buffers& buffers) {
    const std::vector<double> dy = values(plan, buffers, 0), x = values(plan, buffers, 1),
                              mean = values(plan, buffers, 2), rstd = values(plan, buffers, 3),
                              gamma = values(plan, buffers, 4);
    const std::size_t c = gamma.size(), rows = x.size() / c;
    std::vector<double> dx(x.size()), dgamma(c, 0.0), dbeta(c, 0.0);
    for (std::size_t r = 0; r < rows; ++r) {
      double sum_g = 0, sum_gx = 0;
      for (std::size_t i = 0; i < c; ++i) {
        const double xhat = (x[r * c + i] - mean[r]) * rstd[r], g = dy[r * c + i] * gamma[i];
        sum_g += g;
        sum_gx += g * xhat;
        dgamma[i] += dy[r * c + i] * xhat;
        dbeta[i] += dy[r * c + i];
      }
      for (std::size_t i = 0; i < c; ++i) {
        const double xhat = (x[r * c + i] - mean[r]) * rstd[r], g = dy[r * c + i] * gamma[i];
        dx[r * c + i] = rstd[r] * (g - sum_g / c - xhat * sum_gx / c);
      }
    }
    store(plan, buffers, 5, dx);
    store(plan, buffers, 6, dgamma);
    store(plan, buffers, 7, dbeta);
  };
  return d;
}

// The per-element launch of batch norm (forward or backward): `inputs` [C, M], then the
// per-channel `params`, then `output`. Rows of C dividing 512 go as one stream, eight vectors
// (whole rows) a point (the _flat kernels); any other C walks the rows in memory order, 16 rows
// a point, the per-channel coefficients in vector local memory, which holds `max_columns`.
// `after`: inputs [C, M] placed after the output (a residual).
LaunchSpec& apply_launch(PlanBuilder& b, const KernelRequest& r, const std::string& name,
                         const Rows& rows, const std::vector<int>& inputs, int output,
                         const std::vector<TensorView>& params, std::uint32_t max_columns,
                         const std::vector<int>& after = {}) {
  const std::uint32_t c = rows.columns;
  const bool flat = c % 64 == 0 && 512 % c == 0;
  if (!flat && c > max_columns) {
    throw std::invalid_argument(fmt::format(
        "kernel '{}': {} channels; its per-element pass keeps a few f32 coefficients per channel "
        "in vector local memory, which holds them for {}",
        r.kernel, c, max_columns));
  }
  LaunchSpec& l = flat
                      ? b.launch(key(name + "_flat", r.dtype),
                                 {points(ceil_div(std::uint64_t{c} * rows.rows, 512)), 1, 1, 1, 1})
                      : b.launch(key(name, r.dtype), {points(ceil_div(rows.rows, 16)), 1, 1, 1, 1});
  const std::vector<std::uint32_t> dims =
      flat ? std::vector<std::uint32_t>{c * rows.rows} : std::vector<std::uint32_t>{c, rows.rows};
  const Coord step = flat ? Coord{512} : Coord{0, 16};
  std::array<Coord, kMaxTensors> scale{};
  std::size_t t = 0;
  for (int in : inputs) {
    scale[t] = step;
    l.tensors[t++] = b.view(in, dims);
  }
  for (const TensorView& v : params) l.tensors[t++] = v;
  scale[t] = step;
  l.tensors[t++] = b.view(output, dims);
  for (int in : after) {
    scale[t] = step;
    l.tensors[t++] = b.view(in, dims);
  }
  l.access_scale = scale;
  l.srf[0] = flat ? c - 1 : ceil_div(c, 64);
  l.srf[1] = ceil_div(ceil_div(c, 64), 8);
  return l;
}

KernelDef batch_norm() {
  KernelDef d;
  d.info = {"batch_norm",
            "training batch norm: per channel (dimension 0) over every other dimension, "
            "y = (x - mean) / sqrt(var + eps) * gamma + beta; with residual = 1 plus a residual "
            "tensor (after beta), with relu = 1 clamped at 0; keeps mean and rstd (three "
            "launches: blocks of rows' moments, their merge, y)",
            float_types(),
            "x [C, N...] (NHWC: C = channels)",
            {"eps", "relu", "residual"}};
  d.plan = [](const KernelRequest& r) {
    Params p(r, {{"eps", 1e-5}, {"relu", 0}, {"residual", 0}});
    check_eps(r, p["eps"]);
    const bool relu = check_flag(r, "relu", p["relu"]);
    const bool add = check_flag(r, "residual", p["residual"]);
    const Rows rows = as_rows(r);
    PlanBuilder b(r);
    const std::vector<std::uint32_t> cm = {rows.columns, rows.rows};
    const int x = b.buffer("x", r.dtype, r.shape, Role::kInput);
    const int gamma = b.buffer("gamma", r.dtype, {rows.columns}, Role::kInput, kGamma);
    const int beta =
        b.buffer("beta", r.dtype, {rows.columns}, Role::kInput, {Fill::kUniform, -1, 1});
    const int residual = add ? b.buffer("residual", r.dtype, r.shape, Role::kInput) : -1;
    const int y = b.buffer("y", r.dtype, r.shape, Role::kOutput);
    const int mean = b.buffer("mean", Dtype::kF32, {rows.columns}, Role::kOutput);
    const int rstd = b.buffer("rstd", Dtype::kF32, {rows.columns}, Role::kOutput);
    // Each block's mean and squared deviations on every core, then merged per channel.
    const ColumnBlocks c = column_blocks(rows);
    const std::vector<std::uint32_t> cb = {rows.columns, c.blocks};
    const int part_mean = b.buffer("part_mean", Dtype::kF32, cb, Role::kScratch);
    const int part_m2 = b.buffer("part_m2", Dtype::kF32, cb, Role::kScratch);
    {
      LaunchSpec& l = b.launch(key(c.wide ? "batch_norm_stats_wide" : "batch_norm_stats", r.dtype),
                               c.index_space());
      l.tensors[0] = b.view(x, cm);
      l.tensors[1] = b.view(part_mean);
      l.tensors[2] = b.view(part_m2);
      set_column_arguments(l, c, rows);
    }
    {
      LaunchSpec& l = b.launch(key("batch_norm_stats_combine", Dtype::kF32),
                               {points(ceil_div(rows.columns, 64)), 1, 1, 1, 1});
      l.tensors[0] = b.view(part_mean);
      l.tensors[1] = b.view(part_m2);
      l.tensors[2] = b.view(mean);
      l.tensors[3] = b.view(rstd);
      l.srf[0] = (c.blocks - 1) / 4;
      l.srf[1] = f32_bits(c.block_rows);
      l.srf[2] = f32_bits(rows.rows - (c.blocks - 1.0) * c.block_rows);
      l.srf[3] = f32_bits(1.0 / rows.rows);
      l.srf[4] = f32_bits(p["eps"]);
      l.srf[5] = (c.blocks - 1) % 4;
    }
    {
      const std::vector<TensorView> params = {b.view(mean), b.view(rstd), b.view(gamma),
                                              b.view(beta)};
      const std::string name =
          std::string("batch_norm_apply") + (add ? "_add" : "") + (relu ? "_relu" : "");
      apply_launch(b, r, name, rows, {x}, y, params, 9984,
                   add ? std::vector<int>{residual} : std::vector<int>{});
    }
    // x a - mean a cancels: its f32 rounding (a few ulp of |x| <= 2) is scaled by rstd, which eps
    // bounds by 1 / sqrt(eps) when a channel's values nearly agree (small batches).
    b.tolerate(y, {1e-5 + 8 * epsilon(Dtype::kF32) / std::sqrt(p["eps"]), 8 * epsilon(r.dtype)});
    b.tolerate(mean, {1e-6, 1e-6});
    b.tolerate(rstd, {1e-6, 1e-5});
    // x is read once for the statistics (twice by the wide kernel), once to apply them.
    const double n = static_cast<double>(elements(r.shape));
    b.cost(7 * n, ((c.wide ? 4 : 3) + (add ? 1 : 0)) * n * info(r.dtype).bytes);
    return b.done();
  };
  d.reference = [](const KernelPlan& plan, Buffers& buffers) {
    const auto flag = [&](const char* name) {
      return plan.request.params.count(name) && plan.request.params.at(name) != 0;
    };
    const std::vector<double> x = values(plan, buffers, 0), gamma = values(plan, buffers, 1),
                              beta = values(plan, buffers, 2);
    const std::size_t c = gamma.size(), m = x.size() / c, out = flag("residual") ? 4 : 3;
    const std::vector<double> residual =
        flag("residual") ? values(plan, buffers, 3) : std::vector<double>(x.size(), 0.0);
    const double eps = plan.request.params.count("eps") ? plan.request.params.at("eps") : 1e-5;
    const double floor = flag("relu") ? 0.0 : -std::numeric_limits<double>::infinity();
    std::vector<double> y(x.size()), mean(c), rstd(c);
    for (std::size_t i = 0; i < c; ++i) {
      std::tie(mean[i], rstd[i]) = moments(x, i, m, c, eps);
      for (std::size_t j = 0; j < m; ++j) {
        const std::size_t k = i + j * c;
        y[k] = std::max(floor, (x[k] - mean[i]) * rstd[i] * gamma[i] + beta[i] + residual[k]);
      }
    }
    store(plan, buffers, out, y);
    store(plan, buffers, out + 1, mean);
    store(plan, buffers, out + 2, rstd);
  };
  return d;
}

KernelDef batch_norm_bwd() {
  KernelDef d;
  d.info = {"batch_norm_bwd",
            "dx, dgamma, dbeta of training batch norm from dy, x, mean, rstd, gamma (three "
            "launches: blocks of rows' sums, their total, dx)",
            float_types(),
            "x [C, N...] (NHWC)",
            {}};
  d.plan = [](const KernelRequest& r) {
    Params(r, {});
    const Rows rows = as_rows(r);
    PlanBuilder b(r);
    const std::vector<std::uint32_t> cm = {rows.columns, rows.rows};
    const int dy = b.buffer("dy", r.dtype, r.shape, Role::kInput);
    const int x = b.buffer("x", r.dtype, r.shape, Role::kInput);
    const int mean = b.buffer("mean", Dtype::kF32, {rows.columns}, Role::kInput, kMean);
    const int rstd = b.buffer("rstd", Dtype::kF32, {rows.columns}, Role::kInput, kRstd);
    const int gamma = b.buffer("gamma", r.dtype, {rows.columns}, Role::kInput, kGamma);
    const int dx = b.buffer("dx", r.dtype, r.shape, Role::kOutput);
    const int dgamma = b.buffer("dgamma", Dtype::kF32, {rows.columns}, Role::kOutput);
    const int dbeta = b.buffer("dbeta", Dtype::kF32, {rows.columns}, Role::kOutput);
    // Each block's sums on every core, then added up per channel.
    const ColumnBlocks c = column_blocks(rows);
    const std::vector<std::uint32_t> cb = {rows.columns, c.blocks};
    const int part_g = b.buffer("part_g", Dtype::kF32, cb, Role::kScratch);
    const int part_b = b.buffer("part_b", Dtype::kF32, cb, Role::kScratch);
    {
      LaunchSpec& l =
          b.launch(key(c.wide ? "batch_norm_bwd_reduce_wide" : "batch_norm_bwd_reduce", r.dtype),
                   c.index_space());
      l.tensors = {b.view(dy, cm), b.view(x, cm), b.view(mean), b.view(part_g), b.view(part_b)};
      set_column_arguments(l, c, rows);
    }
    {
      LaunchSpec& l = b.launch(key("batch_norm_bwd_reduce_combine", Dtype::kF32),
                               {points(ceil_div(rows.columns, 64)), 1, 1, 1, 1});
      l.tensors = {b.view(part_g), b.view(part_b), b.view(rstd), b.view(dgamma), b.view(dbeta)};
      l.srf[0] = ceil_div(c.blocks, 4);
    }
    {
      const std::vector<TensorView> params = {b.view(mean), b.view(rstd), b.view(gamma),
                                              b.view(dgamma), b.view(dbeta)};
      LaunchSpec& l = apply_launch(b, r, "batch_norm_bwd_apply", rows, {dy, x}, dx, params, 6656);
      l.srf[2] = f32_bits(1.0 / rows.rows);
    }
    b.tolerate(dx, {1e-5, 8 * epsilon(r.dtype)});
    b.tolerate(dgamma, {4e-7 * rows.rows, 1e-5});
    b.tolerate(dbeta, {4e-7 * rows.rows, 1e-5});
    const double n = static_cast<double>(elements(r.shape));
    b.cost(10 * n, 5 * n * info(r.dtype).bytes);
    return b.done();
  };
  d.reference = [](const KernelPlan& plan, Buffers& buffers) {
    const std::vector<double> dy = values(plan, buffers, 0), x = values(plan, buffers, 1),
                              mean = values(plan, buffers, 2), rstd = values(plan, buffers, 3),
                              gamma = values(plan, buffers, 4);
    const std::size_t c = gamma.size(), m = x.size() / c;
    std::vector<double> dx(x.size()), dgamma(c, 0.0), dbeta(c, 0.0);
    for (std::size_t i = 0; i < c; ++i) {
      for (std::size_t j = 0; j < m; ++j) {
        dgamma[i] += dy[i + j * c] * (x[i + j * c] - mean[i]) * rstd[i];
        dbeta[i] += dy[i + j * c];
      }
      for (std::size_t j = 0; j < m; ++j) {
        const double xhat = (x[i + j * c] - mean[i]) * rstd[i];
        dx[i + j * c] = gamma[i] * rstd[i] * (dy[i + j * c] - dbeta[i] / m - xhat * dgamma[i] / m);
      }
    }
    store(plan, buffers, 5, dx);
    store(plan, buffers, 6, dgamma);
    store(plan, buffers, 7, dbeta);
  };
  return d;
}

}  // namespace

std::vector<KernelDef> norm_kernels() {
  return {layer_norm(), layer_norm_bwd(), batch_norm(), batch_norm_bwd()};
}

}  // namespace podsim::tpc::glue
