// The TPC executor (hw/tpc/executor.h): the exposed pipeline, loops, predication, tensors with
// padding and culling, local memories, and the errors that stop a kernel.
#include "hw/tpc/executor.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "hw/tpc/assembler.h"
#include "hw/tpc/flat_memory.h"
#include "hw/tpc/numerics.h"

namespace podsim::tpc {
namespace {

using ::testing::HasSubstr;

constexpr std::uint64_t kBase = 0x10000;

struct KernelRun {
  explicit KernelRun(const std::string& text, ExecutorConfig config = {})
      : memory(kBase, 1 << 20),
        program(std::make_shared<Program>(assemble(text).bundles, Generation::kGaudi2)),
        executor(config, memory) {}
  Executor::State go(int limit = 100000) {
    executor.start(program, launch);
    while (limit-- > 0) {
      if (executor.step() != Executor::State::kRunning) break;
    }
    return executor.state();
  }
  float* f32(std::uint64_t offset) { return reinterpret_cast<float*>(memory.at(kBase + offset)); }
  FlatMemory memory;
  LaunchState launch;
  std::shared_ptr<const Program> program;
  Executor executor;
};

// The public TPC's example: MUL has latency 4, so the three bundles after it still see V0 = 0.
// A float multiply's result is there 6 bundles after it issues (tpc_llvm's FMA pipe), an
// integer multiply's after 4 (isa.yaml's latency classes).
TEST(Executor, ResultsBecomeVisibleOnlyAfterTheirLatency) {
  KernelRun r(R"(
    mov.f32 v1, 1.0
    mov.f32 v2, 2.0
    mov.i32 v11, 3
    nop
    nop
    mul.f32 v0, v1, v2
    mul.f32 v3, v0, 4.0
    mul.f32 v4, v0, 4.0
    mul.f32 v5, v0, 4.0
    mul.f32 v6, v0, 4.0
    mul.f32 v7, v0, 4.0
    mul.f32 v8, v0, 4.0
    mul.i32 v10, v11, v11
    add.i32 v12, v10, 1
    add.i32 v13, v10, 1
    add.i32 v14, v10, 1
    add.i32 v15, v10, 1
    nop
    nop
    nop
    nop
    nop
    nop
    halt
  )");
  ASSERT_EQ(r.go(), Executor::State::kHalted) << r.executor.error();
  EXPECT_EQ(r.executor.vreg(3).f32[0], 0.0f);
  EXPECT_EQ(r.executor.vreg(7).f32[9], 0.0f);
  EXPECT_EQ(r.executor.vreg(8).f32[63], 8.0f);
  EXPECT_EQ(r.executor.vreg(14).i32[0], 1);
  EXPECT_EQ(r.executor.vreg(15).i32[5], 10);
}

TEST(Executor, CheckingModeReportsEveryEarlyRead) {
  ExecutorConfig config;
  config.check_hazards = true;
  KernelRun r("mov.i32 s1, 5\nadd.i32 s2, s1, 1\nnop\nnop\nadd.i32 s3, s1, 1\nhalt\n", config);
  ASSERT_EQ(r.go(), Executor::State::kHalted);
  ASSERT_EQ(r.executor.hazards().size(), 1u);
  EXPECT_EQ(r.executor.hazards()[0].pc, 1u);
  EXPECT_EQ(r.executor.hazards()[0].reg, "s1");
  EXPECT_EQ(r.executor.hazards()[0].slot, Slot::kSpu);
}

TEST(Executor, LoopsNestRunWithoutOverheadAndBreakOnAJump) {
  KernelRun r(R"(
.sched
    mov.i32 s1, 0
    mov.i32 s10, 0
    mov.i32 s2, 5
    mov.i32 s4, 3
    loop s1, s2, outer_end
      mov.i32 s3, 0
      loop s3, s4, inner_end
        add.i32 s10, s10, 1
inner_end:
      cmp.eq.i32 sp1, s1, 3
      (sp1) jmp out
outer_end:
    mov.i32 s11, 99
out:
    halt
.endsched
)");
  ASSERT_EQ(r.go(), Executor::State::kHalted) << r.executor.error();
  EXPECT_EQ(r.executor.sreg(10), 12u);  // four passes of the outer loop (0..3) times three
  EXPECT_EQ(r.executor.sreg(1), 3u);
  EXPECT_EQ(r.executor.sreg(11), 0u);  // the jump skipped it
}

TEST(Executor, CountingDownLoopsStopAtTheirLimit) {
  KernelRun r(
      ".sched\nmov.i32 s1, 10\nmov.i32 s2, 0\nmov.i32 s5, 0\nloop.-3 s1, s2, e\nadd.i32 s5, s5, "
      "s1\ne: halt\n.endsched\n");
  ASSERT_EQ(r.go(), Executor::State::kHalted);
  EXPECT_EQ(r.executor.sreg(5), 10u + 7u + 4u + 1u);
}

TEST(Executor, VectorPredicatesMaskLanesAndScalarOnesSkipInstructions) {
  KernelRun r(R"(
.sched
    lane_id.i32 v0
    cmp.lt.i32 vp2, v0, 10
    mov.f32 v1, 5.0
    (vp2) mov.f32 v1, 7.0
    (!vp2) add.i32 v3, v0, 100
    cmp.eq.i32 sp1, s0, 0
    (!sp1) mov.i32 s7, 1
    (sp1) mov.i32 s8, 1
    halt
.endsched
)");
  ASSERT_EQ(r.go(), Executor::State::kHalted);
  EXPECT_EQ(r.executor.vreg(1).f32[9], 7.0f);
  EXPECT_EQ(r.executor.vreg(1).f32[10], 5.0f);
  EXPECT_EQ(r.executor.vreg(3).i32[9], 0);
  EXPECT_EQ(r.executor.vreg(3).i32[10], 110);
  EXPECT_EQ(r.executor.sreg(7), 0u);
  EXPECT_EQ(r.executor.sreg(8), 1u);
}

TEST(Executor, TensorsPadOutOfBoundsReadsAndDropOutOfBoundsWrites) {
  KernelRun r(R"(
.sched
    set_i i2, 0b00011, -3      // (-3, -3): column -3 of row -3
    add_i i3, i2, 0b00010, 4   // (-3, 1)
    ld_tnsr.f32 v0, i3, 0      // row 1, lanes -3..60: 3 lanes of padding first
    st_tnsr.f32 i3, 1, v0      // same place in the output: the 3 first lanes fall outside
    ld_tnsr.f32 v1, i2, 0      // row -3: all padding
    halt
.endsched
)");
  // Input: 10 x 4 f32 (row-major, dim0 = 10), padding -1.
  r.launch.tensors[0] = TensorDescriptor::dense(kBase, Dtype::kF32, {10, 4}, bits_of(-1.0f));
  r.launch.tensors[1] = TensorDescriptor::dense(kBase + 4096, Dtype::kF32, {10, 4});
  for (int i = 0; i < 40; ++i) r.f32(0)[i] = static_cast<float>(i);
  for (int i = 0; i < 64; ++i) r.f32(4096)[i] = -7.0f;
  ASSERT_EQ(r.go(), Executor::State::kHalted) << r.executor.error();
  const Vector& v0 = r.executor.vreg(0);
  EXPECT_EQ(v0.f32[0], -1.0f);
  EXPECT_EQ(v0.f32[3], 10.0f);  // element (0, 1)
  EXPECT_EQ(v0.f32[12], 19.0f);
  EXPECT_EQ(v0.f32[13], -1.0f);  // past the row
  EXPECT_EQ(r.executor.vreg(1).f32[20], -1.0f);
  EXPECT_EQ(r.f32(4096)[9], -7.0f);  // row 0 untouched
  for (int i = 0; i < 10; ++i) EXPECT_EQ(r.f32(4096)[10 + i], 10.0f + i);
  EXPECT_EQ(r.f32(4096)[20], -7.0f);  // row 2 untouched
}

TEST(Executor, ConvertingLoadsAndStoresComputeInF32ForNarrowTypes) {
  KernelRun r(R"(
.sched
    ld_tnsr.f32.bf16 v0, i0, 0
    mul.f32 v1, v0, 3.0
    st_tnsr.bf16.f32 i0, 1, v1
    ld_g.bf16 s5, i0, 0
    st_g.bf16 i0, 1, s5
    halt
.endsched
)");
  r.launch.tensors[0] = TensorDescriptor::dense(kBase, Dtype::kBf16, {100});
  r.launch.tensors[1] = TensorDescriptor::dense(kBase + 1024, Dtype::kBf16, {100});
  auto* in = reinterpret_cast<std::uint16_t*>(r.memory.at(kBase));
  for (int i = 0; i < 100; ++i) in[i] = f32_to_bf16(static_cast<float>(i) + 0.25f);
  r.launch.slice_start = {1, 0, 0, 0, 0};
  ASSERT_EQ(r.go(), Executor::State::kHalted) << r.executor.error();
  auto* out = reinterpret_cast<std::uint16_t*>(r.memory.at(kBase + 1024));
  EXPECT_EQ(out[0], 0);
  EXPECT_EQ(out[1], in[1]);  // st_g copied element 1 over the product
  for (int i = 2; i <= 64; ++i) EXPECT_EQ(out[i], f32_to_bf16(bf16_to_f32(in[i]) * 3.0f)) << i;
  EXPECT_EQ(out[65], 0);
}

TEST(Executor, LocalMemoriesHoldWhatWasStored) {
  KernelRun r(
      ".sched\nlane_id.i32 v0\nst_vlm 512, v0\nld_vlm v1, 512\nmov.i32 s1, 42\nst_slm 8, "
      "s1\nld_slm s2, 8\nhalt\n.endsched\n");
  ASSERT_EQ(r.go(), Executor::State::kHalted) << r.executor.error();
  EXPECT_EQ(r.executor.vreg(1).i32[17], 17);
  EXPECT_EQ(r.executor.sreg(2), 42u);
}

TEST(Executor, FaultsStopTheKernelWithABundleAndAReason) {
  KernelRun past("nop\n");
  EXPECT_EQ(past.go(), Executor::State::kFailed);
  EXPECT_EQ(past.executor.error(), "bundle 0: ran past the last bundle without halt");
  KernelRun vlm("ld_vlm v0, 81920\nhalt\n");
  EXPECT_EQ(vlm.go(), Executor::State::kFailed);
  EXPECT_THAT(vlm.executor.error(), HasSubstr("outside the 81920-byte memory"));
  KernelRun unmapped("ld_tnsr.f32 v0, i0, 0\nhalt\n");
  unmapped.launch.tensors[0] = TensorDescriptor::dense(0x900000000, Dtype::kF32, {64});
  EXPECT_EQ(unmapped.go(), Executor::State::kFailed);
  EXPECT_THAT(unmapped.executor.error(), HasSubstr("tensor 0 at 0x900000000 is not mapped"));
  KernelRun invalid("ld_tnsr.f32 v0, i0, 3\nhalt\n");
  invalid.launch.tensors[3].dims = 9;
  EXPECT_EQ(invalid.go(), Executor::State::kFailed);
  EXPECT_THAT(invalid.executor.error(), HasSubstr("tensor 3 is not a valid tensor"));
  KernelRun mismatch("ld_tnsr.f32 v0, i0, 0\nhalt\n");
  mismatch.launch.tensors[0] = TensorDescriptor::dense(kBase, Dtype::kBf16, {64});
  EXPECT_EQ(mismatch.go(), Executor::State::kFailed);
  EXPECT_THAT(mismatch.executor.error(), HasSubstr("ld_tnsr.f32 on tensor 0 of bf16"));
}

}  // namespace
}  // namespace podsim::tpc
