// The TPC ISA table and its encoding (hw/tpc/isa.h).
#include "hw/tpc/isa.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>

#include "tests/tpc/random_program.h"

namespace podsim::tpc {
namespace {

using ::testing::HasSubstr;

std::string problem_of(const Bundle& b) {
  const EncodedBundle bytes = encode_bundle(b);
  const auto p = check_bundle(decode_bundle(bytes.data()));
  return p.value_or("");
}

TEST(Isa, TheTableHasWhatTheCoreAndAssemblerAssume) {
  EXPECT_EQ(kBundleBytes, 32);
  EXPECT_EQ(kSlotBits, 48);
  EXPECT_EQ(kVRegisters, 40);
  EXPECT_EQ(lanes(Dtype::kF32), 64);
  EXPECT_EQ(lanes(Dtype::kBf16), 128);
  EXPECT_EQ(lanes(Dtype::kI8), 256);
  for (int i = 0; i < kOpCount; ++i) {
    const OpInfo& o = kOps[i];
    EXPECT_EQ(find_op(o.slot, o.opcode), static_cast<Op>(i)) << o.name;
    EXPECT_LT(o.latency, kLatencyClassCount) << o.name;
    EXPECT_LT(o.float_latency, kLatencyClassCount) << o.name;
  }
  EXPECT_EQ(find_ops("add").size(), 2u);  // SPU and VPU
  EXPECT_EQ(find_dtype("bf16"), Dtype::kBf16);
  EXPECT_EQ(find_cond("ge"), Cond::kGe);
}

TEST(Isa, EveryOperationEncodesAndDecodesToItself) {
  std::mt19937 rng(3);
  for (int i = 0; i < kOpCount; ++i) {
    for (int n = 0; n < 200; ++n) {
      Bundle b;
      std::optional<std::uint32_t> immediate;
      b.slot(kOps[i].slot) =
          testing::random_instruction(rng, static_cast<Op>(i), 0, 8, true, immediate);
      b.immediate = immediate.value_or(0);
      const EncodedBundle bytes = encode_bundle(b);
      const DecodedBundle d = decode_bundle(bytes.data());
      ASSERT_EQ(check_bundle(d), std::nullopt) << kOps[i].name;
      ASSERT_EQ(d.bundle, b) << kOps[i].name;
    }
  }
}

Bundle with(Slot slot, Instruction in, std::uint32_t immediate = 0) {
  Bundle b;
  b.slot(slot) = in;
  b.immediate = immediate;
  return b;
}

Instruction vadd(int d, int a, int b) {
  Instruction in;
  in.nop = false;
  in.op = Op::kVpuAdd;
  in.dst = static_cast<std::uint8_t>(d);
  in.a = static_cast<std::uint8_t>(a);
  in.b = static_cast<std::uint8_t>(b);
  return in;
}

TEST(Isa, TheCoreRejectsWhatNoInstructionCanMean) {
  EXPECT_EQ(problem_of(with(Slot::kVpu, vadd(1, 2, 3))), "");
  EXPECT_THAT(problem_of(with(Slot::kVpu, vadd(40, 2, 3))), HasSubstr("v40 does not exist"));
  Instruction shift = vadd(1, 2, 3);
  shift.op = Op::kVpuShl;
  EXPECT_THAT(problem_of(with(Slot::kVpu, shift)), HasSubstr("does not take type f32"));
  Instruction cmp = vadd(0, 2, 3);
  cmp.op = Op::kVpuCmp;
  EXPECT_THAT(problem_of(with(Slot::kVpu, cmp)), HasSubstr("sp0 and vp0 cannot be written"));
  Instruction stray = vadd(1, 2, 3);
  stray.c = 5;
  EXPECT_THAT(problem_of(with(Slot::kVpu, stray)), HasSubstr("field src_c is 5 but unused"));
  EXPECT_THAT(problem_of(with(Slot::kVpu, vadd(1, 2, 3), 7)),
              HasSubstr("an immediate no slot uses"));
  Instruction narrow = vadd(1, 2, 3);
  narrow.op = Op::kVpuCvt;
  narrow.dtype = Dtype::kI8;
  narrow.modifier = static_cast<std::uint8_t>(Dtype::kF32);
  EXPECT_THAT(problem_of(with(Slot::kVpu, narrow)), HasSubstr("takes two steps"));
  Instruction store;
  store.nop = false;
  store.op = Op::kStoreStTnsr;
  store.pred_vector = true;
  EXPECT_THAT(problem_of(with(Slot::kStore, store)), HasSubstr("takes no vector predicate"));

  EncodedBundle bytes = encode_bundle(with(Slot::kVpu, vadd(1, 2, 3)));
  bytes[31] = 1;
  EXPECT_THAT(check_bundle(decode_bundle(bytes.data())).value_or(""), HasSubstr("reserved bits"));
  bytes = encode_bundle(Bundle{});
  bytes[12] = 0x7F;  // opcode 127 in the VPU slot (bit 96)
  EXPECT_THAT(check_bundle(decode_bundle(bytes.data())).value_or(""),
              HasSubstr("undefined opcode 127 in the vpu slot"));
}

TEST(Isa, KernelBinariesCarryTheirHeaderAndAreCheckedWhole) {
  std::mt19937 rng(4);
  const std::vector<Bundle> program = testing::random_program(rng, 50);
  std::vector<std::uint8_t> binary = serialize_binary(program, Generation::kGaudi2);
  EXPECT_EQ(binary.size(), 32u + 50u * 32u);
  EXPECT_EQ(binary_bundle_count(binary.data()), 50u);
  EXPECT_EQ(parse_binary(binary), program);
  std::vector<std::uint8_t> truncated(binary.begin(), binary.end() - 1);
  EXPECT_THROW(parse_binary(truncated), std::invalid_argument);
  binary[0] = 'X';
  EXPECT_THROW(parse_binary(binary), std::invalid_argument);
  binary = serialize_binary(program, Generation::kGaudi2);
  binary[32 + 5 * 32 + 31] = 0x80;  // reserved bits of bundle 5
  try {
    parse_binary(binary);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("bundle 5: reserved bits"));
  }
}

}  // namespace
}  // namespace podsim::tpc
