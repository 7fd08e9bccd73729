// The CPU side of an MME operation: deterministic operands in their memory layout, and the
// result checked against the double-precision reference (hw/mme/operation.h) with a bound that
// follows from the arithmetic: products of the input type are exact in f32, every addition of
// the f32 accumulation may round (at most K of them), and the result rounds once to its type,
// so |got - want| <= (K 2^-24 + u_out) sum_k |a b| (+ u_out |previous| when accumulating),
// u_out the result type's unit roundoff.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "hw/mme/operation.h"

namespace podsim::mme {

struct MmeOperands {
  std::vector<std::uint8_t> a, b, c;  // c: the result's previous contents (accumulation)
};

// Values uniform in [-1, 1) rounded to the operand types; c random when accumulating, else 0.
MmeOperands make_operands(const MmeOperation& op, std::uint64_t seed);

struct MmeCheck {
  std::uint64_t elements = 0;        // result elements compared
  std::uint64_t beyond = 0;          // of them, beyond the bound
  double worst = 0;                  // the largest |got - want| / bound
  std::optional<std::string> first;  // the worst element beyond the bound, described
};

// `got` is the result buffer after the operation, `in` what it was run on.
MmeCheck check_result(const MmeOperation& op, const MmeOperands& in,
                      const std::vector<std::uint8_t>& got);

}  // namespace podsim::mme
