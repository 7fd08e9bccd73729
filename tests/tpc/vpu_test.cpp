// The C++ vector datapath (hw/tpc/vpu.h).
#include "hw/tpc/vpu.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "hw/tpc/numerics.h"

namespace podsim::tpc {
namespace {

TEST(Vpu, EveryOperationHasAFunctionForEveryTypeItTakes) {
  for (int i = 0; i < kOpCount; ++i) {
    if (kOps[i].slot != Slot::kVpu) continue;
    for (int t = 0; t < kDtypeCount; ++t) {
      const bool takes_it = (kOps[i].dtypes >> t) & 1;
      EXPECT_EQ(vpu_function(static_cast<Op>(i), static_cast<Dtype>(t)) != nullptr, takes_it)
          << kOps[i].name << "." << kDtypes[t].name;
    }
  }
}

Vector filled_f32(float start, float step) {
  Vector v;
  for (int i = 0; i < 64; ++i) v.f32[i] = start + step * static_cast<float>(i);
  return v;
}

Vector run(Op op, Dtype t, const Vector& a, const Vector& b, std::uint8_t modifier = 0) {
  Vector out{};
  VpuArgs args;
  args.a = &a;
  args.b = &b;
  args.d = &a;
  args.modifier = modifier;
  args.out = &out;
  vpu_function(op, t)(args);
  return out;
}

TEST(Vpu, FloatArithmeticRoundsOncePerOperation) {
  const Vector a = filled_f32(1.0f, 0.5f), b = filled_f32(0.25f, 1.0f);
  const Vector sum = run(Op::kVpuAdd, Dtype::kF32, a, b);
  for (int i = 0; i < 64; ++i) EXPECT_EQ(sum.f32[i], a.f32[i] + b.f32[i]);
  // mac: d + a*b with the product rounded first.
  const Vector mac = run(Op::kVpuMac, Dtype::kF32, a, b);
  for (int i = 0; i < 64; ++i) EXPECT_EQ(mac.f32[i], a.f32[i] + a.f32[i] * b.f32[i]);
  // bf16: computed in f32, rounded to bf16.
  Vector x, y;
  for (int i = 0; i < 128; ++i) {
    x.u16[i] = f32_to_bf16(1.0f + static_cast<float>(i) / 64.0f);
    y.u16[i] = f32_to_bf16(3.0f / 128.0f * static_cast<float>(i));
  }
  const Vector p = run(Op::kVpuMul, Dtype::kBf16, x, y);
  for (int i = 0; i < 128; ++i) {
    EXPECT_EQ(p.u16[i], f32_to_bf16(bf16_to_f32(x.u16[i]) * bf16_to_f32(y.u16[i])));
  }
}

TEST(Vpu, IntegersWrapShiftAndCompareByTheirSignedness) {
  Vector a, b;
  for (int i = 0; i < 256; ++i) {
    a.u8[i] = static_cast<std::uint8_t>(250 + i);
    b.u8[i] = static_cast<std::uint8_t>(i % 9);
  }
  const Vector sum = run(Op::kVpuAdd, Dtype::kU8, a, b);
  for (int i = 0; i < 256; ++i) EXPECT_EQ(sum.u8[i], static_cast<std::uint8_t>(a.u8[i] + b.u8[i]));
  const Vector sra = run(Op::kVpuShr, Dtype::kI8, a, b);
  const Vector srl = run(Op::kVpuShr, Dtype::kU8, a, b);
  for (int i = 0; i < 256; ++i) {
    EXPECT_EQ(sra.i8[i], static_cast<std::int8_t>(a.i8[i] >> (b.u8[i] % 8)));
    EXPECT_EQ(srl.u8[i], static_cast<std::uint8_t>(a.u8[i] >> (b.u8[i] % 8)));
  }
  VMask mask;
  VpuArgs args;
  args.a = &a;
  args.b = &b;
  args.out_mask = &mask;
  args.modifier = static_cast<std::uint8_t>(Cond::kLt);
  vpu_function(Op::kVpuCmp, Dtype::kI8)(args);
  for (int i = 0; i < 256; ++i) EXPECT_EQ(mask.test(i), a.i8[i] < b.i8[i]) << i;
  vpu_function(Op::kVpuCmp, Dtype::kU8)(args);
  for (int i = 0; i < 256; ++i) EXPECT_EQ(mask.test(i), a.u8[i] < b.u8[i]) << i;
}

TEST(Vpu, ReductionsAddPairwiseAndBroadcast) {
  Vector a;
  for (int i = 0; i < 64; ++i) a.f32[i] = (i % 2 ? 1e8f : 1.0f);
  const Vector sum = run(Op::kVpuReduceAdd, Dtype::kF32, a, a);
  // Pairwise: lanes i and i+32 pair up like with like, so the ones survive exactly.
  float level[64];
  for (int i = 0; i < 64; ++i) level[i] = a.f32[i];
  for (int w = 32; w >= 1; w /= 2)
    for (int i = 0; i < w; ++i) level[i] = level[i] + level[i + w];
  for (int i = 0; i < 64; ++i) EXPECT_EQ(sum.f32[i], level[0]);
  Vector m;
  for (int i = 0; i < 128; ++i) m.i16[i] = static_cast<std::int16_t>(i * 37 % 101 - 50);
  const Vector mx = run(Op::kVpuReduceMax, Dtype::kI16, m, m);
  for (int i = 0; i < 128; ++i) EXPECT_EQ(mx.i16[i], 50);
}

TEST(Vpu, ShuffleBroadcastAndLaneNumbersMoveLanes) {
  Vector a, idx;
  for (int i = 0; i < 64; ++i) {
    a.f32[i] = static_cast<float>(i) * 2.0f;
    idx.u32[i] = static_cast<std::uint32_t>(63 - i + 64);  // taken modulo 64
  }
  const Vector rev = run(Op::kVpuShuffle, Dtype::kF32, a, idx);
  for (int i = 0; i < 64; ++i) EXPECT_EQ(rev.f32[i], a.f32[63 - i]);
  VpuArgs args;
  Vector out;
  args.a = &a;
  args.b_integer = 70;  // lane 6
  args.out = &out;
  vpu_function(Op::kVpuBcast, Dtype::kF32)(args);
  for (int i = 0; i < 64; ++i) EXPECT_EQ(out.f32[i], 12.0f);
  vpu_function(Op::kVpuLaneId, Dtype::kU16)(args);
  for (int i = 0; i < 128; ++i) EXPECT_EQ(out.u16[i], i);
}

// Marsaglia's xorshift from state 1: 1 ^ 1 << 13 = 8193, unchanged by >> 17, then 8193 ^ 8193 << 5.
TEST(Vpu, TheRandomGeneratorStepsEveryLaneByXorshift) {
  Vector state, out;
  for (int i = 0; i < 64; ++i) state.u32[i] = static_cast<std::uint32_t>(i) + 1;
  state.u32[63] = 0;  // the state no step leaves
  VpuArgs args;
  args.a = &state;
  args.out = &out;
  ASSERT_NE(vpu_function(Op::kVpuLfsr, Dtype::kU32), nullptr);
  EXPECT_EQ(vpu_function(Op::kVpuLfsr, Dtype::kU16), nullptr);  // 32-bit lanes only
  vpu_function(Op::kVpuLfsr, Dtype::kU32)(args);
  EXPECT_EQ(out.u32[0], 270369u);
  for (int i = 0; i < 63; ++i) EXPECT_EQ(out.u32[i], xorshift32(state.u32[i]));
  EXPECT_EQ(out.u32[63], 0u);
  // Distinct states stay distinct (the step is a bijection on 32 bits).
  for (int i = 1; i < 63; ++i) EXPECT_NE(out.u32[i], out.u32[i - 1]);
}

TEST(Vpu, ConversionsWidenByLaneGroupAndNarrowByTwo) {
  Vector bf, lo, hi;
  for (int i = 0; i < 128; ++i) bf.u16[i] = f32_to_bf16(static_cast<float>(i) - 0.5f);
  VpuArgs args;
  args.a = &bf;
  args.modifier = static_cast<std::uint8_t>(Dtype::kBf16);
  args.out = &lo;
  args.lane_group = 0;
  vpu_function(Op::kVpuCvt, Dtype::kF32)(args);
  args.out = &hi;
  args.lane_group = 1;
  vpu_function(Op::kVpuCvt, Dtype::kF32)(args);
  for (int i = 0; i < 64; ++i) {
    EXPECT_EQ(lo.f32[i], static_cast<float>(i) - 0.5f);
    EXPECT_EQ(hi.f32[i], static_cast<float>(i + 64) - 0.5f);
  }
  Vector packed;
  VpuArgs narrow;
  narrow.a = &lo;
  narrow.b = &hi;
  narrow.modifier = static_cast<std::uint8_t>(Dtype::kF32);
  narrow.out = &packed;
  vpu_function(Op::kVpuCvt, Dtype::kBf16)(narrow);
  for (int i = 0; i < 128; ++i) EXPECT_EQ(packed.u16[i], bf.u16[i]);
  // f32 -> i16 saturates and rounds to even.
  Vector big = filled_f32(-40000.5f, 1250.25f);
  narrow.a = &big;
  narrow.b = &big;
  vpu_function(Op::kVpuCvt, Dtype::kI16)(narrow);
  for (int i = 0; i < 64; ++i) {
    const double want = std::nearbyint(static_cast<double>(big.f32[i]));
    EXPECT_EQ(packed.i16[i], static_cast<std::int16_t>(std::clamp(want, -32768.0, 32767.0)));
  }
}

TEST(Vpu, ScalarsBroadcastInTheLaneType) {
  Vector v;
  broadcast_scalar(bits_of(1.5f), Dtype::kBf16, v);
  EXPECT_EQ(v.u16[77], f32_to_bf16(1.5f));
  broadcast_scalar(0x1234ABCD, Dtype::kU8, v);
  EXPECT_EQ(v.u8[200], 0xCD);
  std::uint8_t element[2];
  scalar_to_element(bits_of(-2.0f), Dtype::kF16, element);
  EXPECT_EQ(float_of(element_to_scalar(element, Dtype::kF16)), -2.0f);
  const std::uint8_t minus_one[1] = {0xFF};
  EXPECT_EQ(element_to_scalar(minus_one, Dtype::kI8), 0xFFFFFFFFu);
  EXPECT_EQ(element_to_scalar(minus_one, Dtype::kU8), 0xFFu);
}

}  // namespace
}  // namespace podsim::tpc
