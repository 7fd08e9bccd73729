#include "hw/tpc/kernels/glue.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "hw/tpc/numerics.h"

namespace podsim::tpc::glue {

std::uint32_t f32_bits(double v) { return bits_of(static_cast<float>(v)); }

double epsilon(Dtype t) {
  switch (t) {
    case Dtype::kBf16:
      return std::ldexp(1.0, -8);
    case Dtype::kF16:
      return std::ldexp(1.0, -11);
    default:
      return std::ldexp(1.0, -23);
  }
}

std::uint32_t minus_infinity(Dtype t) {
  switch (t) {
    case Dtype::kBf16:
      return 0xFF80;
    case Dtype::kF16:
      return 0xFC00;
    default:
      return 0xFF800000;
  }
}

bool check_flag(const KernelRequest& r, const std::string& name, double value) {
  if (value != 0 && value != 1) {
    throw std::invalid_argument(
        fmt::format("kernel '{}': {} = {} (must be 0 or 1)", r.kernel, name, value));
  }
  return value == 1;
}

Params::Params(const KernelRequest& request, std::vector<std::pair<std::string, double>> defaults) {
  for (const auto& [name, value] : defaults) values_[name] = value;
  for (const auto& [name, value] : request.params) {
    if (!values_.count(name)) {
      std::string known;
      for (const auto& [n, v] : defaults)
        known += fmt::format("{}{} (default {})", known.empty() ? "" : ", ", n, v);
      throw std::invalid_argument(
          fmt::format("kernel '{}' has no parameter '{}'{}", request.kernel, name,
                      known.empty() ? " (it takes none)" : " (it takes " + known + ")"));
    }
    if (!std::isfinite(value)) {
      throw std::invalid_argument(
          fmt::format("kernel '{}': parameter '{}' is {}", request.kernel, name, value));
    }
    values_[name] = value;
  }
}

double Params::operator[](const std::string& name) const { return values_.at(name); }

std::uint64_t elements(const std::vector<std::uint32_t>& dims) {
  std::uint64_t n = 1;
  for (std::uint32_t d : dims) n *= d;
  return n;
}

void check_shape(const KernelRequest& request, int min_dims) {
  const auto& s = request.shape;
  if (static_cast<int>(s.size()) < min_dims || s.size() > kMaxDims) {
    throw std::invalid_argument(
        fmt::format("kernel '{}' needs a shape of {} to 5 dimensions, not {}", request.kernel,
                    min_dims, s.size()));
  }
  for (std::size_t d = 0; d < s.size(); ++d) {
    if (s[d] == 0)
      throw std::invalid_argument(
          fmt::format("kernel '{}': dimension {} of the shape is 0", request.kernel, d));
  }
  if (elements(s) > (1ull << 31)) {
    throw std::invalid_argument(fmt::format("kernel '{}': {} elements; at most 2^31 per tensor",
                                            request.kernel, elements(s)));
  }
}

Rows as_rows(const KernelRequest& request) {
  check_shape(request);
  Rows r;
  r.columns = request.shape[0];
  r.rows = static_cast<std::uint32_t>(elements(request.shape) / r.columns);
  return r;
}

namespace {

// Points enough for three or more on every core of the largest chip (64 on Gaudi 3; 24 and 8
// divide it too), so that slices come out even.
constexpr std::uint64_t kMaxBlocks = 192;
// A block pays a fixed set-up and fold (a few hundred bundles) and a store and a load of its
// partial results per channel: shorter blocks would spend more there than they save.
constexpr std::uint64_t kMinBlockRows = 64, kMinBlockElements = 32768;

}  // namespace

Coord ColumnBlocks::index_space() const {
  return {static_cast<std::int32_t>(groups), static_cast<std::int32_t>(blocks), 1, 1, 1};
}

ColumnBlocks column_blocks(const Rows& rows) {
  constexpr std::uint32_t slots = ColumnBlocks::kSlots;
  ColumnBlocks c;
  const std::uint32_t vectors = ceil_div(rows.columns, 64);
  std::uint64_t point_columns = rows.columns;
  if (vectors <= slots) {
    c.pass_rows = slots / vectors;
    for (std::uint32_t k = 0; k < slots; ++k) {
      const bool used = k < c.pass_rows * vectors;
      c.channel[k] = 64 * (used ? k % vectors : vectors);
      c.row[k] = used ? k / vectors : 0;
    }
  } else {
    c.wide = true;
    c.groups = ceil_div(rows.columns, ColumnBlocks::kWideGroup);
    point_columns = std::min(point_columns, std::uint64_t{ColumnBlocks::kWideGroup});
  }
  const std::uint64_t wanted =
      std::min({std::uint64_t{rows.rows} / kMinBlockRows,
                point_columns * rows.rows / kMinBlockElements, kMaxBlocks});
  const std::uint64_t blocks = std::max<std::uint64_t>(wanted, 1);
  const std::uint64_t per_block = (rows.rows + blocks - 1) / blocks;
  c.block_rows =
      static_cast<std::uint32_t>((per_block + c.pass_rows - 1) / c.pass_rows * c.pass_rows);
  c.blocks = ceil_div(rows.rows, c.block_rows);
  return c;
}

void set_column_arguments(LaunchSpec& l, const ColumnBlocks& c, const Rows& rows) {
  l.srf[0] = c.block_rows;
  l.srf[1] = rows.rows;
  if (c.wide) {
    l.srf[2] = rows.columns;
    return;
  }
  l.srf[2] = c.pass_rows;
  for (int k = 0; k < ColumnBlocks::kSlots; ++k) {
    l.srf[static_cast<std::size_t>(3 + k)] = c.channel[static_cast<std::size_t>(k)];
    l.srf[static_cast<std::size_t>(11 + k)] = c.row[static_cast<std::size_t>(k)];
  }
}

void combine_columns(PlanBuilder& b, const std::string& op, Dtype t, int part, int y,
                     std::uint32_t columns, std::uint32_t blocks) {
  LaunchSpec& l =
      b.launch(key("reduce_cols_combine_" + op, t), {points(ceil_div(columns, 64)), 1, 1, 1, 1});
  // The part's padding is the operation's identity (its last pass reads past B).
  l.tensors[0] = b.view(part, {}, op == "max" ? minus_infinity(Dtype::kF32) : 0);
  l.tensors[1] = b.view(y);
  l.srf[0] = ceil_div(blocks, 8);
}

PlanBuilder::PlanBuilder(const KernelRequest& request) { plan_.request = request; }

int PlanBuilder::buffer(const std::string& name, Dtype t, std::vector<std::uint32_t> dims,
                        BufferSpec::Role role, Fill fill) {
  BufferSpec b;
  b.name = name;
  b.dtype = t;
  b.dims = std::move(dims);
  b.role = role;
  b.fill = fill;
  plan_.buffers.push_back(std::move(b));
  return static_cast<int>(plan_.buffers.size() - 1);
}

TensorView PlanBuilder::view(int buffer, std::vector<std::uint32_t> dims,
                             std::uint32_t padding) const {
  if (dims.empty()) dims = spec(buffer).dims;
  TensorView v;
  v.buffer = buffer;
  v.dtype = spec(buffer).dtype;
  std::uint64_t stride = 1;
  for (std::uint32_t d : dims) {
    v.strides.push_back(stride);
    stride *= d;
  }
  v.dims = std::move(dims);
  v.padding = padding;
  return v;
}

TensorView PlanBuilder::lane0_view(int buffer) const {
  return view(buffer, {1, static_cast<std::uint32_t>(spec(buffer).elements())});
}

LaunchSpec& PlanBuilder::launch(const std::string& binary, Coord index_space) {
  LaunchSpec l;
  l.binary = binary;
  l.index_space = index_space;
  plan_.launches.push_back(std::move(l));
  return plan_.launches.back();
}

std::vector<double> values(const KernelPlan& plan, const Buffers& buffers, int buffer) {
  const BufferSpec& b = plan.buffers[static_cast<std::size_t>(buffer)];
  std::vector<double> out(b.elements());
  for (std::uint64_t i = 0; i < out.size(); ++i) {
    out[i] = read_element(buffers[static_cast<std::size_t>(buffer)], b.dtype, i);
  }
  return out;
}

void store(const KernelPlan& plan, Buffers& buffers, int buffer, const std::vector<double>& v) {
  const BufferSpec& b = plan.buffers[static_cast<std::size_t>(buffer)];
  for (std::uint64_t i = 0; i < v.size(); ++i) {
    write_element(buffers[static_cast<std::size_t>(buffer)], b.dtype, i, v[i]);
  }
}

}  // namespace podsim::tpc::glue
