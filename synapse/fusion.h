// Fusion of element-wise chains: consecutive kernel nodes on one tensor shape, each taking the
// previous one's result (bias_add, relu, gelu, add, sub, mul, min, max), become one TPC launch
// whose kernel the compiler writes and assembles: every element is loaded once, carried through
// the chain in f32 registers and stored once, so the intermediates never go through HBM.
// A result another node still reads (or a persistent one) is stored on the way.
// An addition of a residual and a ReLU (or either) right after a library kernel whose last pass
// writes element by element (batch norm) become that kernel's residual = 1 and relu = 1
// variants, when nothing else reads the results in between, as the real graph compiler folds a
// residual connection and an activation into the normalisation before them. A ReLU's gradient
// right after the backward of the max pool that read the ReLU's output becomes the pool's
// relu = 1 variant: the ReLU's zeros are where the pool's windows have a maximum of 0.
// Captures: what the chain computes, in f32 with one rounding to the type at each store (the
// separate kernels round after each operation, so a fused bf16 chain differs from them by that
// rounding). Ignores: chains across shapes or broadcasts other than a bias, reductions.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "synapse/graph.h"

namespace podsim::synapse {

struct Fusion {
  std::size_t first = 0, last = 0;   // the chain: nodes first..last of the graph
  Node node;                         // the one kernel node that replaces them
  tpc::KernelPlan plan;              // its plan (binary key plan.launches[0].binary)
  std::vector<std::uint8_t> binary;  // the kernel written for it; empty for a library kernel
  std::string source;                // the TPC assembly it was built from
};

// The graph's fusable chains, in order, none overlapping.
// Fused kernels are scheduled for `generation`'s cores.
std::vector<Fusion> find_fusions(const Graph& graph, tpc::Generation generation);

}  // namespace podsim::synapse
