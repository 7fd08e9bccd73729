// A block's register image as a runtime writes it before starting an engine: runs of
// consecutive 32-bit registers at offsets from the block's base (a QMAN writes an even-length
// run with WREG_BULK, in pairs).
#pragma once

#include <cstdint>
#include <vector>

namespace podsim::core {

struct RegisterRun {
  std::uint32_t offset;  // from the block's base
  std::vector<std::uint32_t> values;
};

}  // namespace podsim::core
