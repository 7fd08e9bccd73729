// The 32-bit values written to Gaudi1 sync-manager registers: a sync object update (set or add)
// and a monitor arm (a group of eight sync objects, a mask, a comparison and a value). Bit
// positions come from the generated header (layouts SOB_OBJ and MON_ARM of gaudi1.yaml).
// Captures the encodings; ignores what the sync manager does with them.
#pragma once

#include <cstdint>
#include <vector>

namespace podsim::chip::spec {

struct SobWrite {
  std::uint32_t value = 0;  // 15 bits
  bool increment = false;   // add `value` instead of setting the object to it
  bool trace_evict = false;
  bool operator==(const SobWrite& o) const {
    return value == o.value && increment == o.increment && trace_evict == o.trace_evict;
  }
};

SobWrite decode_sob_write(std::uint32_t raw);
// Throws std::invalid_argument when `value` does not fit in the object's 15 bits.
std::uint32_t encode_sob_write(const SobWrite& write);

enum class MonitorOp : std::uint8_t { kGreaterOrEqual = 0, kEqual = 1 };

struct MonitorArm {
  std::uint32_t group = 0;  // watches SOBs 8*group .. 8*group+7
  std::uint8_t mask = 0;    // bit i set: SOB 8*group+i is not watched
  MonitorOp op = MonitorOp::kGreaterOrEqual;
  std::uint32_t value = 0;  // 15 bits

  bool watches(std::uint32_t sob) const;
  std::vector<std::uint32_t> watched_sobs() const;
  bool operator==(const MonitorArm& o) const {
    return group == o.group && mask == o.mask && op == o.op && value == o.value;
  }

  // A monitor on one sync object, as user space arms it.
  static MonitorArm single(std::uint32_t sob, std::uint32_t value, MonitorOp op);
};

MonitorArm decode_monitor_arm(std::uint32_t raw);
// Throws std::invalid_argument when the group or value does not fit.
std::uint32_t encode_monitor_arm(const MonitorArm& arm);

}  // namespace podsim::chip::spec
