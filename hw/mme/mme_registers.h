// The MME_DESC register image of one operation (gaudi1.yaml's podsim-defined MME_DESC block):
// what a runtime writes before EXECUTE, and what the engine latches back out of it.
#pragma once

#include <cstdint>
#include <vector>

#include "core/register_run.h"
#include "hw/mme/operation.h"

namespace podsim::mme {

struct OperationRegisters {
  MmeOperation op;
  std::uint64_t sync_object = 0;   // the address written at the end, 0 for none
  std::uint32_t sync_message = 0;  // what is written there
};

// Throws std::invalid_argument when a value does not fit its register (a stride above 32 bits).
std::vector<core::RegisterRun> register_image(const OperationRegisters& r);
// The operation the registers hold, `words` the block's registers in offset order.
OperationRegisters latch(const std::vector<std::uint32_t>& words);

}  // namespace podsim::mme
