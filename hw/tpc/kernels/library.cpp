#include "hw/tpc/kernels/library.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <stdexcept>

#include "hw/tpc/kernels/glue.h"
#include "hw/tpc/numerics.h"
#include "hw/tpc/vpu.h"

// The binaries podsim_tpc_as assembled from hw/tpc/kernels (namespace podsim::tpc::kernel_data).
#include "podsim/tpc/kernels.inc"

namespace podsim::tpc {
namespace {

const std::vector<glue::KernelDef>& definitions() {
  static const std::vector<glue::KernelDef> all = [] {
    std::vector<glue::KernelDef> out;
    for (auto family : {glue::elementwise_kernels, glue::row_kernels, glue::norm_kernels,
                        glue::optimizer_kernels, glue::pool_kernels}) {
      for (glue::KernelDef& d : family()) out.push_back(std::move(d));
    }
    return out;
  }();
  return all;
}

const glue::KernelDef& definition(const std::string& name) {
  for (const glue::KernelDef& d : definitions())
    if (d.info.name == name) return d;
  std::string known;
  for (const glue::KernelDef& d : definitions()) known += (known.empty() ? "" : ", ") + d.info.name;
  throw std::invalid_argument(fmt::format("unknown kernel '{}' (kernels: {})", name, known));
}

}  // namespace

std::vector<std::uint8_t> kernel_binary(const std::string& key, Generation generation) {
  for (const KernelBinaryEntry& e : kernel_data::kEntries) {
    if (key == e.key && e.generation == generation)
      return std::vector<std::uint8_t>(e.data, e.data + e.size);
  }
  throw std::invalid_argument(
      fmt::format("no kernel binary '{}' for {}", key, to_string(generation)));
}

std::vector<std::string> kernel_binary_keys() {
  std::vector<std::string> out;
  for (const KernelBinaryEntry& e : kernel_data::kEntries)
    if (out.empty() || out.back() != e.key) out.emplace_back(e.key);
  return out;
}

std::uint64_t BufferSpec::elements() const { return glue::elements(dims); }
std::uint64_t BufferSpec::bytes() const { return elements() * info(dtype).bytes; }

const std::vector<KernelInfo>& kernel_infos() {
  static const std::vector<KernelInfo> infos = [] {
    std::vector<KernelInfo> out;
    for (const glue::KernelDef& d : definitions()) out.push_back(d.info);
    return out;
  }();
  return infos;
}

KernelPlan plan_kernel(const KernelRequest& request) {
  const glue::KernelDef& d = definition(request.kernel);
  if (std::find(d.info.dtypes.begin(), d.info.dtypes.end(), request.dtype) == d.info.dtypes.end()) {
    std::string types;
    for (Dtype t : d.info.dtypes) types += (types.empty() ? "" : ", ") + std::string(info(t).name);
    throw std::invalid_argument(fmt::format("kernel '{}' does not take type {} (types: {})",
                                            request.kernel, info(request.dtype).name, types));
  }
  KernelPlan plan = d.plan(request);
  plan.request = request;
  return plan;
}

void run_reference(const KernelPlan& plan, std::vector<std::vector<std::uint8_t>>& buffers) {
  definition(plan.request.kernel).reference(plan, buffers);
}

int partition_dim(const Coord& space) {
  for (int d = kMaxDims - 1; d >= 0; --d) {
    if (space[static_cast<std::size_t>(d)] > 1) return d;
  }
  return 0;
}

std::vector<Slice> partition(const Coord& space, int cores) {
  const int d = partition_dim(space);
  return partition(space, cores, 0, space[static_cast<std::size_t>(d)]);
}

std::vector<Slice> partition(const Coord& space, int cores, std::int32_t begin, std::int32_t end) {
  const auto d = static_cast<std::size_t>(partition_dim(space));
  const std::int64_t points = end - begin;
  const std::int64_t parts =
      std::min<std::int64_t>(std::max(cores, 1), std::max<std::int64_t>(points, 1));
  std::vector<Slice> out;
  for (std::int64_t p = 0; p < parts; ++p) {
    Slice s;
    s.end = space;
    s.start[d] = static_cast<std::int32_t>(begin + points * p / parts);
    s.end[d] = static_cast<std::int32_t>(begin + points * (p + 1) / parts);
    if (s.end[d] > s.start[d]) out.push_back(s);
  }
  return out;
}

std::uint32_t dropout_seed_word(std::uint32_t seed) {
  // MurmurHash3's 32-bit finaliser: seeds a step apart give state words far apart, so that
  // their draws are independent (the generator is linear over bits; additive offsets alone are
  // not mixed enough).
  seed ^= seed >> 16;
  seed *= 0x85EBCA6Bu;
  seed ^= seed >> 13;
  seed *= 0xC2B2AE35u;
  seed ^= seed >> 16;
  return seed;
}

bool dropout_keeps(std::uint32_t seed, std::uint64_t element, std::uint32_t threshold) {
  const auto counter = static_cast<std::uint32_t>(element / 2);
  const std::uint32_t state =
      xorshift32(xorshift32(counter * kDropoutCounterStep + dropout_seed_word(seed)));
  const std::uint32_t draw = (element % 2) != 0 ? state >> 16 : state & 0xFFFFu;
  return draw < threshold;
}

std::uint32_t dropout_threshold(double p) {
  const double t = std::nearbyint((1.0 - p) * 65536.0);
  return static_cast<std::uint32_t>(std::clamp(t, 1.0, 65535.0));
}

TensorDescriptor descriptor(const TensorView& view, std::uint64_t base) {
  TensorDescriptor t;
  t.base = base;
  t.dtype = view.dtype;
  t.dims = static_cast<int>(view.dims.size());
  for (std::size_t d = 0; d < view.dims.size() && d < kMaxDims; ++d) {
    t.size[d] = view.dims[d];
    t.stride[d] = view.strides[d];
  }
  t.padding = view.padding;
  return t;
}

std::vector<std::vector<std::uint8_t>> make_buffers(const KernelPlan& plan, std::uint64_t seed) {
  std::vector<std::vector<std::uint8_t>> out;
  std::mt19937_64 rng(seed);
  for (const BufferSpec& b : plan.buffers) {
    out.emplace_back(b.bytes(), 0);
    if (b.role != BufferSpec::Role::kInput && b.role != BufferSpec::Role::kInOut) continue;
    std::uniform_real_distribution<double> uniform(b.fill.lo, b.fill.hi);
    for (std::uint64_t i = 0; i < b.elements(); ++i) {
      const double v = uniform(rng);
      write_element(out.back(), b.dtype, i, b.fill.kind == Fill::kIntegers ? std::floor(v) : v);
    }
  }
  return out;
}

std::optional<std::string> compare_buffer(const KernelPlan& plan, int buffer,
                                          const std::vector<std::uint8_t>& got,
                                          const std::vector<std::uint8_t>& want) {
  const BufferSpec& b = plan.buffers.at(static_cast<std::size_t>(buffer));
  const auto it = plan.tolerance.find(buffer);
  const Tolerance tol = it == plan.tolerance.end() ? Tolerance{} : it->second;
  double worst = 0;
  std::optional<std::string> report;
  for (std::uint64_t i = 0; i < b.elements(); ++i) {
    const double g = read_element(got, b.dtype, i), w = read_element(want, b.dtype, i);
    if (std::isnan(g) && std::isnan(w)) continue;
    const double excess = std::fabs(g - w) - (tol.abs + tol.rel * std::fabs(w));
    if (!(excess <= 0) && (report == std::nullopt || excess > worst || std::isnan(excess))) {
      worst = excess;
      report = fmt::format("{}[{}] = {} but the reference is {} (tolerance {} + {} * |ref|)",
                           b.name, i, g, w, tol.abs, tol.rel);
    }
  }
  return report;
}

}  // namespace podsim::tpc
