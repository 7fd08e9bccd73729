#include "hw/dma/dma_config.h"

namespace podsim::dma {

void DmaConfig::check(core::ConfigChecks& c) const {
  if (burst.bytes % 4 != 0) {
    c.fail("burst", "must be a multiple of 4 bytes, so that bursts hold whole elements");
  }
}

}  // namespace podsim::dma
