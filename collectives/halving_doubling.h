// Recursive halving-doubling (Rabenseifner's all-reduce): a reduce-scatter by recursive halving,
// partners at distance n/2, n/4, ... exchanging half of what they hold, then an all-gather by
// recursive doubling in the reverse order.
#pragma once

#include <cstdint>
#include <functional>

#include "collectives/collective.h"
#include "hw/chip/sequencer.h"

namespace podsim::collectives {

// Rank `rank`'s program; `qp(peer, lane)` gives its QP to `peer` over lane `lane`.
chip::Program halving_doubling_program(const Spec& spec, int ranks, int rank,
                                       const std::function<std::uint32_t(int peer, int lane)>& qp);

}  // namespace podsim::collectives
