// Element arithmetic of the TPC (hw/tpc/numerics.h): conversions against independent references
// and the special functions' accuracy against double precision, bounded by the ISA table.
#include "hw/tpc/numerics.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <string>

#include "hw/tpc/isa.h"

namespace podsim::tpc {
namespace {

// The bf16 nearest to f by comparing the two candidates around it in double precision.
std::uint16_t reference_bf16(float f) {
  const std::uint32_t u = bits_of(f);
  const std::uint32_t down = u & 0xFFFF0000u;
  const std::uint32_t up = down + 0x10000u;
  const double x = f, dd = std::fabs(x - float_of(down));
  if ((up & 0x7F800000u) == 0x7F800000u && (down & 0x7F800000u) != 0x7F800000u) {
    // Rounding up would reach infinity: it does when x is at least halfway to 2^128.
    const double limit = std::ldexp(1.0, 128) - std::ldexp(1.0, 127 - 8);
    if (std::fabs(x) >= limit) return static_cast<std::uint16_t>(up >> 16);
    return static_cast<std::uint16_t>(down >> 16);
  }
  const double du = std::fabs(float_of(up) - x);
  if (dd < du) return static_cast<std::uint16_t>(down >> 16);
  if (du < dd) return static_cast<std::uint16_t>(up >> 16);
  return static_cast<std::uint16_t>(((down >> 16) & 1) ? up >> 16 : down >> 16);
}

double f16_value(std::uint16_t h) {
  const int e = (h >> 10) & 0x1F, m = h & 0x3FF;
  const double sign = (h & 0x8000) ? -1 : 1;
  if (e == 0) return sign * std::ldexp(m, -24);
  if (e == 31) return m ? NAN : sign * INFINITY;
  return sign * std::ldexp(1024 + m, e - 25);
}

// The f16 nearest to x (ties to even) by searching the ordered positive encodings.
std::uint16_t reference_f16(float f) {
  const double x = std::fabs(static_cast<double>(f));
  const std::uint16_t sign = std::signbit(f) ? 0x8000 : 0;
  if (x >= 65520.0) return sign | 0x7C00;  // at or past halfway to 2^16
  std::uint16_t lo = 0, hi = 0x7BFF;
  while (lo < hi) {  // largest encoding <= x
    const std::uint16_t mid = static_cast<std::uint16_t>((lo + hi + 1) / 2);
    if (f16_value(mid) <= x)
      lo = mid;
    else
      hi = static_cast<std::uint16_t>(mid - 1);
  }
  if (lo == 0x7BFF) return sign | lo;
  const double dl = x - f16_value(lo), du = f16_value(static_cast<std::uint16_t>(lo + 1)) - x;
  const std::uint16_t pick = dl < du   ? lo
                             : du < dl ? static_cast<std::uint16_t>(lo + 1)
                                       : ((lo & 1) ? static_cast<std::uint16_t>(lo + 1) : lo);
  return sign | pick;
}

float random_float(std::mt19937& rng) {
  std::uint32_t u = rng();
  if ((u & 0x7F800000u) == 0x7F800000u) u &= 0xFF7FFFFFu;  // finite
  return float_of(u);
}

TEST(Numerics, Bf16RoundsToNearestEvenAndKeepsNanCanonical) {
  std::mt19937 rng(1);
  for (int i = 0; i < 200000; ++i) {
    const float f = random_float(rng);
    ASSERT_EQ(f32_to_bf16(f), reference_bf16(f)) << std::hexfloat << f;
    EXPECT_EQ(bits_of(bf16_to_f32(f32_to_bf16(f))) >> 16, f32_to_bf16(f));
  }
  EXPECT_EQ(f32_to_bf16(float_of(0x3F808000)), 0x3F80);  // tie, even stays
  EXPECT_EQ(f32_to_bf16(float_of(0x3F818000)), 0x3F82);  // tie, odd rounds up
  EXPECT_EQ(f32_to_bf16(float_of(0x7FA00001)), kCanonicalNanBf16);
  EXPECT_EQ(f32_to_bf16(INFINITY), 0x7F80);
}

TEST(Numerics, F16ConversionsAreExactOneWayAndNearestEvenTheOther) {
  for (std::uint32_t h = 0; h < 0x10000; ++h) {
    const double want = f16_value(static_cast<std::uint16_t>(h));
    const float got = f16_to_f32(static_cast<std::uint16_t>(h));
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(got));
    } else {
      ASSERT_EQ(static_cast<double>(got), want) << h;
      ASSERT_EQ(f32_to_f16(got), h) << "f16 round trip " << h;
    }
  }
  std::mt19937 rng(2);
  std::uniform_real_distribution<float> exponent(-30.0f, 17.0f);
  for (int i = 0; i < 200000; ++i) {
    const float f =
        std::ldexp(1.0f + (rng() % 8388608) / 8388608.0f, static_cast<int>(exponent(rng))) *
        ((rng() & 1) ? -1.0f : 1.0f);
    ASSERT_EQ(f32_to_f16(f), reference_f16(f)) << std::hexfloat << f;
  }
  EXPECT_EQ(f32_to_f16(NAN), kCanonicalNanF16);
}

