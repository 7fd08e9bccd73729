// The direct (mesh) algorithm for ranks that are all wired to each other, as the chips of an
// all-to-all box are: every peer link is busy at once. Rank r owns segment r. A reduce-scatter
// sends each segment straight to its owner over every link to it (the piece for a peer split
// across its `lanes` links), and the owner reduces the pieces as they arrive; an all-gather
// sends the owner's finished segment straight into every peer's output. An all-reduce is one
// then the other, chunk by chunk, so gathering a chunk overlaps reducing the next.
// Reduction order (for bit-exact checks): segment s is combined starting at its owner:
// ((x[s] op x[s+1]) op x[s+2]) ... op x[s-1], indices mod n, each step rounded to the type.
// Alpha-beta cost of an all-reduce of S bytes over n-1 peers with L links each:
// 2 x alpha + 2(n-1)/n x S / ((n-1) L B).
#pragma once

#include <cstdint>
#include <functional>

#include "collectives/collective.h"
#include "collectives/program.h"

namespace podsim::collectives {

// Rank `rank`'s program; `qp(peer, lane)` gives its QP to `peer` over lane `lane`.
Program mesh_program(const Spec& spec, int ranks, int rank, int lanes,
                     const std::function<std::uint32_t(int peer, int lane)>& qp);

}  // namespace podsim::collectives
