#include "hw/tpc/numerics.h"

#include <cmath>
#include <limits>

namespace podsim::tpc {
namespace {

// Rounds `value` (with `drop` low bits to remove) to nearest, ties to even.
std::uint32_t round_shift(std::uint32_t value, int drop) {
  if (drop <= 0) return value << -drop;
  if (drop >= 32) return 0;
  const std::uint32_t kept = value >> drop;
  const std::uint32_t rest = value & ((1u << drop) - 1);
  const std::uint32_t half = 1u << (drop - 1);
  return kept + ((rest > half || (rest == half && (kept & 1))) ? 1 : 0);
}

float power_of_two(int n) { return float_of(static_cast<std::uint32_t>(n + 127) << 23); }

// x * 2^n for x in [0.5, 2] and n in [-152, 128], rounding once: the first factor keeps the
// product normal (exact), only the last one can round into the subnormal range.
float scale_by_power_of_two(float x, int n) {
  if (n > 127) return x * power_of_two(127) * power_of_two(n - 127);
  if (n < -126) return x * power_of_two(n + 64) * power_of_two(-64);
  return x * power_of_two(n);
}

constexpr float kLog2E = 1.44269504088896341f;
constexpr float kLn2Hi = 0.693145751953125f;       // 12 significant bits: n * hi is exact
constexpr float kLn2Lo = 1.42860682030941723e-6f;  // ln 2 - hi
constexpr float kRoundMagic = 12582912.0f;         // 1.5 * 2^23: x + magic - magic rounds to int

}  // namespace

float bf16_to_f32(std::uint16_t h) { return float_of(static_cast<std::uint32_t>(h) << 16); }

std::uint16_t f32_to_bf16(float f) {
  const std::uint32_t u = bits_of(f);
  if (is_nan_bits(u)) return kCanonicalNanBf16;
  const std::uint32_t rounded = u + 0x7FFF + ((u >> 16) & 1);  // carries into the exponent
  return static_cast<std::uint16_t>(rounded >> 16);
}

float f16_to_f32(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000) << 16;
  const int exp = (h >> 10) & 0x1F;
  const std::uint32_t mant = h & 0x3FF;
  if (exp == 0x1F) return float_of(sign | 0x7F800000 | (mant << 13));
  if (exp == 0) {
    // Subnormal (or zero): mant * 2^-24, exact in binary32.
    const float magnitude = static_cast<float>(mant) * float_of(0x33800000);  // 2^-24
    return float_of(sign | bits_of(magnitude));
  }
  return float_of(sign | static_cast<std::uint32_t>(exp - 15 + 127) << 23 | mant << 13);
}

std::uint16_t f32_to_f16(float f) {
  const std::uint32_t u = bits_of(f);
  if (is_nan_bits(u)) return kCanonicalNanF16;
  const auto sign = static_cast<std::uint16_t>((u >> 16) & 0x8000);
  const int exp = static_cast<int>((u >> 23) & 0xFF);
  const std::uint32_t mant = u & 0x7FFFFF;
  if (exp == 0xFF) return static_cast<std::uint16_t>(sign | 0x7C00);  // infinity
  const int e16 = exp - 127 + 15;
  if (e16 >= 0x1F) return static_cast<std::uint16_t>(sign | 0x7C00);
  if (e16 <= 0) {
    if (exp == 0 || e16 < -10) return sign;  // below half the smallest subnormal
    // Subnormal: the full significand (with its leading 1) shifted into 10 bits.
    const std::uint32_t sig = mant | 0x800000;
    return static_cast<std::uint16_t>(sign | round_shift(sig, 14 - e16));
  }
  // Normal: a carry out of the mantissa bumps the exponent, up to infinity, as it should.
  const std::uint32_t combined = static_cast<std::uint32_t>(e16) << 10 | (mant >> 13);
  const std::uint32_t rest = mant & 0x1FFF;
  const std::uint32_t up = rest > 0x1000 || (rest == 0x1000 && (combined & 1)) ? 1 : 0;
  return static_cast<std::uint16_t>(sign | (combined + up));
}

std::int64_t f32_to_int(float f, std::int64_t lo, std::int64_t hi) {
  if (f != f) return 0;
  if (f <= static_cast<float>(lo)) return lo;
  if (f >= static_cast<float>(hi)) return hi;
  const double r = std::nearbyint(static_cast<double>(f));  // exact: |f| < 2^32 here
  if (r < static_cast<double>(lo)) return lo;
  if (r > static_cast<double>(hi)) return hi;
  return static_cast<std::int64_t>(r);
}

float min_f32(float a, float b) {
  if (a != a || b != b) return float_of(kCanonicalNanF32);
  if (a < b) return a;
  if (b < a) return b;
  return float_of(bits_of(a) | bits_of(b));  // equal: -0 wins over +0
}

