// The TPC_CFG register image of a kernel launch on one core (gaudi1.yaml's TPC_CFG block): what
// a runtime writes before TPC_EXECUTE, as runs of consecutive registers (those of an even count
// WREG_BULK can write in pairs).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "core/register_run.h"
#include "hw/tpc/executor.h"

namespace podsim::tpc {

using core::RegisterRun;

struct KernelRegisters {
  LaunchState state;
  std::optional<std::array<Coord, kMaxTensors>> access_scale;
  std::uint64_t binary = 0;
  std::uint64_t sync_object = 0;   // the address written at the end, 0 for none
  std::uint32_t sync_message = 0;  // what is written there
  std::uint32_t kernel_id = 0;
};

std::vector<RegisterRun> register_image(const KernelRegisters& k);

}  // namespace podsim::tpc
