#include "hw/chip/sync_monitor.h"

#include "podsim/spec/gaudi1.h"

namespace podsim::chip {

std::uint32_t apply_sob_write(std::uint32_t old_value, const spec::SobWrite& write) {
  const std::uint32_t next = write.increment ? old_value + write.value : write.value;
  return next & PODSIM_GAUDI1_SOB_OBJ_VAL_MASK;
}

std::uint8_t monitor_pending(const spec::MonitorArm& arm, const std::vector<std::uint32_t>& sobs) {
  std::uint8_t pending = 0;
  for (std::uint32_t i = 0; i < PODSIM_GAUDI1_SOBS_PER_GROUP; ++i) {
    const std::uint32_t sob = arm.group * PODSIM_GAUDI1_SOBS_PER_GROUP + i;
    if (!arm.watches(sob)) continue;
    bool met = false;
    if (sob < sobs.size()) {
      met = arm.op == spec::MonitorOp::kEqual ? sobs[sob] == arm.value : sobs[sob] >= arm.value;
    }
    if (!met) pending = static_cast<std::uint8_t>(pending | 1u << i);
  }
  return pending;
}

}  // namespace podsim::chip
