// The ring algorithm: ranks in a ring, each sending to the next, the vector cut into one
// segment per rank and each segment into chunks that travel the ring independently, so sends,
// reductions and the next sends overlap. A reduce-scatter passes partial sums around n-1 times
// (each rank reduces what arrives with its own input and passes it on) until rank r holds
// segment r reduced over every rank; an all-gather passes finished segments around n-1 times; an
// all-reduce is one then the other.
// Reduction order (for bit-exact checks): segment s is combined in ring order starting after its
// owner: ((x[s+1] op x[s+2]) op ...) op x[s], indices mod n, each step rounded to the type.
// Alpha-beta cost of an all-reduce of S bytes: 2(n-1) x alpha + 2(n-1)/n x S / B.
#pragma once

#include <cstdint>

#include "collectives/collective.h"
#include "collectives/program.h"

namespace podsim::collectives {

// Rank `rank`'s program for `spec` over `ranks` ranks; `to_next` is its QP to rank + 1.
Program ring_program(const Spec& spec, int ranks, int rank, std::uint32_t to_next);

// One of several rings of a reduce-scatter or all-gather: it moves elements [at, at + length) of
// every rank's part, so that each rank's part stays whole where the collective defines it. On a
// backward ring, position p is rank (n - p) mod n.
struct RingShare {
  std::uint64_t at = 0, length = 0;
  bool backward = false;
};
// The program of the rank at `position` of the share's ring; `to_next` its QP to the next
// position.
Program ring_program(const Spec& spec, int ranks, int position, std::uint32_t to_next,
                     const RingShare& share);

}  // namespace podsim::collectives
