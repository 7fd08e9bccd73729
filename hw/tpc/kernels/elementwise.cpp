// Glue of the element-by-element kernels: arithmetic, activations and their gradients, casts,
// bias addition, transposition and embedding lookup.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "hw/tpc/kernels/glue.h"

namespace podsim::tpc::glue {
namespace {

using Role = BufferSpec::Role;

// A kernel over whole tensors seen as one dimension: `inputs` named buffers in, one out, the
// index space covering `per_point` elements a point.
KernelPlan flat_plan(const KernelRequest& r, const std::vector<std::string>& inputs, int per_point,
                     const std::string& binary, Fill fill, Tolerance tol) {
  check_shape(r);
  PlanBuilder b(r);
  const std::uint64_t n = elements(r.shape);
  std::vector<int> buffers;
  for (const std::string& name : inputs)
    buffers.push_back(b.buffer(name, r.dtype, r.shape, Role::kInput, fill));
  buffers.push_back(b.buffer("out", r.dtype, r.shape, Role::kOutput));
  LaunchSpec& l = b.launch(binary, {static_cast<std::int32_t>(ceil_div(n, per_point)), 1, 1, 1, 1});
  std::array<Coord, kMaxTensors> scale{};
  for (std::size_t t = 0; t < buffers.size(); ++t) {
    l.tensors[t] = b.view(buffers[t], {static_cast<std::uint32_t>(n)});
    scale[t] = {per_point, 0, 0, 0, 0};
  }
  l.access_scale = scale;
  b.tolerate(buffers.back(), tol);
  b.cost(static_cast<double>(n), static_cast<double>(n * info(r.dtype).bytes * buffers.size()));
  return b.done();
}

// The reference of such a kernel: the output from the inputs, element by element.
template <class F>
std::function<void(const KernelPlan&, Buffers&)> flat_reference(int inputs, F f) {
  return [inputs, f](const KernelPlan& plan, Buffers& buffers) {
    std::vector<std::vector<double>> in;
    for (int i = 0; i < inputs; ++i) in.push_back(values(plan, buffers, i));
    std::vector<double> out(in[0].size());
    for (std::size_t k = 0; k < out.size(); ++k) {
      std::vector<double> args;
      for (const auto& v : in) args.push_back(v[k]);
      out[k] = f(args);
    }
    store(plan, buffers, inputs, out);
  };
}

Tolerance ulps(Dtype t, double n, double abs = 0) { return {abs, n * epsilon(t)}; }

KernelDef binary_kernel(const std::string& name, const std::string& summary,
                        double (*f)(double, double)) {
  KernelDef d;
  d.info = {name, summary, {Dtype::kF32, Dtype::kBf16, Dtype::kF16, Dtype::kI32}, "any shape", {}};
  d.plan = [name](const KernelRequest& r) {
    Params(r, {});
    const int per_point = 8 * lanes(r.dtype);
    const Tolerance tol = is_float(r.dtype) ? ulps(r.dtype, 2) : Tolerance{};
    Fill fill{Fill::kUniform, -2, 2};
    if (!is_float(r.dtype)) fill = {Fill::kIntegers, -1000, 1000};
    return flat_plan(r, {"a", "b"}, per_point, key(name, r.dtype), fill, tol);
  };
  d.reference = flat_reference(2, [f](const std::vector<double>& x) { return f(x[0], x[1]); });
  return d;
}

// An activation computed in f32 (or natively, relu) and its gradient.
KernelDef unary_kernel(const std::string& name, const std::string& summary, int per_point,
                       double (*f)(double), Fill fill, double rel_ulps, double abs) {
  KernelDef d;
  d.info = {name, summary, float_types(), "any shape", {}};
  d.plan = [=](const KernelRequest& r) {
    Params(r, {});
    const int points = per_point ? per_point : 8 * lanes(r.dtype);
    return flat_plan(r, {"x"}, points, key(name, r.dtype), fill, ulps(r.dtype, rel_ulps, abs));
  };
  d.reference = flat_reference(1, [f](const std::vector<double>& x) { return f(x[0]); });
  return d;
}

KernelDef gradient_kernel(const std::string& name, const std::string& summary,
                          const std::string& second, int per_point, Fill second_fill,
                          double (*f)(double, double), double rel_ulps, double abs) {
  KernelDef d;
  d.info = {name, summary, float_types(), "any shape", {}};
  d.plan = [=](const KernelRequest& r) {
    Params(r, {});
    const int points = per_point ? per_point : 8 * lanes(r.dtype);
    KernelPlan p =
        flat_plan(r, {"dy", second}, points, key(name, r.dtype), {}, ulps(r.dtype, rel_ulps, abs));
    p.buffers[1].fill = second_fill;
    return p;
  };
  d.reference = flat_reference(2, [f](const std::vector<double>& x) { return f(x[0], x[1]); });
  return d;
}

double gelu(double x) {
  const double c = std::sqrt(2.0 / M_PI);
  return 0.5 * x * (1.0 + std::tanh(c * (x + 0.044715 * x * x * x)));
}
double gelu_grad(double dy, double x) {
  const double c = std::sqrt(2.0 / M_PI);
  const double t = std::tanh(c * (x + 0.044715 * x * x * x));
  return dy * (0.5 * (1 + t) + 0.5 * x * (1 - t * t) * c * (1 + 3 * 0.044715 * x * x));
}
double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

// fill: every element of y set to one value (a zeroed gradient's start); y is the only buffer.
KernelDef fill_kernel() {
  KernelDef d;
  d.info = {"fill", "y = value in every element", float_types(), "any shape", {"value=0"}};
  d.plan = [](const KernelRequest& r) {
    const double value = Params(r, {{"value", 0}})["value"];
    if (!std::isfinite(value)) {
      throw std::invalid_argument(fmt::format("fill: value = {} is not finite", value));
    }
    KernelPlan p = flat_plan(r, {}, 512, key("fill", r.dtype), {}, Tolerance{});
    p.launches.front().srf[0] = f32_bits(value);
    return p;
  };
  d.reference = [](const KernelPlan& plan, Buffers& buffers) {
    const double value = Params(plan.request, {{"value", 0}})["value"];
    store(plan, buffers, 0,
          std::vector<double>(elements(plan.request.shape), static_cast<float>(value)));
  };
  return d;
}

KernelDef cast_kernel() {
  KernelDef d;
  d.info = {"cast",
            "y = x converted to another type (--to): floats round to nearest even, "
            "integers saturate",
            {Dtype::kF32, Dtype::kBf16, Dtype::kF16, Dtype::kI32},
            "any shape",
            {}};
  d.plan = [](const KernelRequest& r) {
    Params(r, {});
    if (!r.to) throw std::invalid_argument("kernel 'cast' needs the destination type (to)");
    const std::string binary = std::string("cast.") + info(r.dtype).name + "." + info(*r.to).name;
    const auto keys = kernel_binary_keys();
    if (std::find(keys.begin(), keys.end(), binary) == keys.end()) {
      throw std::invalid_argument(fmt::format("kernel 'cast' has no conversion from {} to {}",
                                              info(r.dtype).name, info(*r.to).name));
    }
    Fill fill{Fill::kUniform, -3e4, 3e4};
    KernelPlan p = flat_plan(r, {"x"}, 512, binary, fill, ulps(*r.to, 1));
    p.buffers[1].dtype = *r.to;
    p.launches[0].tensors[1]->dtype = *r.to;
    const double n = static_cast<double>(elements(r.shape));
    p.min_bytes = n * (info(r.dtype).bytes + info(*r.to).bytes);  // the source's and the target's
    return p;
  };
  d.reference = flat_reference(1, [](const std::vector<double>& x) { return x[0]; });
  return d;
}

KernelDef bias_add_kernel() {
  KernelDef d;
  d.info = {"bias_add",
            "y[c, r] = x[c, r] + b[c] (b along dimension 0)",
            float_types(),
            "x's shape; b has dimension 0's size",
            {}};
  d.plan = [](const KernelRequest& r) {
    Params(r, {});
    const Rows rows = as_rows(r);
    PlanBuilder b(r);
    const int x = b.buffer("x", r.dtype, r.shape, Role::kInput);
    const int bias = b.buffer("b", r.dtype, {rows.columns}, Role::kInput);
    const int y = b.buffer("y", r.dtype, r.shape, Role::kOutput);
    const int l = lanes(r.dtype);
    // A point is a row of a group of at most 320 vectors (the group's b in vector local memory).
    const std::uint32_t vectors = ceil_div(rows.columns, l);
    constexpr std::uint32_t kGroup = 320;
    LaunchSpec& launch =
        b.launch(key("bias_add", r.dtype), {static_cast<std::int32_t>(ceil_div(vectors, kGroup)),
                                            static_cast<std::int32_t>(rows.rows), 1, 1, 1});
    launch.tensors[0] = b.view(x, {rows.columns, rows.rows});
    launch.tensors[1] = b.view(bias);
    launch.tensors[2] = b.view(y, {rows.columns, rows.rows});
    launch.srf[0] = vectors;
    const std::int32_t group = static_cast<std::int32_t>(kGroup) * l;
    launch.access_scale =
        std::array<Coord, kMaxTensors>{Coord{group, 1}, Coord{group, 0}, Coord{group, 1}};
    b.tolerate(y, ulps(r.dtype, 2));
    const double n = static_cast<double>(elements(r.shape));
    b.cost(n, (2 * n + rows.columns) * info(r.dtype).bytes);
    return b.done();
  };
  d.reference = [](const KernelPlan& plan, Buffers& buffers) {
    const std::vector<double> x = values(plan, buffers, 0), bias = values(plan, buffers, 1);
    std::vector<double> y(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) y[i] = x[i] + bias[i % bias.size()];
    store(plan, buffers, 2, y);
  };
  return d;
}

KernelDef transpose_kernel() {
  KernelDef d;
  d.info = {"transpose",
            "y[r, c] = x[c, r]: swaps dimensions 0 and 1 of a two-dimensional tensor",
            {Dtype::kF32, Dtype::kBf16, Dtype::kF16, Dtype::kI32},
            "[C, R]",
            {}};
  d.plan = [](const KernelRequest& r) {
    Params(r, {});
    check_shape(r, 2);
    if (r.shape.size() != 2)
      throw std::invalid_argument("kernel 'transpose' takes a two-dimensional shape [C, R]");
    const std::uint32_t c = r.shape[0], rows = r.shape[1];
    PlanBuilder b(r);
    const int x = b.buffer("x", r.dtype, {c, rows}, Role::kInput, {Fill::kIntegers, -1000, 1000});
    const int y = b.buffer("y", r.dtype, {rows, c}, Role::kOutput);
    // A point is a tile of lanes x lanes elements (transpose.tpcs), the tiles in one dimension
    // so that the partition spreads them evenly over the cores.
    const std::uint32_t l = static_cast<std::uint32_t>(lanes(r.dtype));
    const std::uint32_t column_tiles = ceil_div(c, l), row_tiles = ceil_div(rows, l);
    LaunchSpec& launch =
        b.launch(key("transpose", r.dtype),
                 {static_cast<std::int32_t>(column_tiles * row_tiles), 1, 1, 1, 1});
    launch.tensors[0] = b.view(x);
    launch.tensors[1] = b.view(y);
    launch.srf[0] = row_tiles;
    b.tolerate(y, {});
    const double n = static_cast<double>(c) * rows;
    b.cost(0, 2 * n * info(r.dtype).bytes);
    return b.done();
  };
  d.reference = [](const KernelPlan& plan, Buffers& buffers) {
    const std::uint32_t c = plan.buffers[0].dims[0], rows = plan.buffers[0].dims[1];
    const std::vector<double> x = values(plan, buffers, 0);
    std::vector<double> y(x.size());
    for (std::uint32_t i = 0; i < c; ++i)
      for (std::uint32_t j = 0; j < rows; ++j)
        y[j + static_cast<std::size_t>(i) * rows] = x[i + static_cast<std::size_t>(j) * c];
    store(plan, buffers, 1, y);
  };
  return d;
}

KernelDef embedding_kernel() {
  KernelDef d;
  d.info = {"embedding",
            "out[:, n] = table[:, index[n]] (a zero row for an index outside the table)",
            float_types(),
            "the table [D, V]",
            {"indices"}};
  d.plan = [](const KernelRequest& r) {
    Params p(r, {{"indices", 64}});
    check_shape(r, 2);
    if (r.shape.size() != 2)
      throw std::invalid_argument("kernel 'embedding' takes the table's shape [D, V]");
    const double count = p["indices"];
    if (count < 1 || count > (1 << 24) || count != std::floor(count)) {
      throw std::invalid_argument(
          fmt::format("kernel 'embedding': indices = {} (a whole number, 1 to 2^24)", count));
    }
    const std::uint32_t dim = r.shape[0], vocab = r.shape[1], n = static_cast<std::uint32_t>(count);
    PlanBuilder b(r);
    const int table = b.buffer("table", r.dtype, {dim, vocab}, Role::kInput);
    const int index = b.buffer("index", Dtype::kI32, {n}, Role::kInput,
                               {Fill::kIntegers, -1, static_cast<double>(vocab) + 1});
    const int out = b.buffer("out", r.dtype, {dim, n}, Role::kOutput);
    LaunchSpec& l = b.launch(key("embedding", r.dtype), {static_cast<std::int32_t>(n), 1, 1, 1, 1});
    l.tensors[0] = b.view(table);
    l.tensors[1] = b.view(index);
    l.tensors[2] = b.view(out);
    l.srf[0] = ceil_div(dim, lanes(r.dtype));
    b.tolerate(out, {});
    b.cost(0, (2.0 * dim * info(r.dtype).bytes + 4) * n);
    return b.done();
  };
  d.reference = [](const KernelPlan& plan, Buffers& buffers) {
    const std::uint32_t dim = plan.buffers[0].dims[0], vocab = plan.buffers[0].dims[1];
    const std::vector<double> table = values(plan, buffers, 0), index = values(plan, buffers, 1);
    std::vector<double> out(static_cast<std::size_t>(dim) * index.size(), 0.0);
    for (std::size_t n = 0; n < index.size(); ++n) {
      if (index[n] < 0 || index[n] >= vocab) continue;
      const auto row = static_cast<std::size_t>(index[n]);
      for (std::uint32_t c = 0; c < dim; ++c) out[c + n * dim] = table[c + row * dim];
    }
    store(plan, buffers, 2, out);
  };
  return d;
}

// Dropout's parameters: the probability p of dropping an element (0 < p < 1) and the seed of
// its draws. The threshold a 16-bit draw is kept below, and the kept elements' scale 1 / (1 - p)
// rounded to the type, as the kernel multiplies by it.
struct DropoutParams {
  std::uint32_t threshold = 0, seed = 0;
  std::uint64_t offset = 0;  // the first element's place in the draws' order
  double scale = 1;
};

DropoutParams dropout_params(const KernelRequest& r) {
  Params params(r, {{"p", 0.1}, {"seed", 0}, {"offset", 0}});
  const double p = params["p"], seed = params["seed"], offset = params["offset"];
  if (!(p > 0 && p < 1)) {
    throw std::invalid_argument(fmt::format(
        "{}: p = {} is not in (0, 1) (p is the probability of dropping an element; p = 0 is no "
        "dropout: leave the node out)",
        r.kernel, p));
  }
  if (!(seed >= 0 && seed <= 4294967295.0) || seed != std::floor(seed)) {
    throw std::invalid_argument(
        fmt::format("{}: seed = {} is not an integer in [0, 2^32)", r.kernel, seed));
  }
  // Even: a pair of elements draws from one state word (dropout_keeps).
  if (!(offset >= 0 && offset <= 9007199254740992.0) || offset != std::floor(offset) ||
      std::fmod(offset, 2) != 0) {
    throw std::invalid_argument(fmt::format(
        "{}: offset = {} is not an even integer in [0, 2^53] (the tensor's first element's "
        "place among the draws)",
        r.kernel, offset));
  }
  DropoutParams d;
  d.threshold = dropout_threshold(p);
  d.seed = static_cast<std::uint32_t>(seed);
  d.offset = static_cast<std::uint64_t>(offset);
  std::vector<std::uint8_t> one(4);
  write_element(one, r.dtype, 0, static_cast<double>(static_cast<float>(1.0 / (1.0 - p))));
  d.scale = read_element(one, r.dtype, 0);
  return d;
}

// dropout and dropout_bwd: flat tensors of any shape, 1024 elements a point; the mask is u8.
KernelDef dropout_kernel(bool backward) {
  KernelDef d;
  const std::string name = backward ? "dropout_bwd" : "dropout";
  d.info = {name,
            backward ? "dx = dy / (1 - p) where mask is 1, else 0 (the gradient of dropout)"
                     : "y = x / (1 - p) where a seeded random draw keeps the element "
                       "(probability 1 - p), else 0; mask (u8) = 1 where kept",
            {Dtype::kBf16, Dtype::kF16},
            "any shape",
            {"p=0.1", "seed=0", "offset=0"}};
  d.plan = [name, backward](const KernelRequest& r) {
    check_shape(r);
    const DropoutParams dp = dropout_params(r);
    PlanBuilder b(r);
    const std::uint64_t n = elements(r.shape);
    const int first = b.buffer(backward ? "dy" : "x", r.dtype, r.shape, Role::kInput);
    int mask = -1, out = -1;
    if (backward) {
      mask = b.buffer("mask", Dtype::kU8, r.shape, Role::kInput, {Fill::kIntegers, 0, 2});
      out = b.buffer("dx", r.dtype, r.shape, Role::kOutput);
    } else {
      out = b.buffer("y", r.dtype, r.shape, Role::kOutput);
      mask = b.buffer("mask", Dtype::kU8, r.shape, Role::kOutput);
    }
    constexpr int kPerPoint = 1024;
    LaunchSpec& l = b.launch(key(name, r.dtype), {points(ceil_div(n, kPerPoint)), 1, 1, 1, 1});
    const std::uint32_t flat = static_cast<std::uint32_t>(n);
    const std::array<int, 3> order =
        backward ? std::array<int, 3>{first, mask, out} : std::array<int, 3>{first, out, mask};
    std::array<Coord, kMaxTensors> scale{};
    for (std::size_t t = 0; t < order.size(); ++t) {
      l.tensors[t] = b.view(order[t], {flat});
      scale[t] = {kPerPoint, 0, 0, 0, 0};
    }
    l.access_scale = scale;
    l.srf[0] = dp.threshold;
    l.srf[1] = f32_bits(dp.scale);
    // Element e draws as element offset + e of the seed's order: the counter's start moves by
    // offset / 2 state words (dropout.tpcs), which folds into the seed's word.
    l.srf[2] = dropout_seed_word(dp.seed) +
               static_cast<std::uint32_t>(dp.offset / 2) * kDropoutCounterStep;
    b.tolerate(out, ulps(r.dtype, 1));
    if (!backward) b.tolerate(mask, {});
    b.cost(static_cast<double>(n), static_cast<double>(n * (2 * info(r.dtype).bytes + 1)));
    return b.done();
  };
  d.reference = [backward](const KernelPlan& plan, Buffers& buffers) {
    const DropoutParams dp = dropout_params(plan.request);
    const std::vector<double> in = values(plan, buffers, 0);
    std::vector<double> out(in.size()), mask(in.size());
    if (backward) mask = values(plan, buffers, 1);
    for (std::size_t e = 0; e < in.size(); ++e) {
      if (!backward) mask[e] = dropout_keeps(dp.seed, dp.offset + e, dp.threshold) ? 1 : 0;
      out[e] = mask[e] != 0 ? in[e] * dp.scale : 0.0;
    }
    if (backward) {
      store(plan, buffers, 2, out);  // dy, mask, dx
    } else {
      store(plan, buffers, 1, out);  // x, y, mask
      store(plan, buffers, 2, mask);
    }
  };
  return d;
}

}  // namespace

std::vector<KernelDef> elementwise_kernels() {
  const Fill wide{Fill::kUniform, -4, 4};
  std::vector<KernelDef> out = {
      binary_kernel("add", "d = a + b (also the collectives' sum)",
                    [](double a, double b) { return a + b; }),
      binary_kernel("sub", "d = a - b", [](double a, double b) { return a - b; }),
      binary_kernel("mul", "d = a * b", [](double a, double b) { return a * b; }),
      binary_kernel("min", "d = min(a, b) (also the collectives' min)",
                    [](double a, double b) { return std::min(a, b); }),
      binary_kernel("max", "d = max(a, b) (also the collectives' max)",
                    [](double a, double b) { return std::max(a, b); }),
  };
  KernelDef div;
  div.info = {"div",
              "d = a / b, computed in f32 (reciprocal and one correction)",
              float_types(),
              "any shape",
              {}};
  div.plan = [](const KernelRequest& r) {
    Params(r, {});
    KernelPlan p = flat_plan(r, {"a", "b"}, 512, key("div", r.dtype), {Fill::kUniform, -2, 2},
                             ulps(r.dtype, 2));
    p.buffers[1].fill = {Fill::kPositive, 0.25, 4};
    return p;
  };
  div.reference = flat_reference(2, [](const std::vector<double>& x) { return x[0] / x[1]; });
  out.push_back(div);
  out.push_back(unary_kernel(
      "relu", "y = max(x, 0)", 0, [](double x) { return std::max(x, 0.0); }, wide, 0, 0));
  out.push_back(gradient_kernel(
      "relu_bwd", "dx = dy where x > 0, else 0", "x", 0, wide,
      [](double dy, double x) { return x > 0 ? dy : 0.0; }, 0, 0));
  out.push_back(unary_kernel("gelu", "y = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))", 512,
                             gelu, wide, 4, 1e-6));
  out.push_back(gradient_kernel("gelu_bwd", "dx = dy * gelu'(x) (tanh form)", "x", 512, wide,
                                gelu_grad, 4, 4e-6));
  out.push_back(unary_kernel("sigmoid", "y = 1 / (1 + e^-x)", 512, sigmoid, {Fill::kUniform, -8, 8},
                             4, 1e-7));
  out.push_back(gradient_kernel(
      "sigmoid_bwd", "dx = dy * y * (1 - y), y = sigmoid(x)", "y", 512, {Fill::kUniform, 0, 1},
      [](double dy, double y) { return dy * y * (1 - y); }, 4, 1e-7));
  out.push_back(unary_kernel(
      "tanh", "y = tanh x", 512, [](double x) { return std::tanh(x); }, wide, 4, 1e-7));
  out.push_back(gradient_kernel(
      "tanh_bwd", "dx = dy * (1 - y^2), y = tanh(x)", "y", 512, {Fill::kUniform, -1, 1},
      [](double dy, double y) { return dy * (1 - y * y); }, 4, 1e-6));
  out.push_back(dropout_kernel(false));
  out.push_back(dropout_kernel(true));
  out.push_back(cast_kernel());
  out.push_back(fill_kernel());
  out.push_back(bias_add_kernel());
  out.push_back(transpose_kernel());
  out.push_back(embedding_kernel());
  return out;
}

}  // namespace podsim::tpc::glue
