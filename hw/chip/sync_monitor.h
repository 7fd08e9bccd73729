// The arithmetic of Gaudi1's sync objects and monitors, without the kernel: a sync object update
// (set or add, on the object's 15 bits) and a monitor's test of its group of eight objects.
// A monitor watches the objects of its group that its mask leaves in, and fires when every one of
// them meets its condition (>= or == the armed value): MON_STATUS counts the watched objects
// still unmet as "pending", so all of them must be met. Ignores: the trace_evict bit's trace
// event and protected (secured) monitors.
#pragma once

#include <cstdint>
#include <vector>

#include "hw/chip/spec/sync_values.h"

namespace podsim::chip {

// The object's value after `write` (an add wraps within the object's bits).
std::uint32_t apply_sob_write(std::uint32_t old_value, const spec::SobWrite& write);

// Bit i set: object 8*group+i is watched and does not meet the monitor's condition.
std::uint8_t monitor_pending(const spec::MonitorArm& arm, const std::vector<std::uint32_t>& sobs);

// True when every watched object meets the condition (a monitor whose mask leaves no object in
// is met at once). Objects past the end of `sobs` count as unmet.
inline bool monitor_met(const spec::MonitorArm& arm, const std::vector<std::uint32_t>& sobs) {
  return monitor_pending(arm, sobs) == 0;
}

}  // namespace podsim::chip
