// Inputs and expected results of collectives, computed on the host, independently of the
// modeled hardware: inputs drawn from a pattern of (seed, rank, element), loaded straight into
// chip memory, and the outputs the algorithm's documented reduction order must produce, compared
// bit for bit. The check works window by window (as nccl-tests regenerates its expected values
// on the device), so it never holds a whole buffer per rank on the host.
#pragma once

#include <cstdint>
#include <vector>

#include "collectives/collective.h"
#include "collectives/communicator.h"

namespace podsim::collectives {

using Bytes = std::vector<std::uint8_t>;

// Every rank's input, as a pattern: element i of rank r is a value drawn from (seed, r, i) by a
// counter-based hash, so any window is made without the ones before it. Values are small enough
// that int32 sums stay exact and have a fractional part, so 16-bit types round at every step.
class InputPattern {
 public:
  InputPattern(const Spec& spec, int ranks, std::uint64_t seed);
  // Rank `rank`'s input elements [first, first + count).
  Bytes window(int rank, std::uint64_t first, std::uint64_t count) const;
  // Elements in a rank's input buffer.
  std::uint64_t elements() const { return elements_; }
  int ranks() const { return ranks_; }

 private:
  core::DataType type_;
  int ranks_;
  std::uint64_t elements_, seed_;
};

// Elements [first, first + count) of what rank `rank`'s output buffer must hold when `algorithm`
// (not kAuto) combines the inputs in its documented order; the hierarchical order needs the box
// structure and spec.across decided (Communicator::with_across). Holds one window per rank at most.
Bytes expected_output(const Spec& spec, Algorithm algorithm, const InputPattern& inputs, int rank,
                      std::uint64_t first, std::uint64_t count,
                      const Hierarchy* hierarchy = nullptr);
// Whether rank `rank`'s output has a defined result (a reduce's lands on the root only).
bool has_result(const Spec& spec, int rank);
// Elements of `got` that differ from `want` in any bit.
std::uint64_t wrong_elements(core::DataType type, const Bytes& got, const Bytes& want);

// Host memory the check of `spec` holds at most (its windows), beside the chips' memory.
std::uint64_t check_bytes(const Spec& spec, int ranks);

// Writes every rank's input into its chip's memory (as a host loader would, outside the
// timing), window by window; returns the pattern. Needs functional mode. Only ranks on chips
// this process simulates (all of them, but in a parallel run).
InputPattern load_inputs(Communicator& comm, const Spec& spec, std::uint64_t seed);
// Reads every rank's output and counts wrong elements over all ranks (those on chips this
// process simulates).
std::uint64_t check_outputs(Communicator& comm, const Spec& spec, Algorithm algorithm,
                            const InputPattern& inputs);

}  // namespace podsim::collectives
