#include "core/numeric.h"

#include <array>
#include <cmath>
#include <cstring>
#include <limits>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

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

// Min and max give the number when one operand is NaN (as fminf/fmaxf) and the first operand
// when the two compare equal (+0 and -0), written as the vector code below computes them, so the
// two paths agree bit for bit.
float apply(ReduceOp op, float a, float b) {
  switch (op) {
    case ReduceOp::kSum:
      // Of two NaNs the CPU keeps its first operand's, and a compiler may swap a sum's operands:
      // a's, quieted, explicitly (the vector path does the same).
      return std::isnan(a) ? float_of(bits_of(a) | 0x400000u) : a + b;
    case ReduceOp::kMin:
      return std::isnan(a) ? b : (b < a ? b : a);
    case ReduceOp::kMax:
      return std::isnan(a) ? b : (b > a ? b : a);
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

void reduce_scalar(DataType type, ReduceOp op, std::uint8_t* dst, const std::uint8_t* src,
                   std::size_t count);

// fp16 -> float for every 16-bit pattern, made once from the formula: a load instead of
// branches. NaNs come out quiet, as the CPU's converter gives them.
float fp16_formula(std::uint16_t bits) {
  const std::uint32_t sign = std::uint32_t{bits & 0x8000u} << 16;
  const std::uint32_t exponent = (bits >> 10) & 0x1f;
  const std::uint32_t mantissa = bits & 0x3ff;
  if (exponent == 0x1f) {
    return float_of(sign | 0x7f800000u | (mantissa << 13) | (mantissa ? 0x400000u : 0));
  }
  if (exponent != 0) return float_of(sign | ((exponent + 112) << 23) | (mantissa << 13));
  // Subnormal (or zero): mantissa x 2^-24, exact in a float.
  const float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
  return sign ? -magnitude : magnitude;
}

const std::array<float, 65536>& fp16_table() {
  static const auto table = [] {
    std::array<float, 65536> t{};
    for (std::uint32_t bits = 0; bits < t.size(); ++bits) {
      t[bits] = fp16_formula(static_cast<std::uint16_t>(bits));
    }
    return t;
  }();
  return table;
}

// The same reductions eight elements at a time with AVX2 and F16C, where the CPU has them (every
// x86-64 since 2013). Each step is the scalar code's, so the results match it bit for bit
// (tests/core/numeric_test.cpp holds them to it).
#if defined(__x86_64__) && defined(__GNUC__)
#define PODSIM_VECTOR_REDUCE 1
#define PODSIM_AVX2 __attribute__((target("avx2,f16c")))

PODSIM_AVX2 inline __m256 apply8(ReduceOp op, __m256 a, __m256 b) {
  switch (op) {
    case ReduceOp::kSum: {
      const __m256 quiet_a = _mm256_or_ps(a, _mm256_castsi256_ps(_mm256_set1_epi32(0x400000)));
      return _mm256_blendv_ps(_mm256_add_ps(a, b), quiet_a, _mm256_cmp_ps(a, a, _CMP_UNORD_Q));
    }
    case ReduceOp::kMin:  // minps(b, a) is b < a ? b : a; then a NaN gives b
      return _mm256_blendv_ps(_mm256_min_ps(b, a), b, _mm256_cmp_ps(a, a, _CMP_UNORD_Q));
    case ReduceOp::kMax:
      return _mm256_blendv_ps(_mm256_max_ps(b, a), b, _mm256_cmp_ps(a, a, _CMP_UNORD_Q));
  }
  return a;
}

PODSIM_AVX2 inline __m256 load_bf16(const std::uint8_t* p) {
  const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
}

// float_to_bf16, eight at a time: round to nearest even, a NaN kept quiet.
PODSIM_AVX2 inline void store_bf16(std::uint8_t* p, __m256 v) {
  const __m256i u = _mm256_castps_si256(v);
  const __m256i high = _mm256_srli_epi32(u, 16);
  const __m256i lsb = _mm256_and_si256(high, _mm256_set1_epi32(1));
  const __m256i rounded =
      _mm256_srli_epi32(_mm256_add_epi32(u, _mm256_add_epi32(_mm256_set1_epi32(0x7fff), lsb)), 16);
  const __m256i quiet = _mm256_or_si256(high, _mm256_set1_epi32(0x40));
  const __m256i nan = _mm256_castps_si256(_mm256_cmp_ps(v, v, _CMP_UNORD_Q));
  const __m256i bits = _mm256_blendv_epi8(rounded, quiet, nan);
  const __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(bits, bits), 0x08);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm256_castsi256_si128(packed));
}