TEST(Numerics, FloatToIntegerRoundsToEvenSaturatesAndMapsNanToZero) {
  EXPECT_EQ(f32_to_int(2.5f, -128, 127), 2);
  EXPECT_EQ(f32_to_int(3.5f, -128, 127), 4);
  EXPECT_EQ(f32_to_int(-2.5f, -128, 127), -2);
  EXPECT_EQ(f32_to_int(1000.0f, -128, 127), 127);
  EXPECT_EQ(f32_to_int(-1e30f, INT32_MIN, INT32_MAX), INT32_MIN);
  EXPECT_EQ(f32_to_int(4e9f, 0, UINT32_MAX), 4000000000LL);
  EXPECT_EQ(f32_to_int(NAN, -128, 127), 0);
}

TEST(Numerics, MinAndMaxFollowIeee2019) {
  EXPECT_EQ(bits_of(min_f32(0.0f, -0.0f)), 0x80000000u);
  EXPECT_EQ(bits_of(max_f32(-0.0f, 0.0f)), 0u);
  EXPECT_EQ(bits_of(min_f32(1.0f, NAN)), kCanonicalNanF32);
  EXPECT_EQ(max_f32(2.0f, -3.0f), 2.0f);
}

double reference(const std::string& name, double x) {
  if (name == "exp") return std::exp(x);
  if (name == "log") return std::log(x);
  if (name == "rcp") return 1.0 / x;
  if (name == "rsqrt") return 1.0 / std::sqrt(x);
  if (name == "sqrt") return std::sqrt(x);
  if (name == "tanh") return std::tanh(x);
  return 1.0 / (1.0 + std::exp(-x));
}

float evaluate(const std::string& name, float x) {
  if (name == "exp") return exp_f32(x);
  if (name == "log") return log_f32(x);
  if (name == "rcp") return rcp_f32(x);
  if (name == "rsqrt") return rsqrt_f32(x);
  if (name == "sqrt") return sqrt_f32(x);
  if (name == "tanh") return tanh_f32(x);
  return sigmoid_f32(x);
}

// Points spread over the tested range: uniform, log-uniform for wide ranges, both signs where
// the function takes them.
std::vector<float> samples(const std::string& name) {
  std::mt19937 rng(7);
  std::vector<float> xs;
  const auto uniform = [&](float lo, float hi, int n) {
    std::uniform_real_distribution<float> d(lo, hi);
    for (int i = 0; i < n; ++i) xs.push_back(d(rng));
  };
  const auto log_uniform = [&](float lo_exp, float hi_exp, bool both_signs, int n) {
    std::uniform_real_distribution<float> d(lo_exp, hi_exp);
    for (int i = 0; i < n; ++i) {
      const float v = std::pow(10.0f, d(rng));
      xs.push_back(both_signs && (rng() & 1) ? -v : v);
    }
  };
  if (name == "exp") uniform(-87.0f, 88.0f, 300000);
  if (name == "log") log_uniform(-30, 30, false, 300000);
  if (name == "rcp") log_uniform(-37, 37, true, 300000);
  if (name == "rsqrt" || name == "sqrt") log_uniform(-37, 37, false, 300000);
  if (name == "tanh") uniform(-20.0f, 20.0f, 300000), uniform(-1.0f, 1.0f, 300000);
  if (name == "sigmoid") uniform(-80.0f, 80.0f, 300000);
  return xs;
}

TEST(Numerics, SpecialFunctionsStayWithinTheirDocumentedUlp) {
  for (const AccuracyInfo& a : kAccuracy) {
    const std::string name = a.name;
    std::uint32_t worst = 0;
    float worst_x = 0;
    for (float x : samples(name)) {
      const double want = reference(name, static_cast<double>(x));
      const std::uint32_t d = ulp_distance(evaluate(name, x), static_cast<float>(want));
      if (d > worst) worst = d, worst_x = x;
    }
    std::printf("%-8s max %u ulp (at %.9g), documented %d\n", a.name, worst, worst_x, a.max_ulp);
    EXPECT_LE(worst, static_cast<std::uint32_t>(a.max_ulp)) << name << " at " << worst_x;
  }
}

TEST(Numerics, SpecialFunctionsHandleTheEdges) {
  EXPECT_EQ(exp_f32(100.0f), INFINITY);
  EXPECT_EQ(exp_f32(-200.0f), 0.0f);
  EXPECT_GT(exp_f32(-100.0f), 0.0f);  // subnormal, not flushed
  EXPECT_EQ(log_f32(0.0f), -INFINITY);
  EXPECT_EQ(bits_of(log_f32(-1.0f)), kCanonicalNanF32);
  EXPECT_EQ(log_f32(1.0f), 0.0f);
  EXPECT_NEAR(log_f32(1e-40f), std::log(1e-40), 1e-5);
  EXPECT_EQ(tanh_f32(30.0f), 1.0f);
  EXPECT_EQ(tanh_f32(-30.0f), -1.0f);
  EXPECT_EQ(sigmoid_f32(-200.0f), 0.0f);
  EXPECT_EQ(sigmoid_f32(200.0f), 1.0f);
  EXPECT_EQ(bits_of(rsqrt_f32(-1.0f)), kCanonicalNanF32);
}

}  // namespace
}  // namespace podsim::tpc
