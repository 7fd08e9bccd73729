// The double binary tree (after NCCL's): two binary trees over the ranks, each carrying half of
// the vector chunk by chunk, in which every rank but the root is an inner node of at most one,
// so each rank sends and receives about as much as in one tree while the trees' depths stay
// log2(n). A reduce (and the first half of an all-reduce) combines partial results on the way
// up to the root; a broadcast (and the second half) passes the result down. Tree 0 places rank r
// at position q = (r - root) mod n, tree 1 at q = 0 for the root and q mod (n-1) + 1 otherwise.
// Over positions, 0 is the root with one child, the largest power of two below n; a position x
// with lowest set bit b > 1 has children x - b/2 and x + c, c the largest of b/2, b/4, ... with
// x + c < n; odd positions are leaves, so the inner nodes of one tree are leaves of the other.
// Reduction order (for bit-exact checks): a node's partial is ((x[node] op partial[left]) op
// partial[right]), each step rounded to the type; the result is the root's partial.
// Alpha-beta cost of an all-reduce of S bytes in chunks of C: about 2 log2(n) x (alpha + C/B)
// of pipeline fill, then 2 x S/2 / B per tree with the trees sharing each rank's links.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "collectives/collective.h"
#include "collectives/program.h"

namespace podsim::collectives {

// One of the two trees over `ranks` ranks rooted at `root`, by rank.
struct BinaryTree {
  std::vector<int> parent;                 // -1 at the root
  std::vector<std::vector<int>> children;  // left then right
};
BinaryTree double_tree(int ranks, int root, int which);

// Rank `rank`'s program; `qp(peer, lane)` gives its QP to `peer` over lane `lane` (tree i sends
// on lane i mod `lanes`).
Program tree_program(const Spec& spec, int ranks, int rank, int lanes,
                     const std::function<std::uint32_t(int peer, int lane)>& qp);

}  // namespace podsim::collectives
