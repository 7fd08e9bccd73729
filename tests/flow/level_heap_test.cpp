// The solver's queue of saturation levels: lowest level first, ties to the lower id, and entries
// moved or taken out in place, against a sorted reference over random operations.
#include "hw/flow/level_heap.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <utility>

namespace podsim::flow {
namespace {

TEST(LevelHeap, TiesGoToTheLowerId) {
  LevelHeap heap;
  heap.reset(4);
  heap.set(3, 1.0);
  heap.set(1, 1.0);
  heap.set(2, 0.5);
  EXPECT_EQ(heap.top().id, 2);
  heap.pop();
  EXPECT_EQ(heap.top().id, 1);
  heap.pop();
  EXPECT_EQ(heap.top().id, 3);
}

TEST(LevelHeap, FollowsASortedReferenceThroughMovesAndRemovals) {
  constexpr int kIds = 200;
  LevelHeap heap;
  heap.reset(kIds);
  std::map<int, double> live;  // id -> level
  std::mt19937 rng(5);
  std::uniform_int_distribution<int> id_of(0, kIds - 1), op_of(0, 3);
  std::uniform_int_distribution<int> level_of(0, 50);  // few levels: many ties
  const auto lowest = [&] {
    std::pair<double, int> best{1e300, -1};
    for (const auto& [id, at] : live) best = std::min(best, {at, id});
    return best;
  };
  for (int step = 0; step < 20000; ++step) {
    const int id = id_of(rng);
    switch (op_of(rng)) {
      case 0:
      case 1:
        live[id] = level_of(rng);
        heap.set(id, live[id]);
        break;
      case 2:
        live.erase(id);
        heap.erase(id);
        break;
      default:
        if (!live.empty()) {
          live.erase(lowest().second);
          heap.pop();
        }
    }
    ASSERT_EQ(heap.size(), live.size());
    ASSERT_EQ(heap.contains(id), live.count(id) == 1);
    if (!live.empty()) {
      ASSERT_EQ(heap.top().id, lowest().second) << "step " << step;
      ASSERT_EQ(heap.top().at, lowest().first);
    }
  }
  heap.clear();
  EXPECT_TRUE(heap.empty());
  EXPECT_FALSE(heap.contains(0));
}

}  // namespace
}  // namespace podsim::flow
