// The collectives' element types (core::DataType) as the TPC's (tpc::Dtype) and back: one
// mapping for every layer that hands a buffer from one to the other (reduction kernels the
// collectives compile, training's gradient buffers the collectives reduce).
#pragma once

#include <stdexcept>

#include "core/numeric.h"
#include "hw/tpc/isa.h"

namespace podsim::tpc {

inline Dtype dtype_of(core::DataType type) {
  switch (type) {
    case core::DataType::kFp32:
      return Dtype::kF32;
    case core::DataType::kBf16:
      return Dtype::kBf16;
    case core::DataType::kFp16:
      return Dtype::kF16;
    case core::DataType::kInt32:
      return Dtype::kI32;
  }
  throw std::logic_error("a data type without a TPC type");
}

// Throws std::invalid_argument for TPC types the collectives do not reduce.
inline core::DataType data_type_of(Dtype type) {
  switch (type) {
    case Dtype::kF32:
      return core::DataType::kFp32;
    case Dtype::kBf16:
      return core::DataType::kBf16;
    case Dtype::kF16:
      return core::DataType::kFp16;
    case Dtype::kI32:
      return core::DataType::kInt32;
    default:
      throw std::invalid_argument(std::string("the collectives reduce no ") + info(type).name);
  }
}

}  // namespace podsim::tpc
