// Glue of the 2-D pooling kernels over NHWC activations x [C, W, H, N] (dimension 0 the
// channels, as the MME's convolutions lay them out): max and average pooling and their
// gradients. Windows are kh x kw (rows x columns) moved by sh, sw over x padded by ph, pw on
// each side; y is [C, Q, P, N] with P = (H + 2 ph - kh) / sh + 1, Q likewise.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>

#include "hw/tpc/kernels/glue.h"

namespace podsim::tpc::glue {
namespace {

using Role = BufferSpec::Role;

// Keeps a window's place r kw + s and the kernels' coordinates within int32.
constexpr double kMaxParam = 32767;

const std::vector<std::string> kParamNames = {"window_h", "window_w", "stride_h",
                                              "stride_w", "pad_h",    "pad_w"};
const char* const kShapeHelp =
    "x [C, W, H, N] (NHWC); y [C, Q, P, N], P = (H + 2 pad_h - window_h) / stride_h + 1, Q "
    "likewise; window 2 x 2, stride = window, pad 0 unless given";

// The bits of a quiet NaN in type t: padding that no comparison matches.
std::uint32_t quiet_nan(Dtype t) {
  switch (t) {
    case Dtype::kBf16:
      return 0x7FC0;
    case Dtype::kF16:
      return 0x7E00;
    default:
      return 0x7FC00000;
  }
}

// A request's geometry, checked.
struct Pooling {
  std::uint32_t c = 0, w = 0, h = 0, n = 0;  // x
  std::uint32_t q = 0, p = 0;                // y's columns and rows
  std::uint32_t kh = 0, kw = 0, sh = 0, sw = 0, ph = 0, pw = 0;
  std::uint32_t area() const { return kh * kw; }
  // The most windows that cover one element of x.
  std::uint32_t covers() const { return ceil_div(kh, sh) * ceil_div(kw, sw); }
  // Windows apart: each window's cell of x (sh rows by sw columns from its origin, the last ones
  // to x's end) holds it whole, and the cells tile x, so a backward pass may write dx cell by
  // cell.
  bool apart() const { return sh >= kh && sw >= kw; }
  std::uint64_t x_index(std::uint64_t ci, std::uint64_t wi, std::uint64_t hi,
                        std::uint64_t ni) const {
    return ci + c * (wi + w * (hi + h * ni));
  }
  std::uint64_t y_index(std::uint64_t ci, std::uint64_t qi, std::uint64_t pi,
                        std::uint64_t ni) const {
    return ci + c * (qi + q * (pi + p * ni));
  }
  std::vector<std::uint32_t> x_dims() const { return {c, w, h, n}; }
  std::vector<std::uint32_t> y_dims() const { return {c, q, p, n}; }
};

std::uint32_t whole(const KernelRequest& r, const Params& params, const std::string& name,
                    double lo) {
  const double v = params[name];
  if (v != std::floor(v) || v < lo || v > kMaxParam) {
    throw std::invalid_argument(fmt::format("kernel '{}': {} = {} (a whole number from {} to {})",
                                            r.kernel, name, v, lo, kMaxParam));
  }
  return static_cast<std::uint32_t>(v);
}

// One axis of the window (h along H, w along W): its output size, or why there is none.
std::uint32_t output_size(const KernelRequest& r, char axis, std::uint32_t size,
                          std::uint32_t window, std::uint32_t stride, std::uint32_t pad) {
  if (pad >= window) {
    throw std::invalid_argument(fmt::format(
        "kernel '{}': pad_{} = {} is not smaller than window_{} = {} (a window would hold "
        "padding only)",
        r.kernel, axis, pad, axis, window));
  }
  const std::uint64_t padded = std::uint64_t{size} + 2 * pad;
  if (window > padded) {
    throw std::invalid_argument(fmt::format(
        "kernel '{}': window_{} = {} is larger than the padded input ({} + 2 pad_{} = {})",
        r.kernel, axis, window, axis == 'h' ? 'H' : 'W', axis, padded));
  }
  return static_cast<std::uint32_t>((padded - window) / stride + 1);
}

// A request's geometry; with `takes_relu` it may also carry the relu flag (max_pool_bwd's).
Pooling pooling_of(const KernelRequest& r, bool takes_relu = false) {
  // The strides' defaults are the windows, which the help then shows as they are.
  const auto given = [&r](const char* name, double fallback) {
    const auto it = r.params.find(name);
    return it == r.params.end() ? fallback : it->second;
  };
  std::vector<std::pair<std::string, double>> allowed = {{"window_h", 2},
                                                         {"window_w", 2},
                                                         {"stride_h", given("window_h", 2)},
                                                         {"stride_w", given("window_w", 2)},
                                                         {"pad_h", 0},
                                                         {"pad_w", 0}};
  if (takes_relu) allowed.emplace_back("relu", 0);  // the gradient through a ReLU before it
  const Params params(r, allowed);
  if (r.shape.size() != 4) {
    throw std::invalid_argument(
        fmt::format("kernel '{}' takes x's shape [C, W, H, N] (4 dimensions), not {}", r.kernel,
                    r.shape.size()));
  }
  check_shape(r, 4);
  Pooling g;
  g.c = r.shape[0];
  g.w = r.shape[1];
  g.h = r.shape[2];
  g.n = r.shape[3];
  g.kh = whole(r, params, "window_h", 1);
  g.kw = whole(r, params, "window_w", 1);
  g.sh = whole(r, params, "stride_h", 1);
  g.sw = whole(r, params, "stride_w", 1);
  g.ph = whole(r, params, "pad_h", 0);
  g.pw = whole(r, params, "pad_w", 0);
  g.p = output_size(r, 'h', g.h, g.kh, g.sh, g.ph);
  g.q = output_size(r, 'w', g.w, g.kw, g.sw, g.pw);
  return g;
}

// What one index-space point covers: four vectors of 64 channels (f32 lanes), `channels`
// vectors along C by `batch` elements along N. Small C (64 in ResNet's stem) takes the four
// along N, so that each window step still loads four useful vectors.
struct Units {
  std::uint32_t channels = 4, batch = 1;
};

Units units_of(const Pooling& g) {
  Units best;
  std::uint64_t best_points = ~std::uint64_t{0};
  for (const Units u : {Units{4, 1}, Units{2, 2}, Units{1, 4}}) {
    const std::uint64_t n = std::uint64_t{ceil_div(g.c, 64 * u.channels)} * ceil_div(g.n, u.batch);
    if (n < best_points) {
      best = u;
      best_points = n;
    }
  }
  return best;
}

// The scalar arguments every pooling kernel takes (pool.tpcs lists them) and its index space:
// channel blocks by the points of [dim1, dim2, N / batch] folded into one long dimension.
void set_arguments(LaunchSpec& l, const Pooling& g, Units u, double scale, std::uint32_t dim1,
                   std::uint32_t dim2) {
  const std::uint32_t head[] = {g.kh,   g.kw, g.sh, g.sw, g.ph, g.pw, g.p, g.q, 64 * u.channels,
                                u.batch};
  std::copy(std::begin(head), std::end(head), l.srf.begin());
  l.srf[10] = f32_bits(scale);
  for (std::uint32_t unit = 1; unit < 4; ++unit) {
    l.srf[11 + 2 * (unit - 1)] = unit % u.channels * 64;
    l.srf[12 + 2 * (unit - 1)] = unit / u.channels;
  }
  l.srf[17] = g.sh * g.kw;
  l.srf[18] = g.h + g.ph - (g.p - 1) * g.sh;
  l.srf[19] = g.w + g.pw - (g.q - 1) * g.sw;
  l.srf[20] = dim1;
  l.srf[21] = dim2;
  l.index_space = {points(ceil_div(g.c, 64 * u.channels)),
                   points(std::uint64_t{dim1} * dim2 * ceil_div(g.n, u.batch)), 1, 1, 1};
  // No access_scale: windows overlap and reach into the padding, so tiles are not translations
  // of one another.
}

// Windows the row-walking kernels (pool_rows.tpcs, max_pool_index_rows.tpcs) are assembled
// for, each window row streaming through a tensor of its own; other windows take the point per
// window position (pool.tpcs). A row walk reads a row's every channel block, one at a time, so
// it serves rows of at most two blocks (128 channels); wider rows take pool.tpcs, whose four
// vectors a window step lie side by side along C.
bool walks_rows(const Pooling& g) { return g.kh == g.kw && (g.kh == 2 || g.kh == 3) && g.c <= 128; }

// 3 x 3 windows moved by 2 (ResNet's stem) on rows of at most 128 channels: two output rows a
// point, which share an input row (pool_row_pairs.tpcs), so x streams 1.25 times, not 2.25.
bool walks_row_pairs(const Pooling& g) {
  return g.kh == 3 && g.kw == 3 && g.sh == 2 && g.sw == 2 && g.c <= 128;
}

// A window that covers the whole input without padding (so one output a channel and image) of
// at most 32 vectors of channels: global_pool.tpcs.
bool is_global(const Pooling& g) {
  return g.kh == g.h && g.kw == g.w && g.ph == 0 && g.pw == 0 && g.c <= 32 * 64;
}

// The registers a global pool's point keeps, one a vector of channels: 8, 16 or 32.
std::uint32_t global_slots(const Pooling& g) { return register_variant(g.c, {8, 16, 32}); }

// A launch walking output rows two at a time (pool_row_pairs.tpcs, max_pool_index_pairs.tpcs):
// its arguments and index space [ceil(C / 64), ceil(P / 2) N].
void set_row_pairs(LaunchSpec& l, const Pooling& g) {
  l.srf[4] = g.ph;
  l.srf[5] = g.pw;
  l.srf[19] = ceil_div(g.q, 2);
  l.srf[21] = ceil_div(g.p, 2);
  l.index_space = {points(ceil_div(g.c, 64)), points(std::uint64_t{ceil_div(g.p, 2)} * g.n), 1, 1,
                   1};
}

std::string rows_kernel(const std::string& name, const Pooling& g) {
  return fmt::format("{}_rows{}x{}", name, g.kh, g.kw);
}

// A row-walking launch: x through tensors 0 .. kh - 1, then `rest`; its arguments (pool_rows.tpcs)
// and index space [ceil(C / 64), P N].
void set_row_walk(LaunchSpec& l, const Pooling& g, const TensorView& x,
                  const std::vector<TensorView>& rest, double scale) {
  std::size_t t = 0;
  for (; t < g.kh; ++t) l.tensors[t] = x;
  for (const TensorView& v : rest) l.tensors[t++] = v;
  l.srf[2] = g.sh;
  l.srf[3] = g.sw;
  l.srf[4] = g.ph;
  l.srf[5] = g.pw;
  l.srf[10] = f32_bits(scale);
  l.srf[19] = ceil_div(g.q, 2);
  l.srf[21] = g.p;
  l.index_space = {points(ceil_div(g.c, 64)), points(std::uint64_t{g.p} * g.n), 1, 1, 1};
}

// Calls f(out, at) for every element `out` of y (its index), `at(r, s)` giving x's index of the
// window's place (r, s), or nullopt where the place is padding.
template <class F>
void for_each_window(const Pooling& g, F f) {
  for (std::uint32_t n = 0; n < g.n; ++n)
    for (std::uint32_t p = 0; p < g.p; ++p)
      for (std::uint32_t q = 0; q < g.q; ++q)
        for (std::uint32_t c = 0; c < g.c; ++c) {
          const auto at = [&](std::uint32_t r, std::uint32_t s) -> std::optional<std::uint64_t> {
            const std::int64_t hi = std::int64_t{p} * g.sh - g.ph + r;
            const std::int64_t wi = std::int64_t{q} * g.sw - g.pw + s;
            if (hi < 0 || wi < 0 || hi >= g.h || wi >= g.w) return std::nullopt;
            return g.x_index(c, static_cast<std::uint64_t>(wi), static_cast<std::uint64_t>(hi), n);
          };
          f(g.y_index(c, q, p, n), at);
        }
}

KernelDef forward_kernel(bool is_max) {
  KernelDef d;
  const std::string name = is_max ? "max_pool" : "avg_pool";
  d.info = {name,
            is_max ? "y = max of x over each window; padding never wins"
                   : "y = sum of x over each window / (window_h window_w): the padding counts "
                     "(count_include_pad)",
            float_types(), kShapeHelp, kParamNames};
  d.plan = [name, is_max](const KernelRequest& r) {
    const Pooling g = pooling_of(r);
    const Units u = units_of(g);
    PlanBuilder b(r);
    const int x = b.buffer("x", r.dtype, g.x_dims(), Role::kInput);
    const int y = b.buffer("y", r.dtype, g.y_dims(), Role::kOutput);
    const std::uint32_t identity = is_max ? minus_infinity(r.dtype) : 0;
    const TensorView padded_x = b.view(x, {}, identity);
    const double scale = is_max ? 1.0 : 1.0 / g.area();
    if (is_global(g)) {
      // One image a point, read as one stream (global_pool.tpcs).
      LaunchSpec& l = b.launch(key(fmt::format("{}_global{}", name, global_slots(g)), r.dtype), {});
      l.tensors[0] = b.view(x, {g.c, g.h * g.w * g.n}, identity);
      l.tensors[1] = b.view(y, {g.c, g.n});
      l.srf[0] = g.h * g.w;
      l.srf[2] = f32_bits(scale);
      l.index_space = {1, points(g.n), 1, 1, 1};
    } else if (walks_row_pairs(g)) {
      LaunchSpec& l = b.launch(key(fmt::format("{}_pairs3x3", name), r.dtype), {});
      for (std::size_t t = 0; t < 5; ++t) l.tensors[t] = padded_x;
      l.tensors[5] = b.view(y);
      l.srf[10] = f32_bits(scale);
      set_row_pairs(l, g);
    } else if (walks_rows(g)) {
      set_row_walk(b.launch(key(rows_kernel(name, g), r.dtype), {}), g, padded_x, {b.view(y)},
                   scale);
    } else {
      LaunchSpec& l = b.launch(key(name, r.dtype), {});
      l.tensors[0] = padded_x;
      l.tensors[1] = b.view(y);
      set_arguments(l, g, u, scale, g.q, g.p);
    }
    // The mean: f32 sums of `area` values of magnitude up to 2 in the reference's order, bounded
    // linearly, then a rounded reciprocal.
    b.tolerate(y, is_max ? Tolerance{} : Tolerance{2e-7 * g.area(), 2 * epsilon(r.dtype)});
    const double outputs = static_cast<double>(elements(g.y_dims()));
    b.cost(outputs * g.area(),
           (static_cast<double>(elements(g.x_dims())) + outputs) * info(r.dtype).bytes);
    return b.done();
  };
  d.reference = [is_max](const KernelPlan& plan, Buffers& buffers) {
    const Pooling g = pooling_of(plan.request);
    const std::vector<double> x = values(plan, buffers, 0);
    std::vector<double> y(elements(g.y_dims()));
    for_each_window(g, [&](std::uint64_t out, const auto& at) {
      double acc = is_max ? -INFINITY : 0.0;
      for (std::uint32_t r = 0; r < g.kh; ++r)
        for (std::uint32_t s = 0; s < g.kw; ++s) {
          if (const auto i = at(r, s)) {
            const double v = x[*i];
            acc = !is_max ? acc + v : std::isnan(v) || v > acc ? v : acc;
          }
        }
      y[out] = is_max ? acc : acc / g.area();
    });
    store(plan, buffers, 1, y);
  };
  return d;
}

// Sums of up to `covers` gradients of magnitude up to 2, in another order than the reference.
Tolerance gradient_tolerance(const Pooling& g, Dtype t) {
  const double n = g.covers();
  return {2e-7 * n * n, 2 * epsilon(t)};
}

// max_pool_bwd's parameters: the pool's, and relu (0 or 1).
std::vector<std::string> pool_bwd_param_names() {
  std::vector<std::string> names = kParamNames;
  names.push_back("relu");
  return names;
}

bool folds_relu(const KernelRequest& r) {
  const auto it = r.params.find("relu");
  return check_flag(r, "relu", it == r.params.end() ? 0 : it->second);
}

// Windows apart: one pass, a point per window writing its cell of dx. Overlapping: the places
// of the windows' first maxima, then a point per element of dx gathering from its windows.
// With `relu` (x a ReLU's output), a window whose maximum is not above 0 passes nothing: the
// ReLU's gradient folded in, its zeros being where x is (the `_relu` variants).
void max_pool_bwd_launches(PlanBuilder& b, const Pooling& g, Dtype t, std::array<int, 4> buffers,
                           bool relu) {
  const auto [dy, x, y, dx] = buffers;
  const std::string folded = relu ? "_relu" : "";
  const Units u = units_of(g);
  const TensorView padded_x = b.view(x, {}, quiet_nan(t));
  if (g.apart()) {
    LaunchSpec& l = b.launch(key("max_pool_bwd_cells" + folded, t), {});
    l.tensors = {b.view(dy), padded_x, b.view(y), b.view(dx)};
    set_arguments(l, g, u, 1.0, g.q, g.p);
    return;
  }
  const int index = b.buffer("index", Dtype::kI32, g.y_dims(), Role::kScratch);
  const TensorView no_window = b.view(index, {}, 0xFFFFFFFF);  // never a place
  if (walks_row_pairs(g) && g.ph == 1 && g.pw == 1) {
    // The stem's windows: the places two rows of windows at a time, as the forward walks them,
    // then the gather two rows and two columns of dx at a time.
    LaunchSpec& first = b.launch(key("max_pool_index_pairs3x3" + folded, t), {});
    for (std::size_t i = 0; i < 5; ++i) first.tensors[i] = padded_x;
    first.tensors[5] = first.tensors[6] = b.view(y);
    first.tensors[7] = b.view(index);
    set_row_pairs(first, g);
    LaunchSpec& second = b.launch(key("max_pool_bwd_pairs3x3", t), {});
    const TensorView d = b.view(dy);
    second.tensors = {d, d, no_window, no_window, b.view(dx)};
    second.srf[19] = ceil_div(g.q, 2);
    second.srf[21] = ceil_div(g.h, 2);
    second.index_space = {points(ceil_div(g.c, 64)), points(std::uint64_t{ceil_div(g.h, 2)} * g.n),
                          1, 1, 1};
    return;
  }
  if (walks_rows(g) && ceil_div(g.kh, g.sh) <= 2 && ceil_div(g.kw, g.sw) <= 2) {
    // The places row by row, then each row of dx in memory order, its windows' rows of dy and
    // index streaming beside it (the two agree on how a place is written).
    set_row_walk(b.launch(key(rows_kernel("max_pool_index", g) + folded, t), {}), g, padded_x,
                 {b.view(y), b.view(index)}, 1.0);
    LaunchSpec& second = b.launch(key("max_pool_bwd_rows", t), {});
    const TensorView d = b.view(dy);
    second.tensors = {d, d, no_window, no_window, b.view(dx)};
    set_arguments(second, g, u, 1.0, g.w, g.h);
    second.index_space = {points(ceil_div(g.c, 64)), points(std::uint64_t{g.h} * g.n), 1, 1, 1};
    return;
  }
  LaunchSpec& first = b.launch(key("max_pool_index" + folded, t), {});
  first.tensors = {padded_x, b.view(y), b.view(index)};
  set_arguments(first, g, u, 1.0, g.q, g.p);
  LaunchSpec& second = b.launch(key("max_pool_bwd", t), {});
  second.tensors = {b.view(dy), b.view(index), b.view(dx)};
  set_arguments(second, g, u, 1.0, g.w, g.h);
}

KernelDef max_pool_bwd() {
  KernelDef d;
  d.info = {"max_pool_bwd",
            "dx from dy, x and y = max_pool(x): each window's dy goes to its first element (row "
            "major) equal to its max; elements in several windows sum (overlapping windows: "
            "two launches); with relu = 1 (x a ReLU's output) the ReLU's gradient too: 0 "
            "where x is not above 0",
            float_types(), kShapeHelp, pool_bwd_param_names()};
  d.plan = [](const KernelRequest& r) {
    const Pooling g = pooling_of(r, true);
    PlanBuilder b(r);
    // Small integers: windows hold ties, and y's values occur in them (y need not be x's max).
    const Fill ties{Fill::kIntegers, -3, 3};
    const int dy = b.buffer("dy", r.dtype, g.y_dims(), Role::kInput);
    const int x = b.buffer("x", r.dtype, g.x_dims(), Role::kInput, ties);
    const int y = b.buffer("y", r.dtype, g.y_dims(), Role::kInput, ties);
    const int dx = b.buffer("dx", r.dtype, g.x_dims(), Role::kOutput);
    max_pool_bwd_launches(b, g, r.dtype, {dy, x, y, dx}, folds_relu(r));
    b.tolerate(dx, gradient_tolerance(g, r.dtype));
    const double inputs = static_cast<double>(elements(g.x_dims())),
                 outputs = static_cast<double>(elements(g.y_dims()));
    b.cost(outputs * (g.area() + 1), 2 * (inputs + outputs) * info(r.dtype).bytes);
    return b.done();
  };
  d.reference = [](const KernelPlan& plan, Buffers& buffers) {
    const Pooling g = pooling_of(plan.request, true);
    const std::vector<double> dy = values(plan, buffers, 0), x = values(plan, buffers, 1),
                              y = values(plan, buffers, 2);
    std::vector<double> dx(x.size(), 0.0);
    for_each_window(g, [&](std::uint64_t out, const auto& at) {
      for (std::uint32_t k = 0; k < g.area(); ++k) {
        const auto i = at(k / g.kw, k % g.kw);
        if (i && x[*i] == y[out]) {
          dx[*i] += dy[out];
          return;
        }
      }
    });
    if (folds_relu(plan.request)) {
      for (std::size_t i = 0; i < dx.size(); ++i) dx[i] = x[i] > 0 ? dx[i] : 0.0;
    }
    store(plan, buffers, 3, dx);
  };
  return d;
}

KernelDef avg_pool_bwd() {
  KernelDef d;
  d.info = {"avg_pool_bwd",
            "dx from dy: each window spreads dy / (window_h window_w) over its elements "
            "(count_include_pad); elements in several windows sum",
            float_types(), kShapeHelp, kParamNames};
  d.plan = [](const KernelRequest& r) {
    const Pooling g = pooling_of(r);
    PlanBuilder b(r);
    const int dy = b.buffer("dy", r.dtype, g.y_dims(), Role::kInput);
    const int dx = b.buffer("dx", r.dtype, g.x_dims(), Role::kOutput);
    if (is_global(g)) {
      // One image a point, written as one stream (avg_pool_bwd_global.tpcs).
      LaunchSpec& l = b.launch(key(fmt::format("avg_pool_bwd_global{}", global_slots(g)), r.dtype),
                               {1, points(g.n), 1, 1, 1});
      l.tensors[0] = b.view(dy, {g.c, g.n});
      l.tensors[1] = b.view(dx, {g.c, g.h * g.w * g.n});
      l.srf[0] = g.h * g.w;
      l.srf[2] = f32_bits(1.0 / g.area());
    } else {
      // Windows apart: a point per window writes its cell; else a point per dx element gathers.
      LaunchSpec& l = b.launch(key(g.apart() ? "avg_pool_bwd_cells" : "avg_pool_bwd", r.dtype), {});
      l.tensors[0] = b.view(dy);
      l.tensors[1] = b.view(dx);
      set_arguments(l, g, units_of(g), 1.0 / g.area(), g.apart() ? g.q : g.w,
                    g.apart() ? g.p : g.h);
    }
    b.tolerate(dx, gradient_tolerance(g, r.dtype));
    const double inputs = static_cast<double>(elements(g.x_dims())),
                 outputs = static_cast<double>(elements(g.y_dims()));
    b.cost(outputs * g.area(), (inputs + outputs) * info(r.dtype).bytes);
    return b.done();
  };
  d.reference = [](const KernelPlan& plan, Buffers& buffers) {
    const Pooling g = pooling_of(plan.request);
    const std::vector<double> dy = values(plan, buffers, 0);
    std::vector<double> dx(elements(g.x_dims()), 0.0);
    for_each_window(g, [&](std::uint64_t out, const auto& at) {
      for (std::uint32_t r = 0; r < g.kh; ++r)
        for (std::uint32_t s = 0; s < g.kw; ++s)
          if (const auto i = at(r, s)) dx[*i] += dy[out] / g.area();
    });
    store(plan, buffers, 1, dx);
  };
  return d;
}

}  // namespace

std::vector<KernelDef> pool_kernels() {
  return {forward_kernel(true), forward_kernel(false), max_pool_bwd(), avg_pool_bwd()};
}

}  // namespace podsim::tpc::glue
