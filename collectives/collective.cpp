#include "collectives/collective.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace podsim::collectives {

namespace {
std::uint64_t align(std::uint64_t x) { return (x + 4095) & ~std::uint64_t{4095}; }
}  // namespace

const char* to_string(Op op) {
  switch (op) {
    case Op::kAllReduce:
      return "all_reduce";
    case Op::kReduceScatter:
      return "reduce_scatter";
    case Op::kAllGather:
      return "all_gather";
    case Op::kBroadcast:
      return "broadcast";
    case Op::kReduce:
      return "reduce";
    case Op::kAllToAll:
      return "all_to_all";
    case Op::kSendRecv:
      return "send_recv";
  }
  return "?";
}

const char* to_string(Algorithm algorithm) {
  switch (algorithm) {
    case Algorithm::kAuto:
      return "auto";
    case Algorithm::kRing:
      return "ring";
    case Algorithm::kMesh:
      return "mesh";
    case Algorithm::kHierarchical:
      return "hierarchical";
    case Algorithm::kHalvingDoubling:
      return "halving_doubling";
    case Algorithm::kTree:
      return "tree";
  }
  return "?";
}

std::optional<Op> parse_op(std::string_view name) {
  for (Op op : kOps) {
    if (name == to_string(op)) return op;
  }
  if (name == "alltoall") return Op::kAllToAll;
  if (name == "sendrecv") return Op::kSendRecv;
  return std::nullopt;
}

std::optional<Algorithm> parse_algorithm(std::string_view name) {
  if (name == "auto") return Algorithm::kAuto;
  if (name == "ring") return Algorithm::kRing;
  if (name == "mesh" || name == "direct") return Algorithm::kMesh;
  if (name == "hierarchical") return Algorithm::kHierarchical;
  if (name == "halving_doubling" || name == "hd") return Algorithm::kHalvingDoubling;
  if (name == "tree" || name == "double_binary_tree") return Algorithm::kTree;
  return std::nullopt;
}

bool supports(Algorithm algorithm, Op op) {
  switch (algorithm) {
    case Algorithm::kAuto:
      return true;
    case Algorithm::kRing:
      return op != Op::kAllToAll;
    case Algorithm::kMesh:
      return op != Op::kSendRecv;
    case Algorithm::kHierarchical:
    case Algorithm::kHalvingDoubling:
      return op == Op::kAllReduce;
    case Algorithm::kTree:
      return op == Op::kAllReduce || op == Op::kBroadcast || op == Op::kReduce;
  }
  return false;
}

bool reduces(Op op) {
  return op == Op::kAllReduce || op == Op::kReduceScatter || op == Op::kReduce;
}

bool splits_evenly(Op op) {
  return op == Op::kReduceScatter || op == Op::kAllGather || op == Op::kAllToAll;
}

std::uint64_t size_bytes(const Spec& spec) { return spec.count * core::size_of(spec.type); }

int pipeline_depth(const Spec& spec) {
  if (spec.pipeline > 0) return spec.pipeline;
  constexpr std::uint64_t kPiece = 64ull << 20;
  return static_cast<int>(std::clamp<std::uint64_t>(size_bytes(spec) / kPiece, 1, 16));
}

double bus_factor(Op op, int ranks) {
  const double n = ranks;
  switch (op) {
    case Op::kAllReduce:
      return 2 * (n - 1) / n;
    case Op::kReduceScatter:
    case Op::kAllGather:
    case Op::kAllToAll:
      return (n - 1) / n;
    case Op::kBroadcast:
    case Op::kReduce:
    case Op::kSendRecv:
      return 1;
  }
  return 1;
}

Layout layout(const Spec& spec, int ranks, int rank) {
  if (ranks < 1) throw std::invalid_argument("a collective needs at least one rank");
  const std::uint64_t element = core::size_of(spec.type);
  if (spec.root < 0 || spec.root >= ranks) {
    throw std::invalid_argument(
        fmt::format("root {} is not a rank (ranks 0..{})", spec.root, ranks - 1));
  }
  if (spec.rings < 1 || spec.pipeline < 0) {
    throw std::invalid_argument("rings must be at least 1 and the pipeline depth not negative");
  }
  if (splits_evenly(spec.op) && spec.count % static_cast<std::uint64_t>(ranks) != 0) {
    throw std::invalid_argument(fmt::format("{}: count {} is not a multiple of the {} ranks",
                                            to_string(spec.op), spec.count, ranks));
  }
  if (spec.chunk_bytes == 0 || spec.chunk_bytes % element != 0) {
    throw std::invalid_argument(fmt::format("chunk of {} bytes: must be whole {} elements",
                                            spec.chunk_bytes, core::to_string(spec.type)));
  }
  const std::uint64_t whole = spec.count * element;
  const std::uint64_t part = whole / static_cast<std::uint64_t>(ranks);
  Layout l;
  l.input_bytes = spec.op == Op::kAllGather ? part : whole;
  l.output_bytes = spec.op == Op::kReduceScatter ? part : whole;
  const std::uint64_t slot = static_cast<std::uint64_t>(rank) * part;
  if (spec.placement) {
    const auto& p = *spec.placement;
    l.input = spec.op == Op::kAllGather ? p.input + slot : p.input;
    l.output = spec.op == Op::kReduceScatter ? p.output + slot : p.output;
    l.scratch = p.scratch;
  } else if (spec.in_place) {
    const std::uint64_t larger = spec.base;
    l.input = spec.op == Op::kAllGather ? larger + slot : larger;
    l.output = spec.op == Op::kReduceScatter ? larger + slot : larger;
    l.scratch = larger + align(whole);
  } else {
    l.input = spec.base;
    l.output = l.input + align(l.input_bytes);
    l.scratch = l.output + align(l.output_bytes);
  }
  // Each region holds the larger buffer, or one piece per rank of the longest segment, for each
  // ring, with room for each ring's own regions to start aligned. (A hierarchical all-reduce
  // lays out its phases' scratch from `scratch` on; the communicator checks its extent.)
  const std::uint64_t region =
      align(whole + static_cast<std::uint64_t>(spec.rings) *
                        (static_cast<std::uint64_t>(ranks) * element + 8192));
  l.scratch_bytes = 3 * region;
  l.arriving_partials = l.scratch;
  l.arriving_results = l.scratch + region;
  l.partials = l.scratch + 2 * region;
  l.end = l.scratch + l.scratch_bytes;
  return l;
}

}  // namespace podsim::collectives
