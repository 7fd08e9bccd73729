#include "collectives/collective.h"

#include <fmt/format.h>

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
  }
  return "?";
}

std::optional<Op> parse_op(std::string_view name) {
  for (Op op : {Op::kAllReduce, Op::kReduceScatter, Op::kAllGather}) {
    if (name == to_string(op)) return op;
  }
  return std::nullopt;
}

std::optional<Algorithm> parse_algorithm(std::string_view name) {
  if (name == "auto") return Algorithm::kAuto;
  if (name == "ring") return Algorithm::kRing;
  if (name == "mesh" || name == "direct") return Algorithm::kMesh;
  if (name == "hierarchical") return Algorithm::kHierarchical;
  return std::nullopt;
}

std::uint64_t size_bytes(const Spec& spec) { return spec.count * core::size_of(spec.type); }

double bus_factor(Op op, int ranks) {
  const double n = ranks;
  switch (op) {
    case Op::kAllReduce:
      return 2 * (n - 1) / n;
    case Op::kReduceScatter:
    case Op::kAllGather:
      return (n - 1) / n;
  }
  return 1;
}

Layout layout(const Spec& spec, int ranks, int rank) {
  if (ranks < 1) throw std::invalid_argument("a collective needs at least one rank");
  const std::uint64_t element = core::size_of(spec.type);
  if (spec.op != Op::kAllReduce && spec.count % static_cast<std::uint64_t>(ranks) != 0) {
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
  // Each region holds the larger buffer, or one piece per rank of the longest segment.
  const std::uint64_t region = align(whole + static_cast<std::uint64_t>(ranks) * element);
  l.scratch_bytes = 3 * region;
  l.arriving_partials = l.scratch;
  l.arriving_results = l.scratch + region;
  l.partials = l.scratch + 2 * region;
  l.end = l.scratch + l.scratch_bytes;
  return l;
}

}  // namespace podsim::collectives
