#include "hw/chip/spec/sync_values.h"

#include <fmt/format.h>

#include <stdexcept>

#include "podsim/spec/gaudi1.h"

namespace podsim::chip::spec {
namespace {

std::uint32_t field(std::uint32_t raw, std::uint32_t mask, unsigned shift) {
  return (raw & mask) >> shift;
}

void require_fits(std::uint32_t value, unsigned width, const char* what) {
  if (width < 32 && value >> width != 0) {
    throw std::invalid_argument(fmt::format("{} = {} does not fit in {} bits", what, value, width));
  }
}

}  // namespace

SobWrite decode_sob_write(std::uint32_t raw) {
  SobWrite w;
  w.value = field(raw, PODSIM_GAUDI1_SOB_OBJ_VAL_MASK, PODSIM_GAUDI1_SOB_OBJ_VAL_SHIFT);
  w.increment = field(raw, PODSIM_GAUDI1_SOB_OBJ_INC_MASK, PODSIM_GAUDI1_SOB_OBJ_INC_SHIFT) != 0;
  w.trace_evict = field(raw, PODSIM_GAUDI1_SOB_OBJ_TRACE_EVICT_MASK,
                        PODSIM_GAUDI1_SOB_OBJ_TRACE_EVICT_SHIFT) != 0;
  return w;
}

std::uint32_t encode_sob_write(const SobWrite& w) {
  require_fits(w.value, PODSIM_GAUDI1_SOB_OBJ_VAL_WIDTH, "sync object value");
  return podsim_gaudi1_make_sob_obj(w.value, w.trace_evict, w.increment);
}

bool MonitorArm::watches(std::uint32_t sob) const {
  return sob / PODSIM_GAUDI1_SOBS_PER_GROUP == group &&
         (mask >> (sob % PODSIM_GAUDI1_SOBS_PER_GROUP) & 1u) == 0;
}

std::vector<std::uint32_t> MonitorArm::watched_sobs() const {
  std::vector<std::uint32_t> sobs;
  for (std::uint32_t i = 0; i < PODSIM_GAUDI1_SOBS_PER_GROUP; ++i) {
    const std::uint32_t sob = group * PODSIM_GAUDI1_SOBS_PER_GROUP + i;
    if (watches(sob)) sobs.push_back(sob);
  }
  return sobs;
}

MonitorArm MonitorArm::single(std::uint32_t sob, std::uint32_t value, MonitorOp op) {
  MonitorArm arm;
  arm.group = sob / PODSIM_GAUDI1_SOBS_PER_GROUP;
  arm.mask = static_cast<std::uint8_t>(~(1u << (sob % PODSIM_GAUDI1_SOBS_PER_GROUP)));
  arm.op = op;
  arm.value = value;
  return arm;
}

MonitorArm decode_monitor_arm(std::uint32_t raw) {
  MonitorArm arm;
  arm.group = field(raw, PODSIM_GAUDI1_MON_ARM_SID_MASK, PODSIM_GAUDI1_MON_ARM_SID_SHIFT);
  arm.mask = static_cast<std::uint8_t>(
      field(raw, PODSIM_GAUDI1_MON_ARM_MASK_MASK, PODSIM_GAUDI1_MON_ARM_MASK_SHIFT));
  arm.op = field(raw, PODSIM_GAUDI1_MON_ARM_SOP_MASK, PODSIM_GAUDI1_MON_ARM_SOP_SHIFT) != 0
               ? MonitorOp::kEqual
               : MonitorOp::kGreaterOrEqual;
  arm.value = field(raw, PODSIM_GAUDI1_MON_ARM_SOD_MASK, PODSIM_GAUDI1_MON_ARM_SOD_SHIFT);
  return arm;
}

std::uint32_t encode_monitor_arm(const MonitorArm& arm) {
  require_fits(arm.group, PODSIM_GAUDI1_MON_ARM_SID_WIDTH, "monitor sync group");
  require_fits(arm.value, PODSIM_GAUDI1_MON_ARM_SOD_WIDTH, "monitor value");
  return podsim_gaudi1_make_mon_arm(arm.group, arm.mask, static_cast<std::uint32_t>(arm.op),
                                    arm.value);
}

}  // namespace podsim::chip::spec
