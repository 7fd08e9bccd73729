// Glue of the kernels that work along a dimension: reductions, softmax, log-softmax and the
// cross-entropy loss with its gradient. Tensors are seen as [C, R]: dimension 0 (C) and every
// other dimension folded into rows (R).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "hw/tpc/kernels/glue.h"

namespace podsim::tpc::glue {
namespace {

using Role = BufferSpec::Role;
constexpr std::uint32_t kVlmRow = 20480;  // f32 elements of a row vector local memory holds
// Elements of a row the short-row kernels keep in registers (one octet of f32 vectors).
constexpr std::uint32_t kShortRow = 512;

void check_row_fits(const KernelRequest& r, std::uint32_t columns, std::uint32_t limit) {
  if (columns > limit) {
    throw std::invalid_argument(fmt::format(
        "kernel '{}': rows of {} elements; this kernel keeps a row in vector local memory, which "
        "holds {}",
        r.kernel, columns, limit));
  }
}

// Applies f to each row of x [C, R] (a row is C consecutive values) and stores its results.
template <class F>
void per_row(const std::vector<double>& x, std::uint32_t columns, F f) {
  for (std::size_t start = 0; start < x.size(); start += columns) {
    f(start, std::vector<double>(x.begin() + static_cast<std::ptrdiff_t>(start),
                                 x.begin() + static_cast<std::ptrdiff_t>(start + columns)));
  }
}

KernelDef reduce_kernel(const std::string& op) {
  KernelDef d;
  const bool is_max = op == "max";
  d.info = {"reduce_" + std::string(is_max ? "max" : "sum"),
            std::string("y = ") + (is_max ? "max" : "sum") +
                " of x along dimension dim (0 or 1 of [C, R]; dim 1: blocks of rows, then their "
                "results combined: two launches)",
            float_types(),
            "x [C, R...]; dim 0 gives y [R...], dim 1 gives y [C]",
            {"dim"}};
  d.plan = [op, is_max](const KernelRequest& r) {
    Params p(r, {{"dim", 0}});
    const Rows rows = as_rows(r);
    const double dim = p["dim"];
    if (dim != 0 && dim != 1)
      throw std::invalid_argument(fmt::format("kernel '{}': dim = {} (0 or 1)", r.kernel, dim));
    PlanBuilder b(r);
    const std::uint32_t padding = is_max ? minus_infinity(r.dtype) : 0;
    const int x = b.buffer("x", r.dtype, r.shape, Role::kInput);
    std::vector<std::uint32_t> out_dims =
        dim == 0 ? std::vector<std::uint32_t>(r.shape.begin() + 1, r.shape.end())
                 : std::vector<std::uint32_t>{rows.columns};
    if (out_dims.empty()) out_dims = {1};
    const int y = b.buffer("y", r.dtype, out_dims, Role::kOutput);
    if (dim == 0) {
      // Rows of at most 8 or 16 vectors: one row a loop pass, the rows overlapped
      // (reduce_rows_short.tpcs); longer rows: eight vectors a pass (reduce_rows.tpcs).
      const std::uint32_t vectors = ceil_div(rows.columns, 64);
      const std::string binary = vectors <= 8    ? "reduce_rows8_"
                                 : vectors <= 16 ? "reduce_rows16_"
                                                 : "reduce_rows_";
      LaunchSpec& l = b.launch(key(binary + op, r.dtype), {points(rows.rows), 1, 1, 1, 1});
      l.tensors[0] = b.view(x, {rows.columns, rows.rows}, padding);
      l.tensors[1] = b.lane0_view(y);
      l.srf[0] = ceil_div(rows.columns, 512);
      l.access_scale = std::array<Coord, kMaxTensors>{Coord{0, 1}, Coord{0, 1}};
    } else {
      // Blocks of rows on every core, then their partial results combined per channel.
      ColumnBlocks c = column_blocks(rows);
      // Rows of up to 16 or 32 vectors keep a running result per vector in registers
      // (reduce_cols_mid.tpcs); wider ones keep them in vector local memory (the _wide kernels).
      // The register kernels stream a block at the HBM's rate, so that the combine (a gather of
      // 256 bytes per block and 64 channels) would weigh more than the blocks save past 96 of
      // them (still four a core on Gaudi2, twelve on Gaudi).
      const std::uint32_t vectors = ceil_div(rows.columns, 64);
      constexpr std::uint32_t kMidBlocks = 96;
      if (c.wide && vectors <= 32 && c.blocks > kMidBlocks) {
        c.block_rows = ceil_div(rows.rows, kMidBlocks);
        c.blocks = ceil_div(rows.rows, c.block_rows);
      }
      const int part = b.buffer("part", Dtype::kF32, {rows.columns, c.blocks}, Role::kScratch);
      const std::string first_binary = !c.wide         ? "reduce_cols_"
                                       : vectors <= 16 ? "reduce_cols_wide16_"
                                       : vectors <= 32 ? "reduce_cols_wide32_"
                                                       : "reduce_cols_wide_";
      LaunchSpec& first = b.launch(key(first_binary + op, r.dtype), c.index_space());
      first.tensors[0] = b.view(x, {rows.columns, rows.rows}, padding);
      first.tensors[1] = b.view(part);
      set_column_arguments(first, c, rows);
      combine_columns(b, op, r.dtype, part, y, rows.columns, c.blocks);
    }
    const double length = dim == 0 ? rows.columns : rows.rows;
    // Sums of `length` values of magnitude up to 2 in f32, in a different order than the
    // reference: the error grows with the square root of the length, here bounded linearly.
    b.tolerate(y, is_max ? Tolerance{} : Tolerance{2e-7 * length, 2 * epsilon(r.dtype)});
    const double n = static_cast<double>(elements(r.shape));
    b.cost(n, n * info(r.dtype).bytes);
    return b.done();
  };
  d.reference = [is_max](const KernelPlan& plan, Buffers& buffers) {
    const std::vector<double> x = values(plan, buffers, 0);
    const std::uint32_t columns = plan.buffers[0].dims[0];
    const std::size_t rows = x.size() / columns;
    const bool along_rows =
        plan.request.params.count("dim") == 0 || plan.request.params.at("dim") == 0;
    std::vector<double> y(along_rows ? rows : columns, is_max ? -INFINITY : 0.0);
    for (std::size_t i = 0; i < x.size(); ++i) {
      double& acc = y[along_rows ? i / columns : i % columns];
      acc = is_max ? std::max(acc, x[i]) : acc + x[i];
    }
    store(plan, buffers, 1, y);
  };
  return d;
}

// softmax and log_softmax over dimension 0.
KernelDef softmax_kernel(bool log) {
  KernelDef d;
  const std::string name = log ? "log_softmax" : "softmax";
  d.info = {name,
            log ? "y = x - max - log(sum(exp(x - max))) along dimension 0"
                : "y = exp(x - max) / sum(exp(x - max)) along dimension 0",
            float_types(),
            "x [C, R...], C at most 20480",
            {}};
  d.plan = [name, log](const KernelRequest& r) {
    Params(r, {});
    const Rows rows = as_rows(r);
    check_row_fits(r, rows.columns, kVlmRow);
    PlanBuilder b(r);
    const int x = b.buffer("x", r.dtype, r.shape, Role::kInput, {Fill::kUniform, -8, 8});
    const int y = b.buffer("y", r.dtype, r.shape, Role::kOutput);
    // Short rows stay in registers, as many vectors as the row needs (softmax_rows.tpcs) or an
    // octet (softmax_short.tpcs).
    const std::string kernel = log                         ? name
                               : rows.columns <= 128       ? "softmax_rows2"
                               : rows.columns <= 256       ? "softmax_rows4"
                               : rows.columns <= kShortRow ? "softmax_short"
                                                           : name;
    LaunchSpec& l = b.launch(key(kernel, r.dtype), {points(rows.rows), 1, 1, 1, 1});
    l.tensors[0] = b.view(x, {rows.columns, rows.rows}, minus_infinity(r.dtype));
    l.tensors[1] = b.view(y, {rows.columns, rows.rows});
    l.srf[0] = ceil_div(rows.columns, 64);
    l.access_scale = std::array<Coord, kMaxTensors>{Coord{0, 1}, Coord{0, 1}};
    b.tolerate(y,
               log ? Tolerance{2e-6, 4 * epsilon(r.dtype)} : Tolerance{1e-7, 8 * epsilon(r.dtype)});
    const double n = static_cast<double>(elements(r.shape));
    b.cost(5 * n, 2 * n * info(r.dtype).bytes);
    return b.done();
  };
  d.reference = [log](const KernelPlan& plan, Buffers& buffers) {
    const std::vector<double> x = values(plan, buffers, 0);
    std::vector<double> y(x.size());
    per_row(x, plan.buffers[0].dims[0], [&](std::size_t start, const std::vector<double>& row) {
      const double m = *std::max_element(row.begin(), row.end());
      double sum = 0;
      for (double v : row) sum += std::exp(v - m);
      for (std::size_t c = 0; c < row.size(); ++c) {
        y[start + c] = log ? row[c] - m - std::log(sum) : std::exp(row[c] - m) / sum;
      }
    });
    store(plan, buffers, 1, y);
  };
  return d;
}

// softmax's backward over dimension 0: dx = y (dy - sum(dy y)), y the softmax's output. Both
// rows stay in vector local memory between its two passes, so a row holds at most 10240.
KernelDef softmax_bwd_kernel() {
  KernelDef d;
  d.info = {"softmax_bwd",
            "dx = y * (dy - sum(dy * y)) along dimension 0, y = softmax(x)",
            float_types(),
            "dy and y [C, R...], C at most 10240",
            {}};
  d.plan = [](const KernelRequest& r) {
    Params(r, {});
    const Rows rows = as_rows(r);
    check_row_fits(r, rows.columns, kVlmRow / 2);
    PlanBuilder b(r);
    const int dy = b.buffer("dy", r.dtype, r.shape, Role::kInput, {Fill::kUniform, -1, 1});
    const int y = b.buffer("y", r.dtype, r.shape, Role::kInput, {Fill::kUniform, 0, 1});
    const int dx = b.buffer("dx", r.dtype, r.shape, Role::kOutput);
    // Short rows stay in registers, as many vectors as the row needs (softmax_bwd_rows.tpcs) or
    // an octet (softmax_bwd_short.tpcs).
    const std::string kernel = rows.columns <= 128         ? "softmax_bwd_rows2"
                               : rows.columns <= 256       ? "softmax_bwd_rows4"
                               : rows.columns <= kShortRow ? "softmax_bwd_short"
                                                           : "softmax_bwd";
    LaunchSpec& l = b.launch(key(kernel, r.dtype), {points(rows.rows), 1, 1, 1, 1});
    l.tensors[0] = b.view(dy, {rows.columns, rows.rows});
    l.tensors[1] = b.view(y, {rows.columns, rows.rows});
    l.tensors[2] = b.view(dx, {rows.columns, rows.rows});
    l.srf[0] = ceil_div(rows.columns, 64);
    l.access_scale = std::array<Coord, kMaxTensors>{Coord{0, 1}, Coord{0, 1}, Coord{0, 1}};
    // The row's f32 sum of products, then one subtraction and one product rounded to the type.
    b.tolerate(dx, Tolerance{2e-7 * rows.columns, 8 * epsilon(r.dtype)});
    const double n = static_cast<double>(elements(r.shape));
    b.cost(4 * n, 3 * n * info(r.dtype).bytes);
    return b.done();
  };
  d.reference = [](const KernelPlan& plan, Buffers& buffers) {
    const std::vector<double> dy = values(plan, buffers, 0), y = values(plan, buffers, 1);
    std::vector<double> dx(y.size());
    const std::size_t columns = plan.buffers[0].dims[0];
    for (std::size_t start = 0; start < y.size(); start += columns) {
      double dot = 0;
      for (std::size_t c = 0; c < columns; ++c) dot += dy[start + c] * y[start + c];
      for (std::size_t c = 0; c < columns; ++c)
        dx[start + c] = y[start + c] * (dy[start + c] - dot);
    }
    store(plan, buffers, 2, dx);
  };
  return d;
}

// Cross-entropy over classes along dimension 0: the loss per row, and its gradient.
KernelDef cross_entropy_kernel(bool backward) {
  KernelDef d;
  const std::string name = backward ? "cross_entropy_bwd" : "cross_entropy";
  d.info = {name,
            backward ? "dx = (softmax(x) - onehot(label)) * dloss per row"
                     : "loss[r] = -log_softmax(x[:, r])[label[r]] (f32 losses)",
            float_types(),
            "logits [C, R...], C at most 20480; labels [R...] (i32)",
            {}};
  d.plan = [name, backward](const KernelRequest& r) {
    Params(r, {});
    const Rows rows = as_rows(r);
    check_row_fits(r, rows.columns, kVlmRow);
    PlanBuilder b(r);
    const int x = b.buffer("logits", r.dtype, r.shape, Role::kInput, {Fill::kUniform, -8, 8});
    const int label = b.buffer("label", Dtype::kI32, {rows.rows}, Role::kInput,
                               {Fill::kIntegers, 0, static_cast<double>(rows.columns)});
    // The loss of rows of at most 32 vectors keeps the row in registers, one row a pass
    // (cross_entropy_short); wider rows, and the gradient, go through vector local memory.
    const std::uint32_t slots = backward ? 0 : register_variant(rows.columns, {8, 16, 32});
    LaunchSpec& l =
        b.launch(key(slots != 0 ? fmt::format("cross_entropy_short{}", slots) : name, r.dtype),
                 {points(rows.rows), 1, 1, 1, 1});
    l.tensors[0] = b.view(x, {rows.columns, rows.rows}, minus_infinity(r.dtype));
    l.tensors[1] = b.view(label);
    l.srf[0] = ceil_div(rows.columns, 64);
    l.access_scale =
        std::array<Coord, kMaxTensors>{Coord{0, 1}, Coord{1, 0}, Coord{1, 0}, Coord{0, 1}};
    if (backward) {
      const int dloss =
          b.buffer("dloss", Dtype::kF32, {rows.rows}, Role::kInput, {Fill::kUniform, -1, 1});
      const int dx = b.buffer("dlogits", r.dtype, r.shape, Role::kOutput);
      l.tensors[2] = b.view(dloss);
      l.tensors[3] = b.view(dx, {rows.columns, rows.rows});
      b.tolerate(dx, {2e-7, 8 * epsilon(r.dtype)});
    } else {
      const int loss = b.buffer("loss", Dtype::kF32, {rows.rows}, Role::kOutput);
      l.tensors[2] = b.lane0_view(loss);
      if (slots != 0) l.tensors[3] = l.tensors[0];  // the label's logit, a stream apart
      b.tolerate(loss, {4e-6, 1e-6});
    }
    const double n = static_cast<double>(elements(r.shape));
    b.cost(4 * n, n * info(r.dtype).bytes * (backward ? 2 : 1));
    return b.done();
  };
  d.reference = [backward](const KernelPlan& plan, Buffers& buffers) {
    const std::vector<double> x = values(plan, buffers, 0), label = values(plan, buffers, 1);
    const std::vector<double> dloss = backward ? values(plan, buffers, 2) : std::vector<double>{};
    std::vector<double> out(backward ? x.size() : label.size());
    per_row(x, plan.buffers[0].dims[0], [&](std::size_t start, const std::vector<double>& row) {
      const std::size_t r = start / row.size();
      const double m = *std::max_element(row.begin(), row.end());
      double sum = 0;
      for (double v : row) sum += std::exp(v - m);
      const auto target = static_cast<std::size_t>(label[r]);
      if (!backward) {
        out[r] = std::log(sum) + m - row[target];
        return;
      }
      for (std::size_t c = 0; c < row.size(); ++c) {
        out[start + c] = (std::exp(row[c] - m) / sum - (c == target ? 1.0 : 0.0)) * dloss[r];
      }
    });
    store(plan, buffers, backward ? 3 : 2, out);
  };
  return d;
}

}  // namespace

std::vector<KernelDef> row_kernels() {
  return {reduce_kernel("add"),      reduce_kernel("max"), softmax_kernel(false),
          softmax_kernel(true),      softmax_bwd_kernel(), cross_entropy_kernel(false),
          cross_entropy_kernel(true)};
}

}  // namespace podsim::tpc::glue
