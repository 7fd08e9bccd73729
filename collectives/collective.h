// What a collective is: the operation, the algorithm that carries it out, the element type and
// reduction, and where each rank's buffers sit in its chip's memory. Sizes follow nccl-tests:
// `count` is the elements of the larger buffer (the whole vector of an all-reduce, the input of
// a reduce-scatter, the output of an all-gather), and bus bandwidth uses nccl-tests' factors.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/numeric.h"

namespace podsim::collectives {

// kSendRecv is nccl-tests' sendrecv: every rank sends its buffer to the next rank and receives
// the previous rank's.
enum class Op : std::uint8_t {
  kAllReduce,
  kReduceScatter,
  kAllGather,
  kBroadcast,
  kReduce,
  kAllToAll,
  kSendRecv
};
inline constexpr Op kOps[] = {Op::kAllReduce, Op::kReduceScatter, Op::kAllGather, Op::kBroadcast,
                              Op::kReduce,    Op::kAllToAll,      Op::kSendRecv};
// kAuto: the communicator picks (see Communicator::resolve).
enum class Algorithm : std::uint8_t { kAuto, kRing, kMesh, kHierarchical, kHalvingDoubling, kTree };
inline constexpr Algorithm kAlgorithms[] = {Algorithm::kRing, Algorithm::kMesh,
                                            Algorithm::kHierarchical, Algorithm::kHalvingDoubling,
                                            Algorithm::kTree};

const char* to_string(Op op);
const char* to_string(Algorithm algorithm);
std::optional<Op> parse_op(std::string_view name);
std::optional<Algorithm> parse_algorithm(std::string_view name);
// Whether `algorithm` (not kAuto) carries out `op`.
bool supports(Algorithm algorithm, Op op);
// True for the operations that combine values (a reduction operator applies).
bool reduces(Op op);
// True when the count must split evenly over the ranks (one block per rank).
bool splits_evenly(Op op);

struct Spec {
  Op op = Op::kAllReduce;
  Algorithm algorithm = Algorithm::kAuto;
  core::DataType type = core::DataType::kFp32;
  core::ReduceOp reduce = core::ReduceOp::kSum;
  std::uint64_t count = 0;  // elements of the larger buffer; a multiple of the ranks except
                            // for an all-reduce
  bool in_place = false;
  std::uint64_t chunk_bytes = 1 << 20;  // pipelining unit along the ring
  std::uint64_t base = 0;               // where the collective's memory starts on every chip
  // Explicit buffers instead of `base` and `in_place`, for collectives that are phases of a
  // larger one: where the larger buffer of the input and of the output start (a reduce-scatter
  // writes its rank's slot of `output`, an all-gather reads its rank's slot of `input`, as in
  // place), and the scratch. In place when input == output.
  struct Placement {
    std::uint64_t input = 0, output = 0, scratch = 0;
  };
  std::optional<Placement> placement;
  int lane = 0;  // which direct link or scale-out rail a ring uses
  int root = 0;  // broadcast's source and reduce's destination rank
  // Ring all-reduce, reduce-scatter and all-gather: this many rings over lanes 0, 0, 1, 1, ...
  // with every second ring running backwards, so the rings use disjoint link directions; each
  // ring carries a slice of the vector (all-reduce) or of every rank's part (the others).
  int rings = 1;
  // Hierarchical all-reduce: the vector cut into this many pieces, each piece's phases started
  // as soon as the same phase of the piece before has finished, so the phases overlap. 0: by
  // size (see pipeline_depth).
  int pipeline = 0;
  // Hierarchical all-reduce: the algorithm of the phase across the boxes, kRing (a step per box,
  // chunked to overlap each step's latency) or kHalvingDoubling (log2 of the boxes steps, the
  // extra boxes folded in first), which pays far fewer latencies across many boxes; kAuto: the
  // first hierarchical tuning rule that matches says which (TuningRule::across,
  // Communicator::with_across).
  Algorithm across = Algorithm::kAuto;
  // Where reductions run: the DMA engines, or the TPCs with the kernel library's add, min and max
  // (as HCCL may), which leaves the DMA engines to copies.
  enum class ReduceEngine : std::uint8_t { kDma, kTpc };
  ReduceEngine reduce_engine = ReduceEngine::kDma;
};

// A rank's buffers, the same addresses on every rank. In place, the smaller buffer lies inside
// the larger one at the rank's slot, as NCCL defines it.
struct Layout {
  std::uint64_t input = 0, input_bytes = 0;
  std::uint64_t output = 0, output_bytes = 0;
  std::uint64_t scratch = 0, scratch_bytes = 0;
  // Scratch, each region as large as the larger buffer, at the same offsets: pieces of partial
  // results arriving from a peer, pieces of final results arriving from a peer, and this rank's
  // running partial results where the output buffer cannot hold them (reduce-scatter).
  std::uint64_t arriving_partials = 0, arriving_results = 0, partials = 0;
  std::uint64_t end = 0;  // first byte past everything
};

// Throws std::invalid_argument naming what is wrong (count not a multiple of the ranks, a
// chunk that is not whole elements, ...).
Layout layout(const Spec& spec, int ranks, int rank);

// Bytes of the larger buffer (nccl-tests' "size").
std::uint64_t size_bytes(const Spec& spec);
// The hierarchical all-reduce's pipeline depth: spec.pipeline, or when 0 one piece per 64 MiB,
// 1 to 16 pieces (sweeps on hls2-pod128: smaller pieces cost more in each phase's latency than
// the overlap gains; docs/collectives.md).
int pipeline_depth(const Spec& spec);

// nccl-tests' bus bandwidth factor: busbw = algbw x factor.
double bus_factor(Op op, int ranks);

}  // namespace podsim::collectives
