// Recursive halving-doubling (Rabenseifner's all-reduce). With p the largest power of two not
// above n and e = n - p, the first 2e ranks fold in pairs: rank 2i sends its whole vector to
// rank 2i+1 and sits out. The p remaining ranks (virtual ranks 0..p-1) reduce-scatter by
// recursive halving, the partner at step k being v XOR p/2^(k+1), each keeping half of its range
// and sending the other half, until virtual rank v holds block v of p reduced; then they
// all-gather by recursive doubling in the reverse order, the finished results written straight
// into the partner's output; last, rank 2i+1 sends the result back to rank 2i. Each transfer is
// split over the peer's `lanes` links and cut into chunks.
// Reduction order (for bit-exact checks): y[v] = x[2v+1] op x[2v] for v < e, else x[v+e]; then
// for m = p/2, p/4, ..., 1: y[v] = y[v] op y[v + m] for v < m; the result is y[0] (the
// operators are commutative, so which side of each step a rank computes does not matter).
// Alpha-beta cost of an all-reduce of S bytes, n a power of two: 2 log2(n) x alpha +
// 2(n-1)/n x S / B; otherwise two more steps of S / B each.
#pragma once

#include <cstdint>
#include <functional>

#include "collectives/collective.h"
#include "collectives/program.h"

namespace podsim::collectives {

// Rank `rank`'s program; `qp(peer, lane)` gives its QP to `peer` over lane `lane`.
Program halving_doubling_program(const Spec& spec, int ranks, int rank, int lanes,
                                 const std::function<std::uint32_t(int peer, int lane)>& qp);

}  // namespace podsim::collectives
