// Inputs and expected results of collectives, computed on the host, independently of the
// modeled hardware: deterministic inputs per rank, loaded straight into chip memory, and the
// outputs the algorithm's documented reduction order must produce, compared bit for bit.
#pragma once

#include <cstdint>
#include <vector>

#include "collectives/collective.h"
#include "collectives/communicator.h"

namespace podsim::collectives {

using Bytes = std::vector<std::uint8_t>;

// Rank `rank`'s input: element i is a value drawn from (seed, rank, i), small enough that int32
// sums stay exact and with a fractional part, so 16-bit types round at every step.
Bytes make_input(const Spec& spec, int ranks, int rank, std::uint64_t seed);
// What rank `rank`'s output buffer must hold, given every rank's input, when `algorithm` (not
// kAuto) combines them in its documented order; the hierarchical order needs the box structure.
Bytes expected_output(const Spec& spec, Algorithm algorithm, int ranks, int rank,
                      const std::vector<Bytes>& inputs, const Hierarchy* hierarchy = nullptr);
// Whether rank `rank`'s output has a defined result (a reduce's lands on the root only).
bool has_result(const Spec& spec, int rank);
// Elements of `got` that differ from `want` in any bit.
std::uint64_t wrong_elements(core::DataType type, const Bytes& got, const Bytes& want);

// Writes every rank's input into its chip's memory (as a host loader would, outside the
// timing); returns the inputs. Needs functional mode.
std::vector<Bytes> load_inputs(Communicator& comm, const Spec& spec, std::uint64_t seed);
// Reads every rank's output and counts wrong elements over all ranks.
std::uint64_t check_outputs(Communicator& comm, const Spec& spec, Algorithm algorithm,
                            const std::vector<Bytes>& inputs);

}  // namespace podsim::collectives
