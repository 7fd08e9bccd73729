// The TPC assembler, scheduler and disassembler (hw/tpc/assembler.h, scheduler.h).
#include "hw/tpc/assembler.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>

#include "hw/tpc/scheduler.h"
#include "tests/tpc/random_program.h"

namespace podsim::tpc {
namespace {

using ::testing::HasSubstr;

const char* const kAddKernel = R"(
.kernel add_f32                  // optional name
        get_i s2, i1, 0          // a line is one bundle
.sched
        get_i s1, i0, 0
        loop s1, s2, done
        mov_i i2, i0
        set_i i2, 0b00001, s1
        ld_tnsr.f32 v0, i2, 0
        ld_tnsr.f32 v1, i2, 1
        add.f32 v2, v0, v1
        st_tnsr.f32 i2, 2, v2
done:   halt
.endsched
)";

TEST(Assembler, AssemblesTheDocumentedExampleAndWaitsOutLatencies) {
  const Assembly a = assemble(kAddKernel);
  EXPECT_EQ(a.kernel_name, "add_f32");
  const std::string text = disassemble(a.bundles);
  // The add waits four bundles for the second load, the store four for the add.
  int ld1 = -1, add = -1, st = -1;
  for (std::size_t pc = 0; pc < a.bundles.size(); ++pc) {
    for (const Instruction& in : a.bundles[pc].slots) {
      if (in.nop) continue;
      if (in.op == Op::kLoadLdTnsr && in.b == 1) ld1 = static_cast<int>(pc);
      if (in.op == Op::kVpuAdd) add = static_cast<int>(pc);
      if (in.op == Op::kStoreStTnsr) st = static_cast<int>(pc);
    }
  }
  EXPECT_EQ(add, ld1 + 4) << text;
  EXPECT_EQ(st, add + 4) << text;
  EXPECT_EQ(assemble(text).bundles, a.bundles);
}

TEST(Assembler, DisassemblyAssemblesBackToTheSameBinary) {
  std::mt19937 rng(11);
  for (int round = 0; round < 300; ++round) {
    const std::vector<Bundle> program = testing::random_program(rng, 1 + rng() % 40);
    const std::string text = disassemble(program);
    Assembly back;
    ASSERT_NO_THROW(back = assemble(text)) << text;
    ASSERT_EQ(back.bundles.size(), program.size());
    for (std::size_t pc = 0; pc < program.size(); ++pc) {
      ASSERT_EQ(back.bundles[pc], program[pc]) << "bundle " << pc << "\n" << text;
    }
  }
}

std::string error_of(const std::string& text, AssembleOptions options = {}) {
  try {
    assemble(text, options);
  } catch (const AsmError& e) {
    return e.what();
  }
  return "no error";
}

TEST(Assembler, ErrorsNameLineAndColumn) {
  EXPECT_EQ(error_of("  add.f32 v1, v2, v40\n"),
            "<input>:1:19: 'v40' does not exist (40 registers)");
  EXPECT_EQ(error_of("halt\n  frob v1\n"), "<input>:2:3: unknown operation 'frob'");
  EXPECT_EQ(error_of("add.f32 v1, v2, v3 ; sub.f32 v4, v5, v6\n"),
            "<input>:1:22: two instructions for the vpu slot in one bundle");
  EXPECT_EQ(error_of("add.f32 v1, v2, 1.5 ; add.i32 s1, s1, 2\n"),
            "<input>:1:23: the bundle's one immediate is already taken by another value");
  EXPECT_EQ(error_of("jmp nowhere\n"), "<input>:1:5: label 'nowhere' is not defined");
  EXPECT_EQ(error_of(".sched\nhalt\n"), "<input>:1:1: .sched is never closed by .endsched");
  EXPECT_EQ(error_of("add.{T} v1, v2, v3\n"), "<input>:1:5: '{T}' is not defined");
  EXPECT_EQ(error_of("loop s1, s2, x\nx: halt\n"),
            "<input>:1:14: the loop's body is empty: 'x' is the next bundle");
  EXPECT_EQ(error_of("add.i32 v1, v2, 1.5\n"), "<input>:1:17: '1.5': an integer is needed here");
  EXPECT_EQ(error_of("cmp vp1, v2, v3\n"), "<input>:1:1: cmp needs a comparison: cmp.lt, ...");
  EXPECT_EQ(error_of("cmp.f32 vp1, v2, v3\n"),
            "<input>:1:1: 'f32' is not a comparison (eq ne lt le gt ge)");
  EXPECT_EQ(error_of("cvt.i8.f32 v1, v2, v3\n"),
            "<input>:1:1: cvt: narrowing f32 to i8 takes two steps");
  EXPECT_EQ(error_of("add v1, s2\n"),
            "<input>:1:1: add takes 3 operands (d:v, a:v, b:v|s|imm), not 2");
  EXPECT_THAT(error_of("add i1, i2, i3\n"),
              HasSubstr("1:1: the operands fit no form of add: add d:s"));
  EXPECT_EQ(error_of("\n"), "<input>:1:1: the program has no instructions");
  EXPECT_EQ(error_of("x: halt\nx: halt\n"), "<input>:2:1: label 'x' twice");
}

TEST(Assembler, DefinitionsMakeOneSourceServeSeveralTypes) {
  AssembleOptions o;
  o.defines["T"] = "bf16";
  const Assembly a = assemble("add.{T} v1, v2, 0.5\nhalt\n", o);
  EXPECT_EQ(a.bundles[0].slot(Slot::kVpu).dtype, Dtype::kBf16);
  EXPECT_EQ(a.bundles[0].immediate, 0x3F000000u);  // binary32 0.5, rounded to bf16 when broadcast
}

// .rep repeats its lines with a counter, nested; braces take integer expressions of counters
// and numeric definitions. The result equals the same code written out.
TEST(Assembler, RepeatsLinesWithACounter) {
  const Assembly unrolled = assemble(R"(
.sched
.rep 2 J
.rep 2 K
        ld_vlm v{2*J+K+1}, {(2*J+K)*256+N}
.endrep
.endrep
        halt
.endsched
)",
                                     {"t", {{"N", "512"}}});
  const Assembly written = assemble(R"(
.sched
        ld_vlm v1, 512
        ld_vlm v2, 768
        ld_vlm v3, 1024
        ld_vlm v4, 1280
        halt
.endsched
)");
  EXPECT_EQ(unrolled.bundles, written.bundles);
  const auto error = [](const std::string& text) {
    try {
      assemble(text, {"t", {{"T", "bf16"}}});
    } catch (const AsmError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_THAT(error(".rep 2 J\nhalt\n"), HasSubstr(".rep is never closed by .endrep"));
  EXPECT_THAT(error(".endrep\n"), HasSubstr(".endrep without .rep"));
  EXPECT_THAT(error(".rep 2 T\nhalt\n.endrep\n"), HasSubstr("counter 'T' is already a name"));
  EXPECT_THAT(error("mov.i32 s1, {T*2}\n"), HasSubstr("'T' is 'bf16', not a number"));
  EXPECT_THAT(error("mov.i32 s1, {4/0}\n"), HasSubstr("a division by 0"));
  EXPECT_THAT(error("mov.i32 s1, {(4}\n"), HasSubstr("a '(' without ')'"));
  EXPECT_THAT(error(".rep x J\n.endrep\n"), HasSubstr(".rep takes a count"));
}

TEST(Scheduler, APredicateWaitsForItsCompareAndAWriteForItsReaders) {
  const Assembly a = assemble(R"(
.sched
  cmp.lt.i32 sp1, s1, 10
  (sp1) add.i32 s2, s2, 1
  mov.i32 s1, 7
  halt
.endsched
)");
  // cmp at 0; its predicate lands 2 bundles later (tpc_llvm's SPRF write at E2), so the
  // predicated add reads sp1 at 2; mov writes s1, which cmp read at 0, so it may go as early as
  // the first free SPU slot with a free immediate: bundle 1.
  EXPECT_EQ(a.bundles[0].slot(Slot::kSpu).op, Op::kSpuCmp);
  EXPECT_EQ(a.bundles[2].slot(Slot::kSpu).op, Op::kSpuAdd);
  EXPECT_EQ(a.bundles[1].slot(Slot::kSpu).op, Op::kSpuMov);
  // The block drains before halt: the add at 2 lands at 6, so halt sits at 5.
  EXPECT_EQ(a.bundles.size(), 6u);
  EXPECT_EQ(a.bundles[5].slot(Slot::kSpu).op, Op::kSpuHalt);
}

TEST(Scheduler, LocalStoresAndLoadsKeepTheirOrder) {
  std::vector<ScheduleItem> block(2);
  block[0].instruction.nop = false;
  block[0].instruction.op = Op::kStoreStVlm;
  block[0].instruction.b_kind = BKind::kImmediate;
  block[0].immediate = 0;
  block[1].instruction.nop = false;
  block[1].instruction.op = Op::kLoadLdVlm;
  block[1].instruction.b_kind = BKind::kImmediate;
  block[1].immediate = 0;
  const BlockSchedule s = schedule_block(block, Generation::kGaudi2);
  EXPECT_EQ(s.bundle_of[0], 0);
  EXPECT_EQ(s.bundle_of[1], 1);
}

// Random text and mutated programs: the assembler either assembles or reports an AsmError.
TEST(Assembler, MalformedInputNeverCrashesIt) {
  std::mt19937 rng(12);
  const std::vector<std::string> pieces = {
      "add",      ".f32",      ".bf16", ".lt",        "v1",  "s2",         "i3",    "vp4",
      "sp0",      ",",         ";",     " ",          "(",   ")",          "!",     "0x",
      "1.5",      "-",         "e",     "9999999999", "nan", "0f7fc00000", "label", ":",
      ".sched",   ".endsched", "{T}",   "{",          "}",   "loop",       "jmp",   "ld_tnsr",
      "cvt",      "0b",        "\n",    "\t",         "//",  "#",          "\x01",  "\xff",
      "halt",     "st_tnsr",   "i31",   "v39",        "v40", "s35",        "..",    "..f32",
      "loop.-16", "loop.0",    "@"};
  int assembled = 0;
  for (int i = 0; i < 3000; ++i) {
    std::string text;
    const int n = 1 + static_cast<int>(rng() % 30);
    for (int k = 0; k < n; ++k) text += pieces[rng() % pieces.size()];
    try {
      assemble(text);
      ++assembled;
    } catch (const AsmError&) {
    }
  }
  for (int i = 0; i < 1500; ++i) {
    std::string text = disassemble(testing::random_program(rng, 1 + rng() % 12));
    const int mutations = 1 + static_cast<int>(rng() % 4);
    for (int m = 0; m < mutations && !text.empty(); ++m) {
      const std::size_t at = rng() % text.size();
      switch (rng() % 3) {
        case 0:
          text.erase(at, 1 + rng() % 4);
          break;
        case 1:
          text.insert(at, 1, static_cast<char>(rng() % 256));
          break;
        default:
          text[at] = static_cast<char>(32 + rng() % 95);
          break;
      }
    }
    try {
      assemble(text);
      ++assembled;
    } catch (const AsmError&) {
    }
  }
  EXPECT_GT(assembled, 0);
}

}  // namespace
}  // namespace podsim::tpc
