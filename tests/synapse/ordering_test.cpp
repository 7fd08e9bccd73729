// The list schedule that orders a graph's nodes for the engines, without a device.
#include "synapse/ordering.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

namespace podsim::synapse {
namespace {

OrderTask task(Engine e, double ns, std::vector<std::size_t> after = {}) {
  return OrderTask{e, ns, std::move(after)};
}

// A backward pass's shape: each TPC node feeds a weight gradient and a data gradient on the
// MME, and the next TPC node waits for the data gradient alone. Issued first, the data gradient
// lets the next TPC node run while the MME computes the weight gradient.
TEST(IssueOrder, TheNodeAnotherEngineWaitsForGoesFirst) {
  const std::vector<OrderTask> tasks{
      task(Engine::kTpc, 1),       // 0: a norm's backward
      task(Engine::kMme, 3, {0}),  // 1: weight gradient
      task(Engine::kMme, 1, {0}),  // 2: data gradient
      task(Engine::kTpc, 2, {2}),  // 3: the next norm's backward
      task(Engine::kMme, 3, {3}),  // 4: its weight gradient
      task(Engine::kMme, 1, {3}),  // 5: its data gradient
  };
  EXPECT_EQ(issue_order(tasks), (std::vector<std::size_t>{0, 2, 3, 1, 4, 5}));
}

// Work that can start now goes before longer-path work that must wait: the MME fills the time
// the TPCs take to make the next GEMM's input.
TEST(IssueOrder, IndependentWorkFillsAnEngineThatWouldWait) {
  const std::vector<OrderTask> tasks{
      task(Engine::kTpc, 4),       // 0
      task(Engine::kMme, 2, {0}),  // 1: waits for the TPCs
      task(Engine::kMme, 3),       // 2: independent
  };
  EXPECT_EQ(issue_order(tasks), (std::vector<std::size_t>{0, 2, 1}));
}

// Of the tasks that can start first, the one with the longest path after it goes first, then
// program order.
TEST(IssueOrder, EqualStartsGoByTheLongestTailThenProgramOrder) {
  const std::vector<OrderTask> tasks{task(Engine::kTpc, 1), task(Engine::kTpc, 1),
                                     task(Engine::kTpc, 1, {0}), task(Engine::kDma, 0)};
  EXPECT_EQ(issue_order(tasks), (std::vector<std::size_t>{0, 3, 1, 2}));
}

// On random graphs: every task once, each after everything it depends on.
TEST(IssueOrder, KeepsEveryDependencyOnRandomGraphs) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 50; ++trial) {
    const std::size_t n = 1 + rng() % 40;
    std::vector<OrderTask> tasks;
    for (std::size_t i = 0; i < n; ++i) {
      OrderTask t = task(static_cast<Engine>(rng() % 3), static_cast<double>(rng() % 10));
      for (std::size_t d = 0; d < i; ++d) {
        if (rng() % 4 == 0) t.after.push_back(d);
      }
      tasks.push_back(t);
    }
    const std::vector<std::size_t> order = issue_order(tasks);
    ASSERT_EQ(order.size(), n);
    std::vector<std::size_t> at(n, n);
    for (std::size_t k = 0; k < n; ++k) at[order[k]] = k;
    for (std::size_t i = 0; i < n; ++i) {
      ASSERT_LT(at[i], n) << "task " << i << " not issued";
      for (std::size_t d : tasks[i].after) EXPECT_LT(at[d], at[i]) << d << " before " << i;
    }
  }
}

TEST(IssueOrder, RefusesADependencyOnALaterTask) {
  const std::vector<OrderTask> tasks{task(Engine::kTpc, 1, {1}), task(Engine::kTpc, 1)};
  try {
    issue_order(tasks);
    FAIL() << "ordered";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "issue order: task 0 follows task 1, not earlier in program order");
  }
}

}  // namespace
}  // namespace podsim::synapse
