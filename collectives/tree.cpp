#include "collectives/tree.h"

#include <algorithm>

#include "collectives/schedule.h"

namespace podsim::collectives {

namespace {

// Children of position `x` in a tree over positions 0..n-1 (see tree.h).
std::vector<int> children_at(int x, int n) {
  if (n < 2) return {};
  if (x == 0) {
    int top = 1;
    while (top * 2 <= n - 1) top *= 2;
    return {top};
  }
  const int b = x & -x;
  if (b == 1) return {};
  std::vector<int> out{x - b / 2};
  int c = b / 2;
  while (c >= 1 && x + c >= n) c /= 2;
  if (c >= 1) out.push_back(x + c);
  return out;
}

class TreeBuilder : ProgramBuilder {
 public:
  TreeBuilder(const Spec& spec, int n, int rank, int lanes, const QpOf& qp)
      : ProgramBuilder(spec, n, rank, lanes, qp) {
    const std::uint64_t half = part_of(spec.count, 2, 0).second;
    chunks_ = std::max<std::uint64_t>(1, (half + chunk_ - 1) / chunk_);
    program_.signals = static_cast<std::uint32_t>(2 * kKinds * chunks_);
    program_.streams.resize(2 * kStreams + 1);
  }

  Program build() {
    for (int t = 0; t < 2; ++t) {
      const BinaryTree tree = double_tree(n_, spec_.root, t);
      for (std::uint64_t c = 0; c < chunks_; ++c) {
        const Chunk chunk = chunk_of(t, c);
        if (chunk.length == 0) continue;
        if (spec_.op != Op::kBroadcast) up(tree, chunk);
        if (spec_.op != Op::kReduce) down(tree, chunk);
      }
    }
    if (spec_.op == Op::kBroadcast && r_ == spec_.root && !spec_.in_place) {
      add(2 * kStreams,
          engine_command(spec_, Command::Kind::kCopy, l_.output, l_.input, 0, spec_.count));
    }
    return std::move(program_);
  }

 private:
  enum SignalKind { kFromLeft, kFromRight, kResultArrived, kReduced, kKinds };
  enum StreamKind { kReduceStream, kUpStream, kDownStream, kStreams };
  struct Chunk {
    int tree = 0;
    std::uint64_t index = 0, offset = 0, length = 0;  // elements
  };

  Chunk chunk_of(int t, std::uint64_t c) const {
    const auto [half_at, half] = part_of(spec_.count, 2, static_cast<std::uint64_t>(t));
    const std::uint64_t begin = std::min(half, c * chunk_);
    return {t, c, half_at + begin, std::min(chunk_, half - begin)};
  }
  std::uint32_t signal(const Chunk& k, SignalKind kind) const {
    return static_cast<std::uint32_t>(
        (static_cast<std::uint64_t>(k.tree) * kKinds + kind) * chunks_ + k.index);
  }
  void add(std::size_t stream, const Command& c) { program_.streams[stream].push_back(c); }
  std::size_t stream(const Chunk& k, StreamKind kind) const {
    return static_cast<std::size_t>(k.tree * kStreams + kind);
  }
  std::uint64_t at(std::uint64_t base, const Chunk& k) const { return base + k.offset * element_; }
  Command write(int to, std::uint64_t src, std::uint64_t dst, const Chunk& k,
                std::uint32_t remote_signal) const {
    return write_command(qp_(to, k.tree % lanes_), at(src, k), at(dst, k), k.length * element_,
                         remote_signal);
  }
  // Where a child's partial lands, by its place among its parent's children.
  std::uint64_t landing(int place) const {
    return place == 0 ? l_.arriving_partials : l_.arriving_results;
  }

  // Combines the own input with the children's partials as they arrive, then sends the result
  // to the parent (or keeps it, at the root).
  void up(const BinaryTree& tree, const Chunk& k) {
    const auto& kids = tree.children[static_cast<std::size_t>(r_)];
    const int parent = tree.parent[static_cast<std::size_t>(r_)];
    const std::uint64_t acc =
        kids.empty() ? l_.input
                     : (parent < 0 || spec_.op == Op::kAllReduce ? l_.output : l_.partials);
    for (std::size_t i = 0; i < kids.size(); ++i) {
      Command reduce =
          engine_command(spec_, Command::Kind::kReduce, at(acc, k), at(i == 0 ? l_.input : acc, k),
                         at(landing(int(i)), k), k.length);
      after(reduce, signal(k, i == 0 ? kFromLeft : kFromRight));
      if (i + 1 == kids.size()) reduce.done = signal(k, kReduced);
      add(stream(k, kReduceStream), reduce);
    }
    if (parent < 0) return;
    const auto& siblings = tree.children[static_cast<std::size_t>(parent)];
    const int place = siblings.front() == r_ ? 0 : 1;
    Command w =
        write(parent, acc, landing(place), k, signal(k, place == 0 ? kFromLeft : kFromRight));
    if (!kids.empty()) after(w, signal(k, kReduced));
    add(stream(k, kUpStream), w);
  }

  // The result passes from the root down into every rank's output.
  void down(const BinaryTree& tree, const Chunk& k) {
    const auto& kids = tree.children[static_cast<std::size_t>(r_)];
    const bool root = tree.parent[static_cast<std::size_t>(r_)] < 0;
    const std::uint64_t src = root && spec_.op == Op::kBroadcast ? l_.input : l_.output;
    if (!root && kids.empty()) {
      add(stream(k, kDownStream), wait_command(signal(k, kResultArrived), 1));
      return;
    }
    for (int child : kids) {
      Command w = write(child, src, l_.output, k, signal(k, kResultArrived));
      if (!root) after(w, signal(k, kResultArrived));
      if (root && spec_.op == Op::kAllReduce) after(w, signal(k, kReduced));
      add(stream(k, kDownStream), w);
    }
  }

  std::uint64_t chunks_ = 1;
};

}  // namespace

BinaryTree double_tree(int ranks, int root, int which) {
  const int n = ranks;
  const auto rank_at = [n, root, which](int position) {
    int q = position;
    if (which == 1 && position > 0) q = position == 1 ? n - 1 : position - 1;
    return (q + root) % n;
  };
  BinaryTree tree;
  tree.parent.assign(static_cast<std::size_t>(n), -1);
  tree.children.resize(static_cast<std::size_t>(n));
  for (int x = 0; x < n; ++x) {
    for (int child : children_at(x, n)) {
      tree.children[static_cast<std::size_t>(rank_at(x))].push_back(rank_at(child));
      tree.parent[static_cast<std::size_t>(rank_at(child))] = rank_at(x);
    }
  }
  return tree;
}

Program tree_program(const Spec& spec, int ranks, int rank, int lanes,
                     const std::function<std::uint32_t(int, int)>& qp) {
  return TreeBuilder(spec, ranks, rank, lanes, qp).build();
}

}  // namespace podsim::collectives
