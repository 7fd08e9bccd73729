// The double binary tree (as NCCL's): two binary trees over the ranks in which every rank is an
// inner node of at most one, each carrying half of the vector, chunk by chunk: partial results
// flow up to the root, the result flows back down.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "collectives/collective.h"
#include "hw/chip/sequencer.h"

namespace podsim::collectives {

// Rank `rank`'s program; `qp(peer, lane)` gives its QP to `peer` over lane `lane`.
chip::Program tree_program(const Spec& spec, int ranks, int rank,
                           const std::function<std::uint32_t(int peer, int lane)>& qp);

}  // namespace podsim::collectives