float max_f32(float a, float b) {
  if (a != a || b != b) return float_of(kCanonicalNanF32);
  if (a > b) return a;
  if (b > a) return b;
  return float_of(bits_of(a) & bits_of(b));  // equal: +0 wins over -0
}

float exp_f32(float x) {
  if (x != x) return float_of(kCanonicalNanF32);
  if (x > 88.72283935546875f) return std::numeric_limits<float>::infinity();
  if (x < -103.972084045410156f) return 0.0f;
  const float n = (x * kLog2E + kRoundMagic) - kRoundMagic;
  const float r = (x - n * kLn2Hi) - n * kLn2Lo;  // |r| <= ln2 / 2, exact up to rounding
  // e^r on [-ln2/2, ln2/2]: Taylor to r^7 (truncation below 2^-27 relative).
  float p = 1.0f / 5040.0f;
  p = p * r + 1.0f / 720.0f;
  p = p * r + 1.0f / 120.0f;
  p = p * r + 1.0f / 24.0f;
  p = p * r + 1.0f / 6.0f;
  p = p * r + 0.5f;
  p = p * r * r + r;  // r + r^2 (1/2 + r/6 + ...)
  return scale_by_power_of_two(1.0f + p, static_cast<int>(n));
}

float log_f32(float x) {
  if (x != x || x < 0.0f) return float_of(kCanonicalNanF32);
  if (x == 0.0f) return -std::numeric_limits<float>::infinity();
  if (x == std::numeric_limits<float>::infinity()) return x;
  int bias = 0;
  if (x < float_of(0x00800000)) {  // subnormal: scale into the normal range first
    x *= 8388608.0f;               // 2^23
    bias = 23;
  }
  const std::uint32_t u = bits_of(x);
  int e = static_cast<int>((u >> 23) & 0xFF) - 127;
  float m = float_of((u & 0x7FFFFF) | 0x3F800000);  // [1, 2)
  if (m > 1.41421356f) {
    m *= 0.5f;  // exact
    ++e;
  }
  e -= bias;
  const float s = (m - 1.0f) / (m + 1.0f);
  const float s2 = s * s;
  // 2 atanh(s) = 2 (s + s^3/3 + ... + s^11/11); |s| < 0.172.
  float q = 2.0f / 11.0f;
  q = q * s2 + 2.0f / 9.0f;
  q = q * s2 + 2.0f / 7.0f;
  q = q * s2 + 2.0f / 5.0f;
  q = q * s2 + 2.0f / 3.0f;
  const float log_m = 2.0f * s + s * s2 * q;
  const float fe = static_cast<float>(e);
  return fe * kLn2Hi + (fe * kLn2Lo + log_m);
}

float rcp_f32(float x) { return canonical(1.0f / x); }

float sqrt_f32(float x) { return canonical(std::sqrt(x)); }

float rsqrt_f32(float x) { return canonical(1.0f / std::sqrt(x)); }

float tanh_f32(float x) {
  if (x != x) return float_of(kCanonicalNanF32);
  const float ax = std::fabs(x);
  if (ax < 0.4f) {
    // Taylor to x^15: the next term is below 2^-32 relative here.
    const float x2 = x * x;
    float p = -929569.0f / 638512875.0f;
    p = p * x2 + 21844.0f / 6081075.0f;
    p = p * x2 - 1382.0f / 155925.0f;
    p = p * x2 + 62.0f / 2835.0f;
    p = p * x2 - 17.0f / 315.0f;
    p = p * x2 + 2.0f / 15.0f;
    p = p * x2 - 1.0f / 3.0f;
    return x + x * x2 * p;
  }
  if (ax > 9.1f) return std::copysign(1.0f, x);  // 1 - tanh < 2^-26
  const float t = 1.0f - 2.0f / (exp_f32(2.0f * ax) + 1.0f);
  return std::copysign(t, x);
}

float sigmoid_f32(float x) {
  if (x != x) return float_of(kCanonicalNanF32);
  return 1.0f / (1.0f + exp_f32(-x));
}

std::uint32_t ulp_distance(float a, float b) {
  if (a != a || b != b) return (a != a && b != b) ? 0 : 0xFFFFFFFFu;
  // Map the floats onto a line of integers where neighbours differ by one.
  const auto key = [](float f) {
    const std::int64_t u = bits_of(f);
    return (u & 0x80000000) ? -(u & 0x7FFFFFFF) : u;
  };
  const std::int64_t d = key(a) - key(b);
  return static_cast<std::uint32_t>(d < 0 ? -d : d);
}

}  // namespace podsim::tpc
