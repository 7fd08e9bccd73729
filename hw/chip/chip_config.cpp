#include "hw/chip/chip_config.h"

#include <stdexcept>

namespace podsim::chip {

hbm::HbmConfig HbmConfig::detailed() const {
  hbm::HbmConfig config = hbm::for_part(generation, stacks, capacity.bytes, bandwidth);
  config.model = model;
  return config;
}

void HbmConfig::check(core::ConfigChecks& c) const {
  if (!(bandwidth.bits_per_second > 0)) return;  // no HBM: the chip uses host memory
  try {
    core::validate_config(detailed());
  } catch (const std::invalid_argument& e) {
    c.fail("generation", e.what());
  }
}

}  // namespace podsim::chip