PODSIM_AVX2 void reduce_vector(DataType type, ReduceOp op, std::uint8_t* dst,
                               const std::uint8_t* src, std::size_t count) {
  std::size_t i = 0;
  constexpr int kNearest = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
  for (; i + 8 <= count; i += 8) {
    switch (type) {
      case DataType::kFp32: {
        float* d = reinterpret_cast<float*>(dst) + i;
        const float* s = reinterpret_cast<const float*>(src) + i;
        _mm256_storeu_ps(d, apply8(op, _mm256_loadu_ps(d), _mm256_loadu_ps(s)));
        break;
      }
      case DataType::kFp16: {
        auto* d = reinterpret_cast<__m128i*>(dst + 2 * i);
        const auto* s = reinterpret_cast<const __m128i*>(src + 2 * i);
        const __m256 r =
            apply8(op, _mm256_cvtph_ps(_mm_loadu_si128(d)), _mm256_cvtph_ps(_mm_loadu_si128(s)));
        _mm_storeu_si128(d, _mm256_cvtps_ph(r, kNearest));
        break;
      }
      case DataType::kBf16:
        store_bf16(dst + 2 * i, apply8(op, load_bf16(dst + 2 * i), load_bf16(src + 2 * i)));
        break;
      case DataType::kInt32:
        return reduce_scalar(type, op, dst, src, count);
    }
  }
  const std::size_t element = size_of(type);
  reduce_scalar(type, op, dst + i * element, src + i * element, count - i);
}

PODSIM_AVX2 void store_floats_vector(DataType type, const float* values, std::size_t count,
                                     std::uint8_t* out) {
  constexpr int kNearest = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
  std::size_t i = 0;
  for (; i + 8 <= count; i += 8) {
    const __m256 v = _mm256_loadu_ps(values + i);
    if (type == DataType::kFp16) {
      _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 2 * i), _mm256_cvtps_ph(v, kNearest));
    } else {
      store_bf16(out + 2 * i, v);
    }
  }
  for (; i < count; ++i) set_element(type, out, i, values[i]);
}

bool cpu_has_vector_reduce() {
  static const bool has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("f16c");
  return has;
}
#endif

bool vector_reduce_allowed = true;

// Whether the vector code may run: allowed (tests compare the paths) and the CPU has it.
bool use_vector() {
#ifdef PODSIM_VECTOR_REDUCE
  return vector_reduce_allowed && cpu_has_vector_reduce();
#else
  return false;
#endif
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

float fp16_to_float(std::uint16_t bits) { return fp16_table()[bits]; }

std::uint16_t float_to_fp16(float value) {
  const std::uint32_t u = bits_of(value);
  const auto sign = static_cast<std::uint16_t>((u >> 16) & 0x8000u);
  if (std::isnan(value)) {  // quiet, the payload's top bits kept, as the CPU's converter does
    return static_cast<std::uint16_t>(sign | 0x7e00u | ((u >> 13) & 0x3ffu));
  }
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
#ifdef PODSIM_VECTOR_REDUCE
  if (type != DataType::kInt32 && use_vector()) return reduce_vector(type, op, dst, src, count);
#endif
  reduce_scalar(type, op, dst, src, count);
}

void allow_vector_reduce(bool allowed) { vector_reduce_allowed = allowed; }

void store_floats(DataType type, const float* values, std::size_t count, std::uint8_t* out) {
#ifdef PODSIM_VECTOR_REDUCE
  const bool half = type == DataType::kFp16 || type == DataType::kBf16;
  if (half && use_vector()) return store_floats_vector(type, values, count, out);
#endif
  for (std::size_t i = 0; i < count; ++i) set_element(type, out, i, values[i]);
}

namespace {

void reduce_scalar(DataType type, ReduceOp op, std::uint8_t* dst, const std::uint8_t* src,
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

}  // namespace

}  // namespace podsim::core
