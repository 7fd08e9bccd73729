// The order in which the compiler issues a graph's nodes to the engines. Each engine class (the
// TPCs, the MMEs, the DMA) runs its jobs in the order they are issued, so that order decides
// what can overlap: a weight gradient issued before the data gradient that the next TPC node
// waits for keeps the TPCs idle through it; issued after, it runs while they work.
// The order is a list schedule on estimated durations, as graph compilers order a graph for
// engines that run side by side (the earliest-task-first rule [A1]): at each step,
// of the nodes whose inputs are all issued, the one that could start soonest on its engine
// class goes next; on a tie the one with the longest estimated path after it to the graph's
// end (its tail: of two jobs for one machine, the longer tail first never ends later [A2]),
// then program order. Dependencies are kept, so results do not change.
// Captures: the order that lets independent nodes overlap by estimated time. Ignores: the
// estimates' errors (they only order; the engines' own models give the time), and memory: a
// node issued later keeps its inputs alive longer.
#pragma once

#include <cstddef>
#include <vector>

#include "synapse/recipe.h"

namespace podsim::synapse {

struct OrderTask {
  Engine engine = Engine::kTpc;
  double ns = 0;                   // estimated duration
  std::vector<std::size_t> after;  // tasks (earlier in program order) it must follow
};

// The issue order of `tasks`, given in program order (each task's `after` earlier than it):
// a permutation that keeps every dependency. Throws std::invalid_argument on a dependency that
// is not earlier in program order.
std::vector<std::size_t> issue_order(const std::vector<OrderTask>& tasks);

}  // namespace podsim::synapse
