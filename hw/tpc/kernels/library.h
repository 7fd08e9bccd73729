// The TPC kernel library: the binaries the build assembles from hw/tpc/kernels/*.tpcs (one per
// type) and, for each kernel, its glue: what a request must look like (shapes, types,
// parameters), the buffers it reads and writes, the launches it takes (binary, tensor views,
// index space, scalar arguments), its CPU reference and the tolerance its results are held to
// (docs/tpc/kernels.md).
// A plan is plain data: the functional runner (functional.h), the chip launcher and
// `podsim kernel` all run the same plans.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "hw/tpc/executor.h"
#include "hw/tpc/isa.h"

namespace podsim::tpc {

struct KernelBinaryEntry {
  const char* key;  // "add.bf16", "cast.f32.bf16"
  Generation generation;
  const std::uint8_t* data;
  std::size_t size;
};

// The binary of a variant, scheduled for `generation`'s cores (the library holds every variant
// for every generation); throws std::invalid_argument naming the key when there is none.
std::vector<std::uint8_t> kernel_binary(const std::string& key, Generation generation);
std::vector<std::string> kernel_binary_keys();

// How a test or `podsim kernel` fills an input buffer.
struct Fill {
  enum Kind { kUniform, kPositive, kIntegers } kind = kUniform;
  double lo = -2.0,
         hi = 2.0;  // uniform: [lo, hi); positive: [lo, hi) with lo > 0; integers: [lo, hi)
};

struct BufferSpec {
  enum class Role { kInput, kOutput, kInOut, kScratch };
  std::string name;
  Dtype dtype = Dtype::kF32;
  std::vector<std::uint32_t> dims;  // dimension 0 fastest
  Role role = Role::kInput;
  Fill fill;
  std::uint64_t elements() const;
  std::uint64_t bytes() const;
};

// A tensor a launch sees: a view of a buffer (sizes and strides in elements).
struct TensorView {
  int buffer = -1;
  Dtype dtype = Dtype::kF32;
  std::vector<std::uint32_t> dims;
  std::vector<std::uint64_t> strides;
  std::uint32_t padding = 0;  // element bits read outside the tensor
};

struct LaunchSpec {
  std::string binary;  // a kernel_binary key
  std::array<std::optional<TensorView>, kMaxTensors> tensors{};
  Coord index_space{1, 1, 1, 1, 1};  // points along each dimension
  std::array<std::uint32_t, 32> srf{};
  // Elements of each tensor one index-space point advances along each of its dimensions, when
  // the kernel's accesses are a translation of the index (tile reuse may then move a recorded
  // tile); empty when they are not (a gather).
  std::optional<std::array<Coord, kMaxTensors>> access_scale;
};

struct Tolerance {
  double abs = 0, rel = 0;  // |got - want| <= abs + rel * |want|
};

struct KernelRequest {
  std::string kernel;
  Dtype dtype = Dtype::kF32;
  std::optional<Dtype> to;           // cast's destination type
  std::vector<std::uint32_t> shape;  // the main tensor's sizes, dimension 0 fastest
  std::map<std::string, double> params;
};

struct KernelPlan {
  KernelRequest request;
  std::vector<BufferSpec> buffers;
  std::vector<LaunchSpec> launches;
  std::map<int, Tolerance> tolerance;  // per output (or in-out) buffer
  double flops = 0;                    // arithmetic the operation needs (for FLOP/s)
  double min_bytes = 0;                // bytes it must move at least (for the roofline)
};

struct KernelInfo {
  std::string name;
  std::string summary;
  std::vector<Dtype> dtypes;
  std::string shape_help;           // what the shape means
  std::vector<std::string> params;  // parameter names it takes, with their defaults in the help
};

const std::vector<KernelInfo>& kernel_infos();

// Throws std::invalid_argument naming what is wrong: an unknown kernel (listing the known ones),
// a type it does not take, a shape of the wrong rank or size, an unknown or bad parameter.
KernelPlan plan_kernel(const KernelRequest& request);

// The CPU reference: fills every output and in-out buffer from the inputs (in-out buffers hold
// their values from before the operation on entry), in double precision, rounded to the buffers'
// types.
void run_reference(const KernelPlan& plan, std::vector<std::vector<std::uint8_t>>& buffers);

// An index space split into contiguous slices along its outermost dimension longer than one,
// one per core (fewer when there are fewer points than cores).
struct Slice {
  Coord start{}, end{};
};
std::vector<Slice> partition(const Coord& space, int cores);
// The dimension partition() splits: the outermost longer than one (0 when none is).
int partition_dim(const Coord& space);
// Points [begin, end) of that dimension alone, split as partition() splits the whole (the graph
// compiler's pipelined slices of a launch).
std::vector<Slice> partition(const Coord& space, int cores, std::int32_t begin, std::int32_t end);

// Dropout's draws (dropout.tpcs), for references of layers that drop: whether element `element`
// of a tensor of a two-byte type is kept by the draw with `seed` and a 16-bit keep threshold.
// Element e draws half e % 2 of the 32-bit state (e / 2) kDropoutCounterStep +
// dropout_seed_word(seed) after two steps of the TPC's generator; it is kept when that half is
// below `threshold`.
constexpr std::uint32_t kDropoutCounterStep = 0x9E3779B1u;
bool dropout_keeps(std::uint32_t seed, std::uint64_t element, std::uint32_t threshold);
// The word the kernel adds to its counters for `seed` (its scalar argument s2): the seed mixed.
std::uint32_t dropout_seed_word(std::uint32_t seed);
// The threshold for dropping with probability p (0 < p < 1): (1 - p) 2^16 rounded, in 1..65535,
// so that a draw is kept with probability threshold / 2^16.
std::uint32_t dropout_threshold(double p);

// The tensor descriptor of a view once its buffer sits at `base`.
TensorDescriptor descriptor(const TensorView& view, std::uint64_t base);

// Deterministic contents for every input and in-out buffer from `seed` (Fill of each buffer).
std::vector<std::vector<std::uint8_t>> make_buffers(const KernelPlan& plan, std::uint64_t seed);

// Compares an output with the reference; returns a description of the worst element beyond the
// tolerance, or nullopt.
std::optional<std::string> compare_buffer(const KernelPlan& plan, int buffer,
                                          const std::vector<std::uint8_t>& got,
                                          const std::vector<std::uint8_t>& want);

}  // namespace podsim::tpc
