// The TPC's arithmetic on single elements, defined once for the core, the kernel references and
// the RTL comparison: binary32, bfloat16 and binary16 with round-to-nearest-even and gradual
// underflow, the one NaN every float operation returns (canonical quiet NaN), integer
// conversions that saturate, and the special functions (exp, log, rcp, rsqrt, sqrt, tanh,
// sigmoid) as fixed sequences of binary32 operations, so results are the same on every machine
// (no libm); their accuracy is measured by tests and documented in docs/tpc/isa.md.
// Captures: bit-exact results of every element operation. Ignores: floating-point exception
// flags and other rounding modes.
#pragma once

#include <cstdint>
#include <cstring>

namespace podsim::tpc {

inline constexpr std::uint32_t kCanonicalNanF32 = 0x7FC00000;
inline constexpr std::uint16_t kCanonicalNanBf16 = 0x7FC0;
inline constexpr std::uint16_t kCanonicalNanF16 = 0x7E00;

inline std::uint32_t bits_of(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
inline float float_of(std::uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
inline bool is_nan_bits(std::uint32_t u) { return (u & 0x7FFFFFFF) > 0x7F800000; }
// A binary32 result as the TPC writes it: any NaN becomes the canonical one.
inline float canonical(float f) { return f != f ? float_of(kCanonicalNanF32) : f; }

// bfloat16 and binary16 <-> binary32. Widening is exact; narrowing rounds to nearest even,
// keeps subnormals (binary16) and gives the canonical NaN for any NaN.
float bf16_to_f32(std::uint16_t h);
std::uint16_t f32_to_bf16(float f);
float f16_to_f32(std::uint16_t h);
std::uint16_t f32_to_f16(float f);

// Float to integer: round to nearest even, saturate to [lo, hi]; NaN gives 0.
std::int64_t f32_to_int(float f, std::int64_t lo, std::int64_t hi);

// IEEE 754-2019 minimum and maximum: NaN in gives NaN out, and -0 counts as less than +0.
float min_f32(float a, float b);
float max_f32(float a, float b);

// Special functions: binary32 in and out, NaN in gives NaN out.
float exp_f32(float x);
float log_f32(float x);
float rcp_f32(float x);
float rsqrt_f32(float x);
float sqrt_f32(float x);
float tanh_f32(float x);
float sigmoid_f32(float x);

// Distance in units in the last place between two binary32 values (0 when equal, also for two
// NaNs; counts across zero), for accuracy tests.
std::uint32_t ulp_distance(float a, float b);

}  // namespace podsim::tpc
