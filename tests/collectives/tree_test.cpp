// The double binary tree's shape: both trees span every rank from the root, and no rank but the
// root is an inner node of both.
#include "collectives/tree.h"

#include <gtest/gtest.h>

namespace podsim::collectives {
namespace {

// Depth of every rank below the root, or -1 where the parent links do not reach the root.
int depth(const BinaryTree& tree, int rank) {
  int d = 0;
  for (int r = rank; tree.parent[static_cast<std::size_t>(r)] >= 0; ++d) {
    r = tree.parent[static_cast<std::size_t>(r)];
    if (d > static_cast<int>(tree.parent.size())) return -1;
  }
  return d;
}

TEST(DoubleTree, BothTreesSpanEveryRankAndShareNoInnerNodeButTheRoot) {
  for (int n = 1; n <= 40; ++n) {
    for (int root : {0, n / 2, n - 1}) {
      const BinaryTree a = double_tree(n, root, 0), b = double_tree(n, root, 1);
      for (int r = 0; r < n; ++r) {
        for (const BinaryTree* t : {&a, &b}) {
          EXPECT_EQ(t->parent[static_cast<std::size_t>(r)] < 0, r == root) << n << " " << r;
          EXPECT_LE(t->children[static_cast<std::size_t>(r)].size(), 2u);
          for (int child : t->children[static_cast<std::size_t>(r)]) {
            EXPECT_EQ(t->parent[static_cast<std::size_t>(child)], r);
          }
          const int d = depth(*t, r);
          EXPECT_GE(d, 0);
          int log2 = 0;
          while ((1 << log2) < n) ++log2;
          EXPECT_LE(d, log2 + 1) << "ranks " << n << " rank " << r;
        }
        if (r == root) continue;
        const bool inner_a = !a.children[static_cast<std::size_t>(r)].empty();
        const bool inner_b = !b.children[static_cast<std::size_t>(r)].empty();
        EXPECT_FALSE(inner_a && inner_b) << "ranks " << n << " rank " << r;
      }
    }
  }
}

TEST(DoubleTree, EightRanksAsDocumented) {
  // Positions: 0 -> 4; 4 -> 2, 6; 2 -> 1, 3; 6 -> 5, 7.
  const BinaryTree a = double_tree(8, 0, 0);
  EXPECT_EQ(a.children[0], (std::vector<int>{4}));
  EXPECT_EQ(a.children[4], (std::vector<int>{2, 6}));
  EXPECT_EQ(a.children[6], (std::vector<int>{5, 7}));
  // Tree 1 puts rank q at position q + 1 (rank 7 at 1): position 4 holds rank 3.
  const BinaryTree b = double_tree(8, 0, 1);
  EXPECT_EQ(b.children[0], (std::vector<int>{3}));
  EXPECT_EQ(b.children[3], (std::vector<int>{1, 5}));
}

}  // namespace
}  // namespace podsim::collectives
