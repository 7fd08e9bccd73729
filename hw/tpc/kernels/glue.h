// What the kernel families' glue (elementwise.cpp, rows.cpp, norms.cpp, optimizers.cpp,
// pooling.cpp) shares: the definition of a kernel, and helpers to check requests, lay out tensors
// and compute references. Internal to hw/tpc/kernels.
#pragma once

#include <array>
#include <functional>
#include <initializer_list>
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

// The float types most kernels take, the key of a kernel's binary for a type ("add.bf16") and an
// index-space extent.
inline std::vector<Dtype> float_types() { return {Dtype::kF32, Dtype::kBf16, Dtype::kF16}; }
inline std::string key(const std::string& name, Dtype t) { return name + "." + info(t).name; }
inline std::int32_t points(std::uint64_t n) { return static_cast<std::int32_t>(n); }

inline std::uint32_t ceil_div(std::uint64_t a, std::uint64_t b) {
  return static_cast<std::uint32_t>((a + b - 1) / b);
}
// Kernels that keep a row in registers come in variants of so many 64-lane vectors: the first
// of `variants` (ascending) that holds `columns`, or 0 when none does.
inline std::uint32_t register_variant(std::uint32_t columns,
                                      std::initializer_list<std::uint32_t> variants) {
  for (std::uint32_t v : variants)
    if (ceil_div(columns, 64) <= v) return v;
  return 0;
}
std::uint32_t f32_bits(double v);
// The type's machine epsilon (2^-23, 2^-8, 2^-11).
double epsilon(Dtype t);
// The bits of -infinity in type t (the padding of max reductions).
std::uint32_t minus_infinity(Dtype t);

// Checks the request's parameters against the names the kernel takes and returns one of them
// (its default when absent); throws std::invalid_argument for an unknown name.
// A 0-or-1 parameter's value as a flag; throws std::invalid_argument naming it otherwise.
bool check_flag(const KernelRequest& r, const std::string& name, double value);

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

// How a per-channel reduction over x [C, M] (reduce along dimension 1, batch norm's statistics
// and gradients) spreads over the cores: its rows split into B blocks of L rows; a point of the
// first launch reduces one block into column b of f32 scratch buffers [C, B], and a second launch
// combines the columns per channel. A point walks its rows in memory order, so that the access
// unit streams them (a point per 64 channels stepping from row to row would gather).
// Rows of at most 512 channels (eight vectors): index space [1, B]; the point's eight slots each
// follow one vector down the rows, `pass_rows` rows a pass: slot k reads channels channel[k].. of
// row row[k] of each pass, so that a pass reads whole rows. Unused slots point past C (padding).
// Wider rows (`wide`, the *_wide kernels): index space [groups, B], a point taking one block of
// a group of at most 4096 channels (a pass: a row of the group), its running results kept in
// vector local memory.
// The launches declare no access scale, so their tiles are not reused: the tile cache lets a core
// replay a tile another core is still recording (hw/tpc/tpc_core.cpp), and a replay that catches
// up while the recorder folds its slots (no global access for a while) ends early.
struct ColumnBlocks {
  static constexpr int kSlots = 8;
  static constexpr std::uint32_t kWideGroup = 4096;
  bool wide = false;
  std::uint32_t groups = 1, blocks = 1, block_rows = 1, pass_rows = 1;
  std::array<std::uint32_t, kSlots> channel{}, row{};
  Coord index_space() const;
};
ColumnBlocks column_blocks(const Rows& rows);
// The first launch's scalar arguments: s0 = L, s1 = M, then s2 = pass_rows, s3..s10 = the slots'
// channels, s11..s18 their rows; wide: s2 = C.
void set_column_arguments(LaunchSpec& l, const ColumnBlocks& c, const Rows& rows);

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

// The second launch of a reduction over each channel's rows: y[c] = `op` ("add" or "max") of
// part[c, b] over the blocks (f32 scratch [C, B]), a point per 64 channels, y in type t
// (reduce_cols_combine.tpcs).
void combine_columns(PlanBuilder& b, const std::string& op, Dtype t, int part, int y,
                     std::uint32_t columns, std::uint32_t blocks);

// Every element of a buffer as doubles, and back (rounding to the buffer's type).
std::vector<double> values(const KernelPlan& plan, const Buffers& buffers, int buffer);
void store(const KernelPlan& plan, Buffers& buffers, int buffer, const std::vector<double>& v);

}  // namespace podsim::tpc::glue
