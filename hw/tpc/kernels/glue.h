// What the kernel families' glue (elementwise.cpp, rows.cpp, norms.cpp, optimizers.cpp,
// pooling.cpp) shares: the definition of a kernel, and helpers to check requests, lay out tensors
// and compute references. Internal to hw/tpc/kernels.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "hw/tpc/kernels/library.h"

namespace podsim::tpc::glue {

using Buffers = std::vector<std::vector<std::uint8_t>>;

struct KernelDef {
  KernelInfo info;
  std::function<KernelPlan(const KernelRequest&)> plan;
  std::function<void(const KernelPlan&, Buffers&)> reference;
};

std::vector<KernelDef> elementwise_kernels();
std::vector<KernelDef> row_kernels();
std::vector<KernelDef> norm_kernels();
std::vector<KernelDef> optimizer_kernels();
std::vector<KernelDef> pool_kernels();

inline std::uint32_t ceil_div(std::uint64_t a, std::uint64_t b) {
  return static_cast<std::uint32_t>((a + b - 1) / b);
}
std::uint32_t f32_bits(double v);
// The type's machine epsilon (2^-23, 2^-8, 2^-11).
double epsilon(Dtype t);
// The bits of -infinity in type t (the padding of max reductions).
std::uint32_t minus_infinity(Dtype t);

// Checks the request's parameters against the names the kernel takes and returns one of them
// (its default when absent); throws std::invalid_argument for an unknown name.
class Params {
 public:
  Params(const KernelRequest& request, std::vector<std::pair<std::string, double>> defaults);
  double operator[](const std::string& name) const;

 private:
  std::map<std::string, double> values_;
};

// The request's shape seen as [C, R]: dimension 0, and every other dimension folded into rows.
struct Rows {
  std::uint32_t columns = 0, rows = 0;
};
// Throws unless the shape has 1 to 5 dimensions, none zero, at most 2^31 elements in all.
void check_shape(const KernelRequest& request, int min_dims = 1);
Rows as_rows(const KernelRequest& request);
std::uint64_t elements(const std::vector<std::uint32_t>& dims);

// A plan under construction.
class PlanBuilder {
 public:
  explicit PlanBuilder(const KernelRequest& request);
  int buffer(const std::string& name, Dtype t, std::vector<std::uint32_t> dims,
             BufferSpec::Role role, Fill fill = {});
  // A dense view of a buffer with these sizes (a reshape), or with the buffer's own when none.
  TensorView view(int buffer, std::vector<std::uint32_t> dims = {},
                  std::uint32_t padding = 0) const;
  // [1, n] view of a vector output: a store writes lane 0 only.
  TensorView lane0_view(int buffer) const;
  LaunchSpec& launch(const std::string& binary, Coord index_space);
  void tolerate(int buffer, Tolerance t) { plan_.tolerance[buffer] = t; }
  void cost(double flops, double min_bytes) {
    plan_.flops = flops;
    plan_.min_bytes = min_bytes;
  }
  KernelPlan done() { return std::move(plan_); }
  const BufferSpec& spec(int buffer) const {
    return plan_.buffers[static_cast<std::size_t>(buffer)];
  }

 private:
  KernelPlan plan_;
};

// Every element of a buffer as doubles, and back (rounding to the buffer's type).
std::vector<double> values(const KernelPlan& plan, const Buffers& buffers, int buffer);
void store(const KernelPlan& plan, Buffers& buffers, int buffer, const std::vector<double>& v);

}  // namespace podsim::tpc::glue
