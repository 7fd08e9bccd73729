// How an MME walks an operation (operation.h), without the kernel: the array shaped as the
// operation's geometry asks (the same cells as a taller or wider tile), the output cut into blocks
// of block_rows x block_cols array tiles (output stationary: each cell accumulates one result
// while K streams through) or into row chunks against weight tiles (weight stationary), K into
// chunks the operand buffer holds twice over; per step the operand panels it fetches and the
// array cycles it takes. The analytic cycle count of an operation is the closed form of the
// same walk; a test holds them equal and the module's time to it.
// Captures: partial tiles costing whole ones, fill and drain (once, or per tile), operand bytes
// per step. Ignores: bank conflicts in the operand buffer, the array's own pipeline stalls.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "hw/mme/mme_config.h"
#include "hw/mme/operation.h"

namespace podsim::mme {

struct Step {
  std::uint64_t batch = 0, m0 = 0, m1 = 0, n0 = 0, n1 = 0, k0 = 0, k1 = 0;
  std::uint64_t cycles = 0;
  bool first_k = false, last_k = false;  // the block's results start and finish here
};

// The array as the output tile `op` names (MmeOperation::tall, wide): rows and cols exchanged
// for each other, the cells the same. Throws std::invalid_argument when `config` cannot form it.
MmeConfig shaped(const MmeConfig& config, const MmeOperation& op);
// Why `config` cannot form `op`'s tile, or nullopt.
std::optional<std::string> geometry_problem(const MmeConfig& config, const MmeOperation& op);

// K per fetch: the operand buffer holds two sets of panels of `in` elements.
std::uint64_t k_chunk(const MmeConfig& config, const GemmView& view, Dtype in);
std::vector<Step> schedule(const MmeConfig& config, const GemmView& view, Dtype in);
// Array cycles of the whole walk, in closed form.
std::uint64_t analytic_cycles(const MmeConfig& config, const GemmView& view, Dtype in);

}  // namespace podsim::mme
