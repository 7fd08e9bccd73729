// Element formats and reductions: conversions round to nearest even (checked against the
// compiler's own _Float16 and against hand-worked ties), every 16-bit pattern survives a round
// trip, and reductions follow IEEE-754 per element.
#include "core/numeric.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

namespace podsim::core {
namespace {

float from_bits(std::uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

TEST(Numeric, Bf16RoundsToNearestEven) {
  EXPECT_EQ(float_to_bf16(1.0f), 0x3f80);
  EXPECT_EQ(float_to_bf16(-2.0f), 0xc000);
  // Halfway between 1.0 (0x3f80) and 1.0078125 (0x3f81): to the even one.
  EXPECT_EQ(float_to_bf16(1.0f + std::ldexp(1.0f, -8)), 0x3f80);
  // Halfway between 0x3f81 and 0x3f82: to the even one, upwards.
  EXPECT_EQ(float_to_bf16(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3f82);
  // Just above halfway rounds up.
  EXPECT_EQ(float_to_bf16(from_bits(0x3f808001)), 0x3f81);
  EXPECT_EQ(float_to_bf16(std::numeric_limits<float>::infinity()), 0x7f80);
  EXPECT_TRUE(std::isnan(bf16_to_float(float_to_bf16(std::nanf("")))));
  // The largest float rounds to infinity.
  EXPECT_EQ(float_to_bf16(std::numeric_limits<float>::max()), 0x7f80);
}

TEST(Numeric, Fp16RoundsToNearestEven) {
  EXPECT_EQ(float_to_fp16(1.0f), 0x3c00);
  EXPECT_EQ(float_to_fp16(65504.0f), 0x7bff);
  EXPECT_EQ(float_to_fp16(65520.0f), 0x7c00);  // halfway to the next binade: to infinity
  EXPECT_EQ(float_to_fp16(65519.0f), 0x7bff);
  EXPECT_EQ(float_to_fp16(std::ldexp(1.0f, -24)), 0x0001);  // smallest subnormal
  EXPECT_EQ(float_to_fp16(std::ldexp(1.0f, -25)), 0x0000);  // halfway to zero: even
  EXPECT_EQ(float_to_fp16(1.0f + std::ldexp(1.0f, -11)), 0x3c00);
  EXPECT_EQ(float_to_fp16(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);
  EXPECT_EQ(float_to_fp16(-0.0f), 0x8000);
}

TEST(Numeric, Fp16AgreesWithTheCompilersConversion) {
  std::mt19937 rng(5);
  for (int i = 0; i < 200000; ++i) {
    // Random bit patterns spread over every binade, fp16's range and far outside it.
    const float f = from_bits(static_cast<std::uint32_t>(rng()));
    if (std::isnan(f)) continue;
    const _Float16 h = static_cast<_Float16>(f);
    std::uint16_t expected;
    std::memcpy(&expected, &h, sizeof expected);
    ASSERT_EQ(float_to_fp16(f), expected) << std::hexfloat << f;
  }
}

TEST(Numeric, EverySixteenBitPatternRoundTrips) {
  for (std::uint32_t b = 0; b < 0x10000; ++b) {
    const auto bits = static_cast<std::uint16_t>(b);
    const float h = fp16_to_float(bits);
    if (!std::isnan(h)) {
      EXPECT_EQ(float_to_fp16(h), bits) << std::hex << b;
    }
    const float f = bf16_to_float(bits);
    if (!std::isnan(f)) {
      EXPECT_EQ(float_to_bf16(f), bits) << std::hex << b;
    }
  }
}

TEST(Numeric, SumsHalfFormatsThroughFloatWithOneRounding) {
  std::vector<std::uint8_t> a(4), b(4);
  set_element(DataType::kBf16, a.data(), 0, 1.0);
  set_element(DataType::kBf16, b.data(), 0, std::ldexp(1.0, -8));  // half an ulp of 1.0
  set_element(DataType::kBf16, a.data(), 1, 1.0078125);            // 0x3f81, odd
  set_element(DataType::kBf16, b.data(), 1, std::ldexp(1.0, -8));
  reduce_into(DataType::kBf16, ReduceOp::kSum, a.data(), b.data(), 2);
  EXPECT_EQ(element_value(DataType::kBf16, a.data(), 0), 1.0);       // tie to even: stays
  EXPECT_EQ(element_value(DataType::kBf16, a.data(), 1), 1.015625);  // tie to even: up
}

TEST(Numeric, MinMaxPreferNumbersAndSumPropagatesNan) {
  std::vector<std::uint8_t> a(8), b(8);
  set_element(DataType::kFp32, a.data(), 0, std::nan(""));
  set_element(DataType::kFp32, b.data(), 0, 3.0);
  set_element(DataType::kFp32, a.data(), 1, -1.0);
  set_element(DataType::kFp32, b.data(), 1, 2.0);
  auto min = a;
  reduce_into(DataType::kFp32, ReduceOp::kMin, min.data(), b.data(), 2);
  EXPECT_EQ(element_value(DataType::kFp32, min.data(), 0), 3.0);
  EXPECT_EQ(element_value(DataType::kFp32, min.data(), 1), -1.0);
  auto max = a;
  reduce_into(DataType::kFp32, ReduceOp::kMax, max.data(), b.data(), 2);
  EXPECT_EQ(element_value(DataType::kFp32, max.data(), 1), 2.0);
  auto sum = a;
  reduce_into(DataType::kFp32, ReduceOp::kSum, sum.data(), b.data(), 2);
  EXPECT_TRUE(std::isnan(element_value(DataType::kFp32, sum.data(), 0)));
  EXPECT_EQ(element_value(DataType::kFp32, sum.data(), 1), 1.0);
}

TEST(Numeric, Int32SumsWrap) {
  std::vector<std::uint8_t> a(4), b(4);
  set_element(DataType::kInt32, a.data(), 0, std::numeric_limits<std::int32_t>::max());
  set_element(DataType::kInt32, b.data(), 0, 1);
  reduce_into(DataType::kInt32, ReduceOp::kSum, a.data(), b.data(), 1);
  EXPECT_EQ(element_value(DataType::kInt32, a.data(), 0), std::numeric_limits<std::int32_t>::min());
}

TEST(Numeric, NamesParseBothWays) {
  for (auto t : {DataType::kFp32, DataType::kBf16, DataType::kFp16, DataType::kInt32}) {
    EXPECT_EQ(parse_data_type(to_string(t)), t);
  }
  for (auto op : {ReduceOp::kSum, ReduceOp::kMin, ReduceOp::kMax}) {
    EXPECT_EQ(parse_reduce_op(to_string(op)), op);
  }
  EXPECT_FALSE(parse_data_type("double"));
  EXPECT_FALSE(parse_reduce_op("prod"));
  EXPECT_EQ(size_of(DataType::kBf16), 2u);
}

}  // namespace
}  // namespace podsim::core

namespace podsim::core {
namespace {

// Operand pairs that reach every corner: random bit patterns of the type (NaNs with payloads,
// infinities, subnormals, both zeros) and equal values of both signs.
std::vector<std::uint8_t> corner_operands(DataType type, std::size_t count, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<std::uint8_t> out(count * size_of(type));
  for (auto& byte : out) byte = static_cast<std::uint8_t>(rng());
  return out;
}

// Regression: of two NaNs a sum kept whichever operand the compiler put first, so a sanitizer
// build's scalar path kept the first's payload and its vector path the second's. Now both keep
// the first operand's, quieted.
TEST(Numeric, ASumOfTwoNansKeepsTheFirstOperandsQuietedInBothPaths) {
  for (bool vector : {true, false}) {
    allow_vector_reduce(vector);
    std::vector<std::uint32_t> fp32(16, 0x7fa00001u), fp32_src(16, 0xffc00002u);
    reduce_into(DataType::kFp32, ReduceOp::kSum, reinterpret_cast<std::uint8_t*>(fp32.data()),
                reinterpret_cast<const std::uint8_t*>(fp32_src.data()), fp32.size());
    EXPECT_EQ(fp32, std::vector<std::uint32_t>(16, 0x7fe00001u)) << "vector " << vector;
    std::vector<std::uint16_t> bf16(9, 0xfff0u), bf16_src(9, 0x7feeu);
    reduce_into(DataType::kBf16, ReduceOp::kSum, reinterpret_cast<std::uint8_t*>(bf16.data()),
                reinterpret_cast<const std::uint8_t*>(bf16_src.data()), bf16.size());
    EXPECT_EQ(bf16, std::vector<std::uint16_t>(9, 0xfff0u)) << "vector " << vector;
  }
  allow_vector_reduce(true);
}

// The vector path and the scalar path give the same bits for every type, operation and corner
// (counts that are not a multiple of eight take both in one call), so a run gives the same
// results on a machine with AVX2 and F16C as on one without.
TEST(Numeric, VectorAndScalarReductionsAgreeBitForBit) {
  for (DataType type : {DataType::kFp32, DataType::kBf16, DataType::kFp16, DataType::kInt32}) {
    for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kMin, ReduceOp::kMax}) {
      const std::size_t count = 100003;
      const auto a = corner_operands(type, count, 1), b = corner_operands(type, count, 2);
      auto vector = a, scalar = a;
      allow_vector_reduce(true);
      reduce_into(type, op, vector.data(), b.data(), count);
      allow_vector_reduce(false);
      reduce_into(type, op, scalar.data(), b.data(), count);
      allow_vector_reduce(true);
      ASSERT_EQ(vector, scalar) << to_string(type) << " " << to_string(op);
    }
  }
}

TEST(Numeric, MinAndMaxOfEqualZerosKeepTheFirstOperand) {
  for (bool vector : {true, false}) {
    allow_vector_reduce(vector);
    std::vector<float> a(8, -0.0f), b(8, 0.0f);
    auto* bytes = reinterpret_cast<std::uint8_t*>(a.data());
    reduce_into(DataType::kFp32, ReduceOp::kMin, bytes, reinterpret_cast<std::uint8_t*>(b.data()),
                8);
    for (float x : a) EXPECT_TRUE(std::signbit(x)) << vector;
  }
  allow_vector_reduce(true);
}

TEST(Numeric, BulkConversionFromFloatsMatchesSetElement) {
  std::mt19937 rng(9);
  std::vector<float> values(1003);
  for (float& v : values) v = from_bits(static_cast<std::uint32_t>(rng()));
  for (DataType type : {DataType::kBf16, DataType::kFp16}) {
    std::vector<std::uint8_t> bulk(values.size() * 2), one(values.size() * 2);
    store_floats(type, values.data(), values.size(), bulk.data());
    for (std::size_t i = 0; i < values.size(); ++i) set_element(type, one.data(), i, values[i]);
    EXPECT_EQ(bulk, one) << to_string(type);
  }
}

TEST(Numeric, NansStayQuietWithTheirPayloadsTopBits) {
  EXPECT_EQ(float_to_fp16(from_bits(0x7fa00000u)), 0x7f00);  // signalling in, quiet out
  EXPECT_EQ(float_to_fp16(from_bits(0xffc02000u)), 0xfe01);
  const float widened = fp16_to_float(0x7c01);  // a signalling fp16 NaN widens quiet
  EXPECT_TRUE(std::isnan(widened));
  std::uint32_t bits;
  std::memcpy(&bits, &widened, sizeof bits);
  EXPECT_EQ(bits, 0x7fc02000u);
}

}  // namespace
}  // namespace podsim::core
