#include "hw/chip/chip_config.h"

#include <fmt/format.h>

#include <cmath>
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

void MmeConfig::check(core::ConfigChecks& c) const {
  if (engines == 0 || !(peak_bf16.flops > 0)) return;
  const double array = 2.0 * engine.rows * engine.cols * engine.clock.hertz * engines;
  if (std::fabs(array / peak_bf16.flops - 1.0) > 0.02) {
    c.fail("peak_bf16",
           fmt::format("{} x {} x {} cells x 2 flops at {:.4g} GHz give {:.4g} TFLOPS, "
                       "not the {:.4g} TFLOPS peak_bf16 says (within 2%)",
                       engines, engine.rows, engine.cols, engine.clock.hertz / 1e9, array / 1e12,
                       peak_bf16.flops / 1e12));
  }
}

}  // namespace podsim::chip
