#include "collectives/reference.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "collectives/pipeline.h"
#include "collectives/schedule.h"
#include "collectives/tree.h"
#include "core/random.h"

namespace podsim::collectives {

namespace {

using Sources = std::vector<const Bytes*>;

// Host memory a check may hold for its windows at once: small beside any run that needs
// checking, large enough that each window's copies cost little next to its work, and small
// enough that at many ranks each window (16 KiB at 128 ranks of fp16) is reused from the
// allocator's thread cache rather than mapped, faulted and zeroed afresh.
constexpr std::uint64_t kCheckBudget = 4ull << 20;
constexpr std::uint64_t kMinWindow = 1024;  // elements

std::uint64_t input_elements(const Spec& spec, int ranks) {
  return spec.op == Op::kAllGather ? spec.count / static_cast<std::uint64_t>(ranks) : spec.count;
}

// Copies a reduction's window holds at most: every rank's input, a partial per box or per
// folded pair, the expected result and what the chip holds.
std::uint64_t window_copies(int ranks) { return 2 * static_cast<std::uint64_t>(ranks) + 3; }

std::uint64_t window_elements(const Spec& spec, int ranks) {
  return std::max(kMinWindow, kCheckBudget / (core::size_of(spec.type) * window_copies(ranks)));
}

// Segment s of n: offset and length in elements, as the algorithms cut the vector.
std::pair<std::uint64_t, std::uint64_t> segment(std::uint64_t count, int n, int s) {
  return part_of(count, static_cast<std::uint64_t>(n), static_cast<std::uint64_t>(s));
}

// Elements [begin, end) of the vector; every vector below holds this window only.
struct Window {
  std::uint64_t begin = 0, end = 0;
  std::size_t element = 0;
  std::uint64_t size() const { return end - begin; }
  Bytes zeros() const { return Bytes(size() * element); }
};

std::vector<Bytes> window_inputs(const InputPattern& inputs, const Window& w) {
  std::vector<Bytes> out;
  for (int r = 0; r < inputs.ranks(); ++r) out.push_back(inputs.window(r, w.begin, w.size()));
  return out;
}

Sources pointers(const std::vector<Bytes>& vectors) {
  Sources out;
  for (const Bytes& v : vectors) out.push_back(&v);
  return out;
}

// `sources` in order starting at `start`, wrapping around.
Sources from(const Sources& sources, int start) {
  Sources order;
  const int n = static_cast<int>(sources.size());
  for (int k = 0; k < n; ++k) order.push_back(sources[static_cast<std::size_t>((start + k) % n)]);
  return order;
}

// The part of elements [offset, offset + length) inside the window, combined over `sources` in
// the order given, rounding at each step as the engine does, written at the same place of `out`.
void combine_into(const Spec& spec, const Window& w, const Sources& sources, std::uint64_t offset,
                  std::uint64_t length, Bytes& out) {
  const std::uint64_t lo = std::max(offset, w.begin), hi = std::min(offset + length, w.end);
  if (lo >= hi) return;
  const std::size_t at = (lo - w.begin) * w.element;
  const std::uint64_t n = hi - lo;
  std::memcpy(out.data() + at, sources.front()->data() + at, n * w.element);
  for (std::size_t i = 1; i < sources.size(); ++i) {
    core::reduce_into(spec.type, spec.reduce, out.data() + at, sources[i]->data() + at, n);
  }
}

// Segment s reduced over every rank in rank order around the ring, starting after its owner
// (ring: x[s+1], x[s+2], ... x[s]) or at it (mesh: x[s], x[s+1], ... x[s-1]).
void reduce_segment_into(const Spec& spec, Algorithm algorithm, const Window& w,
                         const Sources& inputs, int s, Bytes& out) {
  const int n = static_cast<int>(inputs.size());
  const auto [offset, length] = segment(spec.count, n, s);
  const int start = algorithm == Algorithm::kMesh ? s : s + 1;
  combine_into(spec, w, from(inputs, start % n), offset, length, out);
}

Bytes reduce_halving_doubling(const Spec& spec, const Window& w, const Sources& inputs);

// Hierarchical all-reduce, piece by piece: in each piece, each box's ranks combined in mesh
// order per local segment, then each local segment's lane slices combined across boxes in ring
// order, or in halving-doubling order when the boxes run that.
Bytes reduce_hierarchical(const Spec& spec, const Hierarchy& h, const Window& w,
                          const Sources& inputs) {
  if (spec.across == Algorithm::kAuto) {
    throw std::invalid_argument(
        "hierarchical reference: the phase across the boxes is not decided (with_across)");
  }
  Bytes out = w.zeros();
  for (const auto& [piece, count] :
       cut_pieces(spec.count, static_cast<std::uint64_t>(h.per_box), pipeline_depth(spec))) {
    if (piece >= w.end || piece + count <= w.begin) continue;
    const std::uint64_t part = count / static_cast<std::uint64_t>(h.per_box);
    std::vector<Bytes> boxes;
    for (int b = 0; b < h.boxes; ++b) {
      const auto first = inputs.begin() + b * h.per_box;
      const Sources local(first, first + h.per_box);
      Bytes partial = w.zeros();
      for (int j = 0; j < h.per_box; ++j) {
        combine_into(spec, w, from(local, j), piece + j * part, part, partial);
      }
      boxes.push_back(std::move(partial));
    }
    const Sources across = pointers(boxes);
    if (spec.across == Algorithm::kHalvingDoubling) {  // the same order for every element
      const Bytes all = reduce_halving_doubling(spec, w, across);
      const std::uint64_t lo = std::max(piece, w.begin), hi = std::min(piece + count, w.end);
      std::copy(all.begin() + static_cast<std::ptrdiff_t>((lo - w.begin) * w.element),
                all.begin() + static_cast<std::ptrdiff_t>((hi - w.begin) * w.element),
                out.begin() + static_cast<std::ptrdiff_t>((lo - w.begin) * w.element));
      continue;
    }
    for (int j = 0; j < h.per_box; ++j) {
      for (int lane = 0; lane < h.lanes; ++lane) {
        const auto [lane_offset, lane_length] =
            part_of(part, static_cast<std::uint64_t>(h.lanes), lane);
        for (int s = 0; s < h.boxes; ++s) {
          const auto [offset, length] = segment(lane_length, h.boxes, s);
          combine_into(spec, w, from(across, (s + 1) % h.boxes),
                       piece + j * part + lane_offset + offset, length, out);
        }
      }
    }
  }
  return out;
}

// Ring all-reduce over `spec.rings` rings: ring i reduces slice i of the vector in ring order,
// every second ring running backwards (ring position p is rank (n - p) mod n there).
Bytes reduce_rings(const Spec& spec, const Window& w, const Sources& inputs) {
  const int n = static_cast<int>(inputs.size());
  Bytes out = w.zeros();
  for (int ring = 0; ring < spec.rings; ++ring) {
    const auto [slice_at, slice] = part_of(spec.count, static_cast<std::uint64_t>(spec.rings),
                                           static_cast<std::uint64_t>(ring));
    Sources positional;
    for (int p = 0; p < n; ++p) {
      positional.push_back(inputs[static_cast<std::size_t>(ring % 2 ? (n - p) % n : p)]);
    }
    for (int s = 0; s < n; ++s) {
      const auto [offset, length] = segment(slice, n, s);
      combine_into(spec, w, from(positional, (s + 1) % n), slice_at + offset, length, out);
    }
  }
  return out;
}

// Rank `rank`'s part of a reduce-scatter over `spec.rings` rings: ring i reduces slice i of it
// in ring order starting after the rank's position, every second ring running backwards.
Bytes reduce_scatter_rings(const Spec& spec, const Window& w, const Sources& inputs, int rank) {
  const int n = static_cast<int>(inputs.size());
  const auto [part_at, part] = segment(spec.count, n, rank);
  Bytes out = w.zeros();
  for (int ring = 0; ring < spec.rings; ++ring) {
    const auto [slice_at, slice] =
        part_of(part, static_cast<std::uint64_t>(spec.rings), static_cast<std::uint64_t>(ring));
    const bool backward = ring % 2 == 1;
    Sources positional;
    for (int p = 0; p < n; ++p) {
      positional.push_back(inputs[static_cast<std::size_t>(backward ? (n - p) % n : p)]);
    }
    const int position = backward ? (n - rank) % n : rank;
    combine_into(spec, w, from(positional, (position + 1) % n), part_at + slice_at, slice, out);
  }
  return out;
}

// A node's partial over window elements [lo, hi): its input, then each child's partial.
Bytes tree_partial(const Spec& spec, const BinaryTree& tree, int node, const Window& w,
                   const Sources& inputs, std::uint64_t lo, std::uint64_t hi) {
  const Bytes& own = *inputs[static_cast<std::size_t>(node)];
  Bytes acc(own.begin() + static_cast<std::ptrdiff_t>(lo * w.element),
            own.begin() + static_cast<std::ptrdiff_t>(hi * w.element));
  for (int child : tree.children[static_cast<std::size_t>(node)]) {
    const Bytes part = tree_partial(spec, tree, child, w, inputs, lo, hi);
    core::reduce_into(spec.type, spec.reduce, acc.data(), part.data(), hi - lo);
  }
  return acc;
}

// Half t of the vector reduced up tree t to the root.
Bytes reduce_tree(const Spec& spec, const Window& w, const Sources& inputs) {
  const int n = static_cast<int>(inputs.size());
  Bytes out = w.zeros();
  for (int t = 0; t < 2; ++t) {
    const auto [offset, length] = part_of(spec.count, 2, static_cast<std::uint64_t>(t));
    const std::uint64_t lo = std::max(offset, w.begin), hi = std::min(offset + length, w.end);
    if (lo >= hi) continue;
    const Bytes part = tree_partial(spec, double_tree(n, spec.root, t), spec.root, w, inputs,
                                    lo - w.begin, hi - w.begin);
    std::copy(part.begin(), part.end(),
              out.begin() + static_cast<std::ptrdiff_t>((lo - w.begin) * w.element));
  }
  return out;
}

// Folded in pairs down to a power of two of vectors, then combined in halves: y[v] op y[v + m]
// for m = p/2, p/4, ..., 1.
Bytes reduce_halving_doubling(const Spec& spec, const Window& w, const Sources& inputs) {
  const int ranks = static_cast<int>(inputs.size());
  int p = 1;
  while (p * 2 <= ranks) p *= 2;
  const int extra = ranks - p;
  std::vector<Bytes> y;
  for (int v = 0; v < p; ++v) {
    if (v >= extra) {
      y.push_back(*inputs[static_cast<std::size_t>(v + extra)]);
      continue;
    }
    Bytes folded = *inputs[static_cast<std::size_t>(2 * v + 1)];
    core::reduce_into(spec.type, spec.reduce, folded.data(),
                      inputs[static_cast<std::size_t>(2 * v)]->data(), w.size());
    y.push_back(std::move(folded));
  }
  for (int m = p / 2; m >= 1; m /= 2) {
    for (int v = 0; v < m; ++v) {
      core::reduce_into(spec.type, spec.reduce, y[static_cast<std::size_t>(v)].data(),
                        y[static_cast<std::size_t>(v + m)].data(), w.size());
    }
  }
  return y.front();
}

// The window of the vector reduced over every rank, in the order `algorithm` combines it
// (all-reduce and reduce share their orders).
Bytes reduce_all(const Spec& spec, Algorithm algorithm, const Window& w, const Sources& inputs,
                 const Hierarchy* hierarchy) {
  const int ranks = static_cast<int>(inputs.size());
  switch (algorithm) {
    case Algorithm::kHierarchical:
      if (!hierarchy) throw std::invalid_argument("hierarchical results need the box structure");
      return reduce_hierarchical(spec, *hierarchy, w, inputs);
    case Algorithm::kTree:
      return reduce_tree(spec, w, inputs);
    case Algorithm::kHalvingDoubling:
      return reduce_halving_doubling(spec, w, inputs);
    case Algorithm::kRing:
      if (spec.op == Op::kReduce) {
        Bytes out = w.zeros();
        combine_into(spec, w, from(inputs, (spec.root + 1) % ranks), 0, spec.count, out);
        return out;
      }
      return reduce_rings(spec, w, inputs);
    default:
      break;
  }
  Bytes out = w.zeros();
  for (int s = 0; s < ranks; ++s) reduce_segment_into(spec, algorithm, w, inputs, s, out);
  return out;
}

// Output elements [first, first + count) gathered from blocks of `block` elements: output block
// b is input elements [source_at(b), + block) of rank b.
template <typename SourceAt>
Bytes gather_blocks(const InputPattern& inputs, std::uint64_t block, std::uint64_t first,
                    std::uint64_t count, SourceAt source_at) {
  Bytes out;
  for (std::uint64_t at = first; at < first + count;) {
    const std::uint64_t b = at / block, within = at % block;
    const std::uint64_t length = std::min(block - within, first + count - at);
    const Bytes part = inputs.window(static_cast<int>(b), source_at(b) + within, length);
    out.insert(out.end(), part.begin(), part.end());
    at += length;
  }
  return out;
}

}  // namespace

InputPattern::InputPattern(const Spec& spec, int ranks, std::uint64_t seed)
    : type_(spec.type), ranks_(ranks), elements_(input_elements(spec, ranks)), seed_(seed) {}

Bytes InputPattern::window(int rank, std::uint64_t first, std::uint64_t count) const {
  const std::uint64_t key = core::Random::mix(seed_ ^ (static_cast<std::uint64_t>(rank) << 40));
  const float scale = type_ == core::DataType::kInt32 ? 1.0f : 1.0f / 64;
  // Each aligned group of four elements hashes its counter once (a multiply and a shift, cheaper
  // than a full mix) and takes a 16-bit quarter of it each, mapped onto 0..2000 by a
  // multiply-high. The groups are made whole and the window cut from them.
  const std::uint64_t begin = first / 4, end = (first + count + 3) / 4;
  std::vector<float> groups(4 * (end - begin));
  for (std::uint64_t g = begin; g < end; ++g) {
    std::uint64_t hash = (key + g) * 0x9e3779b97f4a7c15ull;
    hash ^= hash >> 29;
    float* out = groups.data() + 4 * (g - begin);
    for (int q = 0; q < 4; ++q) {
      const auto draw = static_cast<std::int64_t>((((hash >> (16 * q)) & 0xffff) * 2001) >> 16);
      out[q] = static_cast<float>(draw - 1000) * scale;  // exact: at most 11 bits
    }
  }
  const float* values = groups.data() + (first - 4 * begin);
  Bytes data(count * core::size_of(type_));
  core::store_floats(type_, values, count, data.data());
  return data;
}

bool has_result(const Spec& spec, int rank) { return spec.op != Op::kReduce || rank == spec.root; }

Bytes expected_output(const Spec& spec, Algorithm algorithm, const InputPattern& inputs, int rank,
                      std::uint64_t first, std::uint64_t count, const Hierarchy* hierarchy) {
  const std::size_t element = core::size_of(spec.type);
  const int ranks = inputs.ranks();
  switch (spec.op) {
    case Op::kAllReduce:
    case Op::kReduce: {
      const Window w{first, first + count, element};
      const auto vectors = window_inputs(inputs, w);
      return reduce_all(spec, algorithm, w, pointers(vectors), hierarchy);
    }
    case Op::kReduceScatter: {
      const std::uint64_t at = segment(spec.count, ranks, rank).first + first;
      const Window w{at, at + count, element};
      const auto vectors = window_inputs(inputs, w);
      if (algorithm == Algorithm::kRing && spec.rings > 1) {
        return reduce_scatter_rings(spec, w, pointers(vectors), rank);
      }
      Bytes out = w.zeros();
      reduce_segment_into(spec, algorithm, w, pointers(vectors), rank, out);
      return out;
    }
    case Op::kAllGather:
      return gather_blocks(inputs, inputs.elements(), first, count,
                           [](std::uint64_t) { return std::uint64_t{0}; });
    case Op::kBroadcast:
      return inputs.window(spec.root, first, count);
    case Op::kAllToAll: {
      // Block j of the output is block `rank` of rank j's input.
      const std::uint64_t block = spec.count / static_cast<std::uint64_t>(ranks);
      return gather_blocks(inputs, block, first, count,
                           [&](std::uint64_t) { return static_cast<std::uint64_t>(rank) * block; });
    }
    case Op::kSendRecv:
      return inputs.window((rank + ranks - 1) % ranks, first, count);
  }
  return {};
}

std::uint64_t wrong_elements(core::DataType type, const Bytes& got, const Bytes& want) {
  const std::size_t element = core::size_of(type);
  if (got.size() != want.size()) return std::max(got.size(), want.size()) / element;
  if (std::memcmp(got.data(), want.data(), got.size()) == 0) return 0;
  std::uint64_t wrong = 0;
  for (std::size_t i = 0; i < got.size(); i += element) {
    if (std::memcmp(got.data() + i, want.data() + i, element) != 0) ++wrong;
  }
  return wrong;
}

std::uint64_t check_bytes(const Spec& spec, int ranks) {
  return window_elements(spec, ranks) * core::size_of(spec.type) * window_copies(ranks);
}

InputPattern load_inputs(Communicator& comm, const Spec& spec, std::uint64_t seed) {
  InputPattern inputs(spec, comm.size(), seed);
  const std::size_t element = core::size_of(spec.type);
  const std::uint64_t window = window_elements(spec, comm.size());
  for (int r = 0; r < comm.size(); ++r) {
    if (!comm.model().simulates(comm.chip(r))) continue;
    const Layout l = layout(spec, comm.size(), r);
    for (std::uint64_t first = 0; first < inputs.elements(); first += window) {
      const Bytes data = inputs.window(r, first, std::min(window, inputs.elements() - first));
      comm.model()
          .chip(comm.chip(r))
          .debug_write(l.input + first * element, data.data(), data.size());
    }
  }
  return inputs;
}

std::uint64_t check_outputs(Communicator& comm, const Spec& asked, Algorithm algorithm,
                            const InputPattern& inputs) {
  const Spec spec = comm.with_across(asked);
  const auto hierarchy = comm.hierarchy();
  const Hierarchy* h = hierarchy ? &*hierarchy : nullptr;
  const std::size_t element = core::size_of(spec.type);
  const std::uint64_t window = window_elements(spec, comm.size());
  Bytes got;
  const auto wrong_in = [&](int r, std::uint64_t first, const Bytes& want) {
    got.resize(want.size());
    const Layout l = layout(spec, comm.size(), r);
    comm.model().chip(comm.chip(r)).debug_read(l.output + first * element, got.data(), got.size());
    return wrong_elements(spec.type, got, want);
  };
  std::uint64_t wrong = 0;
  if (spec.op == Op::kAllReduce) {  // one result for every rank: reduced once per window
    for (std::uint64_t first = 0; first < spec.count; first += window) {
      const Bytes want = expected_output(spec, algorithm, inputs, 0, first,
                                         std::min(window, spec.count - first), h);
      for (int r = 0; r < comm.size(); ++r) {
        if (comm.model().simulates(comm.chip(r))) wrong += wrong_in(r, first, want);
      }
    }
    return wrong;
  }
  for (int r = 0; r < comm.size(); ++r) {
    if (!has_result(spec, r) || !comm.model().simulates(comm.chip(r))) continue;
    const std::uint64_t elements = layout(spec, comm.size(), r).output_bytes / element;
    for (std::uint64_t first = 0; first < elements; first += window) {
      const std::uint64_t count = std::min(window, elements - first);
      wrong += wrong_in(r, first, expected_output(spec, algorithm, inputs, r, first, count, h));
    }
  }
  return wrong;
}

}  // namespace podsim::collectives
