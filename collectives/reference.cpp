#include "collectives/reference.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "collectives/pipeline.h"
#include "collectives/schedule.h"
#include "collectives/tree.h"
#include "hw/core/random.h"

namespace podsim::collectives {

namespace {

std::uint64_t input_elements(const Spec& spec, int ranks) {
  return spec.op == Op::kAllGather ? spec.count / static_cast<std::uint64_t>(ranks) : spec.count;
}

// Segment s of n: offset and length in elements, as the algorithms cut the vector.
std::pair<std::uint64_t, std::uint64_t> segment(std::uint64_t count, int n, int s) {
  return part_of(count, static_cast<std::uint64_t>(n), static_cast<std::uint64_t>(s));
}

// Segment s reduced over every rank in rank order around the ring, starting after its owner
// (ring: x[s+1], x[s+2], ... x[s]) or at it (mesh: x[s], x[s+1], ... x[s-1]).
Bytes reduce_segment(const Spec& spec, Algorithm algorithm, int n, int s,
                     const std::vector<Bytes>& inputs) {
  const std::size_t element = core::size_of(spec.type);
  const auto [offset, length] = segment(spec.count, n, s);
  const int start = algorithm == Algorithm::kMesh ? s : s + 1;
  const auto first = static_cast<std::size_t>(start % n);
  Bytes acc(inputs[first].begin() + static_cast<std::ptrdiff_t>(offset * element),
            inputs[first].begin() + static_cast<std::ptrdiff_t>((offset + length) * element));
  for (int step = 1; step < n; ++step) {
    const Bytes& x = inputs[static_cast<std::size_t>((start + step) % n)];
    core::reduce_into(spec.type, spec.reduce, acc.data(), x.data() + offset * element, length);
  }
  return acc;
}

// Elements [offset, offset + length) combined over `sources` in the order given, rounding at
// each step as the engine does.
Bytes combine(const Spec& spec, const std::vector<const Bytes*>& sources, std::uint64_t offset,
              std::uint64_t length) {
  const std::size_t element = core::size_of(spec.type);
  const Bytes& first = *sources.front();
  Bytes acc(first.begin() + static_cast<std::ptrdiff_t>(offset * element),
            first.begin() + static_cast<std::ptrdiff_t>((offset + length) * element));
  for (std::size_t i = 1; i < sources.size(); ++i) {
    core::reduce_into(spec.type, spec.reduce, acc.data(), sources[i]->data() + offset * element,
                      length);
  }
  return acc;
}

// `inputs` in rank order starting at `start`, wrapping around.
std::vector<const Bytes*> from(const std::vector<const Bytes*>& inputs, int start) {
  std::vector<const Bytes*> order;
  const int n = static_cast<int>(inputs.size());
  for (int k = 0; k < n; ++k) order.push_back(inputs[static_cast<std::size_t>((start + k) % n)]);
  return order;
}

void put(Bytes& out, const Bytes& piece, std::uint64_t offset, std::size_t element) {
  std::copy(piece.begin(), piece.end(),
            out.begin() + static_cast<std::ptrdiff_t>(offset * element));
}

// Hierarchical all-reduce, piece by piece: in each piece, each box's ranks combined in mesh
// order per local segment, then each local segment's lane slices combined across boxes in ring
// order.
Bytes reduce_hierarchical(const Spec& spec, const Hierarchy& h, const std::vector<Bytes>& inputs) {
  const std::size_t element = core::size_of(spec.type);
  Bytes out(spec.count * element);
  for (const auto& [piece, count] :
       cut_pieces(spec.count, static_cast<std::uint64_t>(h.per_box), pipeline_depth(spec))) {
    const std::uint64_t part = count / static_cast<std::uint64_t>(h.per_box);
    std::vector<Bytes> boxes;
    for (int b = 0; b < h.boxes; ++b) {
      std::vector<const Bytes*> local;
      for (int j = 0; j < h.per_box; ++j)
        local.push_back(&inputs[static_cast<std::size_t>(b * h.per_box + j)]);
      Bytes partial(spec.count * element);
      for (int j = 0; j < h.per_box; ++j) {
        const std::uint64_t at = piece + j * part;
        put(partial, combine(spec, from(local, j), at, part), at, element);
      }
      boxes.push_back(std::move(partial));
    }
    std::vector<const Bytes*> across;
    for (const Bytes& b : boxes) across.push_back(&b);
    for (int j = 0; j < h.per_box; ++j) {
      for (int lane = 0; lane < h.lanes; ++lane) {
        const auto [lane_offset, lane_length] =
            part_of(part, static_cast<std::uint64_t>(h.lanes), lane);
        for (int s = 0; s < h.boxes; ++s) {
          const auto [offset, length] = segment(lane_length, h.boxes, s);
          const std::uint64_t at = piece + j * part + lane_offset + offset;
          put(out, combine(spec, from(across, (s + 1) % h.boxes), at, length), at, element);
        }
      }
    }
  }
  return out;
}

// Ring all-reduce over `spec.rings` rings: ring i reduces slice i of the vector in ring order,
// every second ring running backwards (ring position p is rank (n - p) mod n there).
Bytes reduce_rings(const Spec& spec, int ranks, const std::vector<Bytes>& inputs) {
  const std::size_t element = core::size_of(spec.type);
  Bytes out(spec.count * element);
  for (int ring = 0; ring < spec.rings; ++ring) {
    const auto [slice_at, slice] = part_of(spec.count, static_cast<std::uint64_t>(spec.rings),
                                           static_cast<std::uint64_t>(ring));
    std::vector<Bytes> positional;
    for (int p = 0; p < ranks; ++p) {
      const Bytes& in = inputs[static_cast<std::size_t>(ring % 2 ? (ranks - p) % ranks : p)];
      positional.emplace_back(
          in.begin() + static_cast<std::ptrdiff_t>(slice_at * element),
          in.begin() + static_cast<std::ptrdiff_t>((slice_at + slice) * element));
    }
    Spec sub = spec;
    sub.count = slice;
    for (int s = 0; s < ranks; ++s) {
      const auto [offset, length] = segment(slice, ranks, s);
      put(out, reduce_segment(sub, Algorithm::kRing, ranks, s, positional), slice_at + offset,
          element);
    }
  }
  return out;
}

// A node's partial over [offset, offset + length): its input, then each child's partial.
Bytes tree_partial(const Spec& spec, const BinaryTree& tree, int node,
                   const std::vector<Bytes>& inputs, std::uint64_t offset, std::uint64_t length) {
  const std::size_t element = core::size_of(spec.type);
  const Bytes& own = inputs[static_cast<std::size_t>(node)];
  Bytes acc(own.begin() + static_cast<std::ptrdiff_t>(offset * element),
            own.begin() + static_cast<std::ptrdiff_t>((offset + length) * element));
  for (int child : tree.children[static_cast<std::size_t>(node)]) {
    const Bytes part = tree_partial(spec, tree, child, inputs, offset, length);
    core::reduce_into(spec.type, spec.reduce, acc.data(), part.data(), length);
  }
  return acc;
}

// Half t of the vector reduced up tree t to the root.
Bytes reduce_tree(const Spec& spec, int ranks, const std::vector<Bytes>& inputs) {
  const std::size_t element = core::size_of(spec.type);
  Bytes out(spec.count * element);
  for (int t = 0; t < 2; ++t) {
    const auto [offset, length] = part_of(spec.count, 2, static_cast<std::uint64_t>(t));
    put(out,
        tree_partial(spec, double_tree(ranks, spec.root, t), spec.root, inputs, offset, length),
        offset, element);
  }
  return out;
}

// Folded in pairs down to a power of two of vectors, then combined in halves: y[v] op y[v + m]
// for m = p/2, p/4, ..., 1.
Bytes reduce_halving_doubling(const Spec& spec, int ranks, const std::vector<Bytes>& inputs) {
  int p = 1;
  while (p * 2 <= ranks) p *= 2;
  const int extra = ranks - p;
  std::vector<Bytes> y;
  for (int v = 0; v < p; ++v) {
    if (v >= extra) {
      y.push_back(inputs[static_cast<std::size_t>(v + extra)]);
      continue;
    }
    Bytes folded = inputs[static_cast<std::size_t>(2 * v + 1)];
    core::reduce_into(spec.type, spec.reduce, folded.data(),
                      inputs[static_cast<std::size_t>(2 * v)].data(), spec.count);
    y.push_back(std::move(folded));
  }
  for (int m = p / 2; m >= 1; m /= 2) {
    for (int v = 0; v < m; ++v) {
      core::reduce_into(spec.type, spec.reduce, y[static_cast<std::size_t>(v)].data(),
                        y[static_cast<std::size_t>(v + m)].data(), spec.count);
    }
  }
  return y.front();
}

// The whole vector reduced over every rank, in the order `algorithm` combines it (all-reduce and
// reduce share their orders).
Bytes reduce_all(const Spec& spec, Algorithm algorithm, int ranks, const std::vector<Bytes>& inputs,
                 const Hierarchy* hierarchy) {
  switch (algorithm) {
    case Algorithm::kHierarchical:
      if (!hierarchy) throw std::invalid_argument("hierarchical results need the box structure");
      return reduce_hierarchical(spec, *hierarchy, inputs);
    case Algorithm::kTree:
      return reduce_tree(spec, ranks, inputs);
    case Algorithm::kHalvingDoubling:
      return reduce_halving_doubling(spec, ranks, inputs);
    case Algorithm::kRing:
      if (spec.op == Op::kReduce) {
        std::vector<const Bytes*> all;
        for (const Bytes& in : inputs) all.push_back(&in);
        return combine(spec, from(all, (spec.root + 1) % ranks), 0, spec.count);
      }
      return reduce_rings(spec, ranks, inputs);
    default:
      break;
  }
  Bytes out;
  for (int s = 0; s < ranks; ++s) {
    const Bytes seg = reduce_segment(spec, algorithm, ranks, s, inputs);
    out.insert(out.end(), seg.begin(), seg.end());
  }
  return out;
}

}  // namespace

Bytes make_input(const Spec& spec, int ranks, int rank, std::uint64_t seed) {
  const std::uint64_t count = input_elements(spec, ranks);
  Bytes data(count * core::size_of(spec.type));
  core::Random random(core::Random::mix(seed ^ (static_cast<std::uint64_t>(rank) << 40)));
  for (std::uint64_t i = 0; i < count; ++i) {
    const double v = static_cast<double>(static_cast<std::int64_t>(random.next() % 2001) - 1000);
    core::set_element(spec.type, data.data(), i, spec.type == core::DataType::kInt32 ? v : v / 64);
  }
  return data;
}

bool has_result(const Spec& spec, int rank) { return spec.op != Op::kReduce || rank == spec.root; }

Bytes expected_output(const Spec& spec, Algorithm algorithm, int ranks, int rank,
                      const std::vector<Bytes>& inputs, const Hierarchy* hierarchy) {
  const std::size_t element = core::size_of(spec.type);
  const auto at = [](int i) { return static_cast<std::size_t>(i); };
  switch (spec.op) {
    case Op::kAllReduce:
    case Op::kReduce:
      return reduce_all(spec, algorithm, ranks, inputs, hierarchy);
    case Op::kReduceScatter:
      return reduce_segment(spec, algorithm, ranks, rank, inputs);
    case Op::kAllGather: {
      Bytes out;
      for (const Bytes& in : inputs) out.insert(out.end(), in.begin(), in.end());
      return out;
    }
    case Op::kBroadcast:
      return inputs[at(spec.root)];
    case Op::kAllToAll: {
      // Block j of the output is block `rank` of rank j's input.
      const std::uint64_t block = spec.count / static_cast<std::uint64_t>(ranks) * element;
      Bytes out;
      for (const Bytes& in : inputs) {
        const auto from = in.begin() + static_cast<std::ptrdiff_t>(at(rank) * block);
        out.insert(out.end(), from, from + static_cast<std::ptrdiff_t>(block));
      }
      return out;
    }
    case Op::kSendRecv:
      return inputs[at((rank + ranks - 1) % ranks)];
  }
  return {};
}

std::uint64_t wrong_elements(core::DataType type, const Bytes& got, const Bytes& want) {
  const std::size_t element = core::size_of(type);
  if (got.size() != want.size()) return std::max(got.size(), want.size()) / element;
  std::uint64_t wrong = 0;
  for (std::size_t i = 0; i < got.size(); i += element) {
    if (std::memcmp(got.data() + i, want.data() + i, element) != 0) ++wrong;
  }
  return wrong;
}

std::vector<Bytes> load_inputs(Communicator& comm, const Spec& spec, std::uint64_t seed) {
  std::vector<Bytes> inputs;
  for (int r = 0; r < comm.size(); ++r) {
    inputs.push_back(make_input(spec, comm.size(), r, seed));
    const Layout l = layout(spec, comm.size(), r);
    comm.model()
        .chip(comm.chip(r))
        .debug_write(l.input, inputs.back().data(), inputs.back().size());
  }
  return inputs;
}

std::uint64_t check_outputs(Communicator& comm, const Spec& spec, Algorithm algorithm,
                            const std::vector<Bytes>& inputs) {
  std::uint64_t wrong = 0;
  const auto hierarchy = comm.hierarchy();
  for (int r = 0; r < comm.size(); ++r) {
    if (!has_result(spec, r)) continue;
    const Layout l = layout(spec, comm.size(), r);
    Bytes got(l.output_bytes);
    comm.model().chip(comm.chip(r)).debug_read(l.output, got.data(), got.size());
    wrong += wrong_elements(spec.type, got,
                            expected_output(spec, algorithm, comm.size(), r, inputs,
                                            hierarchy ? &*hierarchy : nullptr));
  }
  return wrong;
}

}  // namespace podsim::collectives
