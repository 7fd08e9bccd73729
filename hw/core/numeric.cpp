#include "hw/core/numeric.h"

#include <cmath>
#include <cstring>
#include <limits>

namespace podsim::core {

namespace {

std::uint32_t bits_of(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

float float_of(std::uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

template <class T>
T load(const std::uint8_t* data, std::size_t index) {
  T v;
  std::memcpy(&v, data + index * sizeof(T), sizeof(T));
  return v;
}

template <class T>
void store(std::uint8_t* data, std::size_t index, T v) {
  std::memcpy(data + index * sizeof(T), &v, sizeof(T));
}

float apply(ReduceOp op, float a, float b) {
  switch (op) {
    case ReduceOp::kSum:
      return a + b;
    case ReduceOp::kMin:
      return std::fmin(a, b);
    case ReduceOp::kMax:
      return std::fmax(a, b);
  }
  return a;
}

std::int32_t apply(ReduceOp op, std::int32_t a, std::int32_t b) {
  switch (op) {
    case ReduceOp::kSum:  // wraps, as the hardware's adders do
      return static_cast<std::int32_t>(static_cast<std::uint32_t>(a) +
                                       static_cast<std::uint32_t>(b));
    case ReduceOp::kMin:
      return a < b ? a : b;
    case ReduceOp::kMax:
      return a > b ? a : b;
  }
  return a;
}

// A 16-bit format reduces through fp32 and rounds once per element.
template <float (*ToFloat)(std::uint16_t), std::uint16_t (*FromFloat)(float)>
void reduce_half(ReduceOp op, std::uint8_t* dst, const std::uint8_t* src, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) {
    const float a = ToFloat(load<std::uint16_t>(dst, i));
    const float b = ToFloat(load<std::uint16_t>(src, i));
    store<std::uint16_t>(dst, i, FromFloat(apply(op, a, b)));
  }
}

}  // namespace

std::size_t size_of(DataType type) {
  switch (type) {
    case DataType::kFp32:
    case DataType::kInt32:
      return 4;
    case DataType::kBf16:
    case DataType::kFp16:
      return 2;
  }
  return 4;
}

const char* to_string(DataType type) {
  switch (type) {
    case DataType::kFp32:
      return "float";
    case DataType::kBf16:
      return "bf16";
    case DataType::kFp16:
      return "half";
    case DataType::kInt32:
      return "int32";
  }
  return "?";
}

const char* to_string(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum:
      return "sum";
    case ReduceOp::kMin:
      return "min";
    case ReduceOp::kMax:
      return "max";
  }
  return "?";
}

std::optional<DataType> parse_data_type(std::string_view name) {
  if (name == "float" || name == "fp32" || name == "float32") return DataType::kFp32;
  if (name == "bf16" || name == "bfloat16") return DataType::kBf16;
  if (name == "half" || name == "fp16" || name == "float16") return DataType::kFp16;
  if (name == "int" || name == "int32") return DataType::kInt32;
  return std::nullopt;
}

std::optional<ReduceOp> parse_reduce_op(std::string_view name) {
  if (name == "sum") return ReduceOp::kSum;
  if (name == "min") return ReduceOp::kMin;
  if (name == "max") return ReduceOp::kMax;
  return std::nullopt;
}

float bf16_to_float(std::uint16_t bits) { return float_of(std::uint32_t{bits} << 16); }

std::uint16_t float_to_bf16(float value) {
  const std::uint32_t u = bits_of(value);
  if (std::isnan(value)) return static_cast<std::uint16_t>((u >> 16) | 0x40);  // stays quiet NaN
  const std::uint32_t lsb = (u >> 16) & 1;
  return static_cast<std::uint16_t>((u + 0x7fff + lsb) >> 16);
}

float fp16_to_float(std::uint16_t bits) {
  const std::uint32_t sign = std::uint32_t{bits & 0x8000u} << 16;
  const std::uint32_t exponent = (bits >> 10) & 0x1f;
  const std::uint32_t mantissa = bits & 0x3ff;
  if (exponent == 0x1f) return float_of(sign | 0x7f800000u | (mantissa << 13));
  if (exponent != 0) return float_of(sign | ((exponent + 112) << 23) | (mantissa << 13));
  // Subnormal (or zero): mantissa x 2^-24, exact in a float.
  const float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
  return sign ? -magnitude : magnitude;
}

std::uint16_t float_to_fp16(float value) {
  const std::uint32_t u = bits_of(value);
  const auto sign = static_cast<std::uint16_t>((u >> 16) & 0x8000u);
  if (std::isnan(value)) return static_cast<std::uint16_t>(sign | 0x7e00u);
  const float magnitude = std::fabs(value);
  if (magnitude >= 65520.0f) return static_cast<std::uint16_t>(sign | 0x7c00u);  // rounds up to inf
  if (magnitude < std::ldexp(1.0f, -14)) {
    // Subnormal range: a multiple of 2^-24, rounded to nearest even by the FPU's default mode.
    const float units = std::nearbyint(magnitude * std::ldexp(1.0f, 24));
    return static_cast<std::uint16_t>(sign | static_cast<std::uint16_t>(units));
  }
  const std::uint32_t mag = bits_of(magnitude);
  const std::uint32_t exponent = (mag >> 23) - 112;
  std::uint32_t half = (exponent << 10) | ((mag >> 13) & 0x3ff);
  const std::uint32_t rest = mag & 0x1fff;                      // the 13 bits dropped
  if (rest > 0x1000 || (rest == 0x1000 && (half & 1))) ++half;  // may carry into the exponent
  return static_cast<std::uint16_t>(sign | half);
}

double element_value(DataType type, const std::uint8_t* data, std::size_t index) {
  switch (type) {
    case DataType::kFp32:
      return load<float>(data, index);
    case DataType::kBf16:
      return bf16_to_float(load<std::uint16_t>(data, index));
    case DataType::kFp16:
      return fp16_to_float(load<std::uint16_t>(data, index));
    case DataType::kInt32:
      return load<std::int32_t>(data, index);
  }
  return 0;
}

void set_element(DataType type, std::uint8_t* data, std::size_t index, double value) {
  switch (type) {
    case DataType::kFp32:
      return store<float>(data, index, static_cast<float>(value));
    case DataType::kBf16:
      return store<std::uint16_t>(data, index, float_to_bf16(static_cast<float>(value)));
    case DataType::kFp16:
      return store<std::uint16_t>(data, index, float_to_fp16(static_cast<float>(value)));
    case DataType::kInt32:
      return store<std::int32_t>(data, index, static_cast<std::int32_t>(value));
  }
}

void reduce_into(DataType type, ReduceOp op, std::uint8_t* dst, const std::uint8_t* src,
                 std::size_t count) {
  switch (type) {
    case DataType::kFp32:
      for (std::size_t i = 0; i < count; ++i) {
        store<float>(dst, i, apply(op, load<float>(dst, i), load<float>(src, i)));
      }
      return;
    case DataType::kInt32:
      for (std::size_t i = 0; i < count; ++i) {
        store<std::int32_t>(dst, i,
                            apply(op, load<std::int32_t>(dst, i), load<std::int32_t>(src, i)));
      }
      return;
    case DataType::kBf16:
      return reduce_half<bf16_to_float, float_to_bf16>(op, dst, src, count);
    case DataType::kFp16:
      return reduce_half<fp16_to_float, float_to_fp16>(op, dst, src, count);
  }
}

}  // namespace podsim::core
