// The graph API's checks, the compiler's passes and the recipe format, without a device.
#include "synapse/recipe.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "drm/habanalabs_accel.h"
#include "hw/mme/mme_registers.h"
#include "synapse/compiler.h"

namespace podsim::synapse {
namespace {

tpc::KernelRequest elementwise(const char* kernel, std::vector<std::uint32_t> shape) {
  return tpc::KernelRequest{kernel, Dtype::kF32, {}, std::move(shape), {}};
}

// x -> relu -> t1 -> relu -> t2 -> relu -> t3 -> relu -> y, all temporaries the same size.
Graph chain(int links) {
  Graph g;
  TensorId in = g.tensor("x", Dtype::kF32, {1024, 4}, TensorKind::kPersistent);
  for (int i = 0; i < links; ++i) {
    const bool last = i + 1 == links;
    const TensorId out = g.tensor(last ? "y" : "t" + std::to_string(i), Dtype::kF32, {1024, 4},
                                  last ? TensorKind::kPersistent : TensorKind::kWorkspace);
    g.kernel("relu" + std::to_string(i), elementwise("relu", {1024, 4}), {in, out});
    in = out;
  }
  return g;
}

TEST(SynapseGraph, RefusesWhatDoesNotFitWithTheNodeAndTensorNamed) {
  Graph g;
  const TensorId a = g.tensor("a", Dtype::kF32, {16, 16});
  const TensorId b = g.tensor("b", Dtype::kBf16, {16, 16});
  const TensorId small = g.tensor("small", Dtype::kF32, {4});
  const auto message = [](auto f) {
    try {
      f();
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message([&] { g.tensor("a", Dtype::kF32, {1}); }), "tensor a: defined twice");
  EXPECT_EQ(message([&] {
              g.tensor("z", Dtype::kF32, {4, 0});
            }),
            "tensor z: sizes [4, 0] (each must be at least 1)");
  EXPECT_EQ(message([&] {
              g.kernel("n", elementwise("relu", {16, 16}), {a, b});
            }),
            "node n: out (b) is bf16, the operation needs f32");
  EXPECT_EQ(message([&] {
              g.kernel("n", elementwise("relu", {16, 16}), {a});
            }),
            "node n: relu takes more tensors than the 1 given (out has none)");
  EXPECT_EQ(message([&] {
              g.kernel("n", elementwise("relu", {16, 16}), {a, a, a});
            }),
            "node n: relu takes 2 tensors, 3 given");
  EXPECT_NE(message([&] {
              g.kernel("n", elementwise("nope", {16}), {a, a});
            }).find("node n: "),
            std::string::npos);
  mme::GemmDesc gemm;
  gemm.m = gemm.n = gemm.k = 16;
  EXPECT_EQ(message([&] { g.gemm("mm", a, a, small, gemm); }),
            "node mm: c (small) holds 4 elements, the operation spans 256");
  EXPECT_EQ(message([&] { g.copy("cp", a, small); }),
            "node cp: copies a (1024 bytes) to small (16 bytes)");
  EXPECT_EQ(message([&] { g.copy("cp", a, 7); }), "node cp: tensor id 7 is not in the graph");
}

// Regression: GEMMs differing only in their operands' offsets (two attention heads) once had
// the same signature, so a session's cache ran the first's recipe for both.
TEST(SynapseGraph, TheSignatureTellsGemmOffsetsApart) {
  const auto graph = [](std::uint64_t offset) {
    Graph g;
    const TensorId a = g.tensor("a", Dtype::kF32, {64, 64});
    const TensorId c = g.tensor("c", Dtype::kF32, {64, 64});
    mme::GemmDesc gemm;
    gemm.m = gemm.n = gemm.k = 16;
    gemm.lda = gemm.ldb = gemm.ldc = 64;
    g.gemm("mm", a, a, c, gemm, false, {offset, 0, offset});
    return g.signature();
  };
  EXPECT_NE(graph(0), graph(16));
  EXPECT_EQ(graph(16), graph(16));
}

TEST(SynapseCompiler, RefusesAWorkspaceTensorReadBeforeItIsWritten) {
  Graph g;
  const TensorId t = g.tensor("t", Dtype::kF32, {64});
  const TensorId y = g.tensor("y", Dtype::kF32, {64}, TensorKind::kPersistent);
  g.kernel("relu", elementwise("relu", {64}), {t, y});
  try {
    compile(g, Target::gaudi1());
    FAIL() << "compiled";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "node relu: reads workspace tensor t before any node writes it");
  }
}

Target unfused() {
  Target t = Target::gaudi1();
  t.fuse = false;
  return t;
}

// Temporaries of a chain run one after another, so the planner reuses their bytes: two slots
// serve any length of chain.
TEST(SynapseCompiler, PlansTheWorkspaceByLifetime) {
  const Recipe r = compile(chain(6), unfused());
  const std::uint64_t one = 1024 * 4 * 4;
  EXPECT_EQ(r.workspace_bytes, 2 * one);
  for (std::size_t i = 1; i < r.stages.size(); ++i)
    EXPECT_EQ(r.stages[i].waits, std::vector<std::uint32_t>{static_cast<std::uint32_t>(i - 1)});
}

// An MME GEMM and a TPC kernel that share no data run side by side: neither waits for the
// other, and their temporaries do not share bytes; the node that needs both waits for both.
TEST(SynapseCompiler, IndependentEnginesRunSideBySideWithSeparateMemory) {
  Graph g;
  const TensorId a = g.tensor("a", Dtype::kF32, {128, 128}, TensorKind::kPersistent);
  const TensorId mm = g.tensor("mm", Dtype::kF32, {128, 128});
  const TensorId r = g.tensor("r", Dtype::kF32, {128, 128});
  const TensorId y = g.tensor("y", Dtype::kF32, {128, 128}, TensorKind::kPersistent);
  mme::GemmDesc gemm;
  gemm.m = gemm.n = gemm.k = 128;
  g.gemm("mm", a, a, mm, gemm);
  g.kernel("relu", elementwise("relu", {128, 128}), {a, r});
  g.kernel("add", elementwise("add", {128, 128}), {mm, r, y});
  const Recipe rec = compile(g, unfused());
  ASSERT_EQ(rec.stages.size(), 3u);
  EXPECT_TRUE(rec.stages[1].waits.empty());
  EXPECT_EQ(rec.stages[2].waits, (std::vector<std::uint32_t>{0, 1}));
  const RecipeTensor& t_mm = rec.tensors[static_cast<std::size_t>(mm)];
  const RecipeTensor& t_r = rec.tensors[static_cast<std::size_t>(r)];
  EXPECT_TRUE(t_mm.offset + t_mm.bytes <= t_r.offset || t_r.offset + t_r.bytes <= t_mm.offset);
  // The GEMM is dealt out to both MMEs (128 rows each... here one tile of rows: one engine).
  EXPECT_EQ(rec.stages[0].jobs.size(), 1u);
  EXPECT_EQ(rec.stages[0].jobs[0].relocations.size(), 3u);  // a, b, c
  // Every TPC job relocates its binary and its tensors.
  for (const EngineJob& j : rec.stages[2].jobs) {
    EXPECT_EQ(j.relocations.size(), 4u);
    EXPECT_TRUE(std::any_of(j.relocations.begin(), j.relocations.end(),
                            [](const Relocation& x) { return x.section == kProgramSection; }));
  }
}

// A weight gradient recorded before the data gradient the next kernel needs: the compiler
// issues the data gradient first, so that the kernel waits for it alone and runs beside the
// weight gradient; in program order it would wait for both GEMMs.
TEST(SynapseCompiler, IssuesTheGemmTheTpcsWaitForFirst) {
  Graph g;
  const TensorId x = g.tensor("x", Dtype::kF32, {1024, 1024}, TensorKind::kPersistent);
  const TensorId w = g.tensor("w", Dtype::kF32, {128, 1024}, TensorKind::kPersistent);
  const TensorId dw = g.tensor("dw", Dtype::kF32, {1024, 1024}, TensorKind::kPersistent);
  const TensorId t = g.tensor("t", Dtype::kF32, {1024, 1024});
  const TensorId dx = g.tensor("dx", Dtype::kF32, {128, 1024});
  const TensorId y = g.tensor("y", Dtype::kF32, {128, 1024}, TensorKind::kPersistent);
  g.kernel("relu_bwd", elementwise("relu", {1024, 1024}), {x, t});
  mme::GemmDesc wgrad;
  wgrad.m = wgrad.n = wgrad.k = 1024;
  g.gemm("wgrad", t, t, dw, wgrad);
  mme::GemmDesc dgrad;
  dgrad.m = 128;
  dgrad.n = dgrad.k = 1024;
  g.gemm("dgrad", w, t, dx, dgrad);
  g.kernel("next", elementwise("relu", {128, 1024}), {dx, y});
  const auto names = [](const Recipe& r) {
    std::vector<std::string> v;
    for (const Stage& s : r.stages) v.push_back(s.node);
    return v;
  };
  Target target = unfused();
  const Recipe ordered = compile(g, target);
  EXPECT_EQ(names(ordered), (std::vector<std::string>{"relu_bwd", "dgrad", "wgrad", "next"}));
  EXPECT_EQ(ordered.stages[3].waits, (std::vector<std::uint32_t>{0, 1}));  // not the wgrad
  target.order = false;
  const Recipe in_program_order = compile(g, target);
  EXPECT_EQ(names(in_program_order),
            (std::vector<std::string>{"relu_bwd", "wgrad", "dgrad", "next"}));
  EXPECT_EQ(in_program_order.stages[3].waits, (std::vector<std::uint32_t>{0, 2}));
}

// In-place updates keep program order: the update waits for the GEMM that read the weights.
// The same chain fused: one launch of a kernel the compiler wrote, its intermediates nowhere in
// memory, the kernel's binary in the recipe's program.
TEST(SynapseCompiler, FusesAnElementwiseChainIntoOneLaunch) {
  const Recipe r = compile(chain(6), Target::gaudi1());
  ASSERT_EQ(r.stages.size(), 1u);
  EXPECT_EQ(r.stages[0].node, "relu0+relu1+relu2+relu3+relu4+relu5");
  EXPECT_EQ(r.workspace_bytes, 0u);
  ASSERT_EQ(r.program.size(), 1u);
  EXPECT_EQ(r.program[0].key, "fused+relu+relu+relu+relu+relu+relu>1.f32");
  EXPECT_FALSE(r.program[0].code.empty());
  for (const RecipeTensor& t : r.tensors) {
    if (!t.persistent) {
      EXPECT_EQ(t.bytes, 0u) << t.name;
    }
  }
}

TEST(SynapseCompiler, AnInPlaceUpdateWaitsForEarlierReaders) {
  Graph g;
  const TensorId w = g.tensor("w", Dtype::kF32, {64, 64}, TensorKind::kPersistent);
  const TensorId v = g.tensor("v", Dtype::kF32, {64, 64}, TensorKind::kPersistent);
  const TensorId y = g.tensor("y", Dtype::kF32, {64, 64}, TensorKind::kPersistent);
  mme::GemmDesc gemm;
  gemm.m = gemm.n = gemm.k = 64;
  g.gemm("use", w, w, y, gemm);
  g.kernel("update", tpc::KernelRequest{"sgd_momentum", Dtype::kF32, {}, {64, 64}, {}}, {w, y, v});
  const Recipe r = compile(g, Target::gaudi1());
  EXPECT_EQ(r.stages[1].waits, std::vector<std::uint32_t>{0});
}

TEST(SynapseRecipe, SerializesAndReadsBackTheSameRecipe) {
  const Recipe r = compile(chain(3), unfused());
  const std::vector<std::uint8_t> bytes = serialize(r);
  const Recipe back = deserialize(bytes);
  EXPECT_EQ(serialize(back), bytes);
  EXPECT_EQ(back.signature, r.signature);
  EXPECT_EQ(back.stages.size(), r.stages.size());
  EXPECT_EQ(back.program.size(), 1u);  // relu's binary, once
}

std::string refusal(const std::vector<std::uint8_t>& bytes) {
  try {
    deserialize(bytes);
  } catch (const RecipeError& e) {
    return e.what();
  }
  return "accepted";
}

TEST(SynapseRecipe, RefusesBytesThatAreNotARecipeOfThisVersion) {
  const std::vector<std::uint8_t> good = serialize(compile(chain(2), Target::gaudi1()));
  EXPECT_EQ(refusal({}), "recipe: not a podsim recipe (no PODRECPE header)");
  std::vector<std::uint8_t> b = good;
  b[8] = 9;  // the version
  EXPECT_EQ(refusal(b), "recipe: version 9, this build reads version 3: compile the graph again");
  b = good;
  b.resize(b.size() - 5);
  EXPECT_NE(refusal(b).find("truncated or extended"), std::string::npos);
  b = good;
  b[b.size() / 2] ^= 0x40;
  EXPECT_EQ(refusal(b), "recipe: checksum mismatch (corrupt data)");
}

// A recipe whose checksum holds but whose contents point outside it (a bad writer) is refused
// too, before the runtime would use it.
TEST(SynapseRecipe, RefusesReferencesOutOfRange) {
  Recipe r = compile(chain(2), unfused());
  r.stages[0].jobs[0].relocations[0].section = 99;
  EXPECT_EQ(refusal(serialize(r)), "recipe: stage 0 has a relocation out of range");
  r = compile(chain(2), unfused());
  r.stages[0].waits = {1};
  EXPECT_EQ(refusal(serialize(r)),
            "recipe: stage 0 waits for stage 1, which does not come before it");
  r = compile(chain(2), unfused());
  r.tensors[1].offset = r.workspace_bytes;
  EXPECT_EQ(refusal(serialize(r)), "recipe: tensor t0 lies outside the workspace");
  r = compile(chain(2), unfused());
  r.tensors[1].sram = true;  // in an SRAM section of no bytes
  EXPECT_EQ(refusal(serialize(r)), "recipe: tensor t0 lies outside the SRAM");
  r = compile(chain(2), unfused());
  r.device_id = 0x1030;
  EXPECT_EQ(refusal(serialize(r)), "recipe: device id 0x1030 is not a Gaudi1 or Gaudi2");
  r = compile(chain(2), unfused());
  r.stages[0].jobs[0].queue = GAUDI_QUEUE_ID_NIC_0_0;
  EXPECT_EQ(refusal(serialize(r)), "recipe: stage 0 runs on queue 73, not a Gaudi1 engine's");
}

// A Gaudi2 target names Gaudi2's queues (DCORE0's TPCs first) and deals GEMM rows in its
// 256-row arrays.
TEST(SynapseCompiler, AGaudi2TargetNamesGaudi2sQueues) {
  Target t = Target::of(driver::kGaudi2DeviceId);
  t.tpcs = 24;
  EXPECT_EQ(t.mme_rows, 256u);
  t.fuse = false;
  const Recipe r = compile(chain(2), t);
  EXPECT_EQ(r.device_id, driver::kGaudi2DeviceId);
  EXPECT_EQ(r.stages[0].jobs[0].queue, static_cast<std::uint32_t>(GAUDI2_QUEUE_ID_DCORE0_TPC_0_0));
  EXPECT_EQ(deserialize(serialize(r)).fingerprint, r.fingerprint);
  EXPECT_NE(r.fingerprint, compile(chain(2), unfused()).fingerprint);
}

// c = a b of persistent bf16 tensors, M x N x K, as one MME node "mm".
Graph gemm_graph(std::uint32_t m, std::uint32_t n, std::uint32_t k) {
  Graph g;
  const TensorId a = g.tensor("a", Dtype::kBf16, {k, m}, TensorKind::kPersistent);
  const TensorId b = g.tensor("b", Dtype::kBf16, {n, k}, TensorKind::kPersistent);
  const TensorId c = g.tensor("c", Dtype::kBf16, {n, m}, TensorKind::kPersistent);
  mme::GemmDesc gemm;
  gemm.m = m, gemm.n = n, gemm.k = k;
  g.gemm("mm", a, b, c, gemm);
  return g;
}

// The operation an MME job of a recipe runs, latched from its registers.
mme::MmeOperation mme_job(const EngineJob& job) {
  std::vector<std::uint32_t> words(0x1000 / 4, 0);
  for (const core::RegisterRun& run : job.registers)
    for (std::size_t i = 0; i < run.values.size() && run.offset / 4 + i < words.size(); ++i)
      words[run.offset / 4 + i] = run.values[i];
  return mme::latch(words).op;
}

// Each MME node takes the geometry whose tiles take the fewest cycles: a GEMM of 64 columns a
// tall one on Gaudi2 (512 x 128 tiles, its rows dealt out in those), a square GEMM the array's
// own shape; Gaudi's arrays form no other tile.
TEST(SynapseCompiler, ANarrowGemmTakesATallTileOnGaudi2) {
  const auto compile_gemm = [](const Target& t, std::uint32_t n) {
    return compile(gemm_graph(4096, n, 512), t);
  };
  Target gaudi2 = Target::of(driver::kGaudi2DeviceId);
  gaudi2.tpcs = 24;
  const Recipe narrow = compile_gemm(gaudi2, 64);
  ASSERT_EQ(narrow.stages[0].jobs.size(), 2u);
  const mme::MmeOperation first = mme_job(narrow.stages[0].jobs[0]);
  EXPECT_EQ(first.tall, 1u);
  EXPECT_EQ(first.wide, 0u);
  EXPECT_EQ(first.m_start, 0u);
  EXPECT_EQ(first.m_count, 2048u);
  EXPECT_EQ(mme_job(narrow.stages[0].jobs[1]).m_start, 2048u);
  const mme::MmeOperation square = mme_job(compile_gemm(gaudi2, 4096).stages[0].jobs[0]);
  EXPECT_EQ(square.tall + square.wide, 0u);
  const mme::MmeOperation gaudi = mme_job(compile_gemm(Target::gaudi1(), 64).stages[0].jobs[0]);
  EXPECT_EQ(gaudi.tall + gaudi.wide, 0u);
}

// A GEMM of many rows fetches its right operand once for every block of result rows: with SRAM
// to stage it in, the internal DMA engines copy it there first (into the SRAM section, each a
// share of whole lines) and the MME reads it there; without SRAM, or when the operand is too
// large for half of it, the MME reads it from HBM. The recipe, serialized and read back, keeps
// the SRAM tensor and size.
TEST(SynapseCompiler, StagesARereadRightOperandInSram) {
  const auto compile_gemm = [](const Target& t, std::uint32_t n) {
    return compile(gemm_graph(8192, n, 256), t);
  };
  Target t = Target::of(driver::kGaudi2DeviceId);
  t.tpcs = 24;
  t.sram_bytes = 8 << 20;
  const Recipe staged = compile_gemm(t, 1024);
  ASSERT_EQ(staged.stages.size(), 2u);
  EXPECT_EQ(staged.stages[0].engine, Engine::kDma);
  EXPECT_EQ(staged.stages[0].node, "mm.stage_b");
  ASSERT_EQ(staged.stages[0].jobs.size(), static_cast<std::size_t>(t.copy_engines));
  std::uint64_t copied = 0;
  for (const EngineJob& job : staged.stages[0].jobs) {
    EXPECT_EQ(job.dst.section, kSramSection);
    EXPECT_EQ(job.dst.offset, copied);
    EXPECT_EQ(job.src.offset - staged.stages[0].jobs[0].src.offset, copied);
    EXPECT_EQ(job.dst.offset % 256, 0u);
    copied += job.bytes;
  }
  EXPECT_EQ(copied, 1024u * 256 * 2);
  EXPECT_EQ(staged.stages[1].waits, std::vector<std::uint32_t>{0});
  const auto& relocations = staged.stages[1].jobs.at(0).relocations;
  EXPECT_TRUE(std::any_of(relocations.begin(), relocations.end(),
                          [](const Relocation& r) { return r.section == kSramSection; }));
  EXPECT_EQ(staged.sram_bytes, 1024u * 256 * 2);
  EXPECT_THAT(staged.notes, ::testing::Contains("staged 1 right operand of MME nodes in SRAM"));
  const Recipe read_back = deserialize(serialize(staged));
  EXPECT_EQ(read_back.sram_bytes, staged.sram_bytes);
  EXPECT_EQ(read_back.fingerprint, staged.fingerprint);
  EXPECT_EQ(compile_gemm(t, 16384).stages.size(), 1u);  // 8 MiB: more than half the SRAM
  t.sram_bytes = 0;
  EXPECT_EQ(compile_gemm(t, 1024).stages.size(), 1u);
}

// A 3x3 convolution fetches its input once for every filter tap: with SRAM, its batch is sliced
// so that a slice's images fit a quarter of the SRAM, each slice's input copied there and its
// convolution reading it there and writing its images' share of the result (the copies filling
// two buffers in turn, so a copy waits for the convolution two slices before it). Its data
// gradient is sliced alike; its weight gradient is not.
TEST(SynapseCompiler, SlicesAConvolutionsInputIntoSramOnTheBatch) {
  mme::ConvDesc d;
  d.n = 64, d.c = 64, d.h = 56, d.w = 56, d.k = 64, d.r = 3, d.s = 3, d.pad_h = 1, d.pad_w = 1;
  const auto compile_conv = [&](mme::MmeOp op, std::uint64_t sram) {
    Graph g;
    const std::uint32_t image = 56 * 56 * 64;
    const TensorId x = g.tensor("x", Dtype::kBf16, {image, 64}, TensorKind::kPersistent);
    const TensorId w = g.tensor("w", Dtype::kBf16, {64 * 9, 64}, TensorKind::kPersistent);
    const TensorId y = g.tensor("y", Dtype::kBf16, {image, 64}, TensorKind::kPersistent);
    if (op == mme::MmeOp::kConvForward) g.convolution("conv", op, d, x, w, y);
    if (op == mme::MmeOp::kConvDataGrad) g.convolution("conv", op, d, y, w, x);
    if (op == mme::MmeOp::kConvWeightGrad) g.convolution("conv", op, d, y, x, w);
    Target t = Target::of(driver::kGaudi2DeviceId);
    t.tpcs = 24;
    t.sram_bytes = sram;
    return compile(g, t);
  };
  const Recipe r = compile_conv(mme::MmeOp::kConvForward, 24 << 20);
  EXPECT_THAT(r.notes,
              ::testing::Contains("sliced the input of 1 convolution into SRAM on the batch"));
  // 6 MiB a quarter: 15 images of 401,408 bytes a slice, so five slices of 13 (the last 12).
  std::vector<const Stage*> copies, convs, weights;
  for (const Stage& s : r.stages) {
    const bool of_weights = s.node.size() > 8 && s.node.substr(s.node.size() - 8) == ".stage_b";
    (s.engine == Engine::kMme ? convs : of_weights ? weights : copies).push_back(&s);
  }
  EXPECT_EQ(weights.size(), 1u);  // the filters once, read there by every slice
  ASSERT_EQ(copies.size(), 5u);
  ASSERT_EQ(convs.size(), 5u);
  std::uint64_t copied = 0;
  for (std::size_t s = 0; s < 5; ++s) {
    EXPECT_EQ(copies[s]->node, fmt::format("conv.slice{}.stage", s));
    std::uint64_t bytes = 0;
    for (const EngineJob& j : copies[s]->jobs) bytes += j.bytes;
    EXPECT_EQ(bytes, (s < 4 ? 13u : 12u) * 56 * 56 * 64 * 2);
    EXPECT_EQ(copies[s]->jobs.at(0).src.offset, copied);
    copied += bytes;
    EXPECT_EQ(mme_job(convs[s]->jobs.at(0)).conv.n, s < 4 ? 13u : 12u);
  }
  EXPECT_EQ(copied, 64u * 56 * 56 * 64 * 2);
  EXPECT_LE(r.sram_bytes, 24u << 20);
  EXPECT_THAT(compile_conv(mme::MmeOp::kConvDataGrad, 24 << 20).notes,
              ::testing::Contains("sliced the input of 1 convolution into SRAM on the batch"));
  for (const std::string& note : compile_conv(mme::MmeOp::kConvWeightGrad, 24 << 20).notes)
    EXPECT_THAT(note, ::testing::Not(::testing::HasSubstr("sliced")));
  EXPECT_EQ(compile_conv(mme::MmeOp::kConvForward, 0).stages.size(), 1u);
}

// A weight gradient of 64 filters fills one tile, so one MME would stream the whole batch while
// the other idled: the compiler gives each MME half the batch (its operands' offsets a half
// batch apart), each into f32 partial sums; a TPC launch that adds them waits for both, and a
// cast rounds the sum to bf16. The two MME stages do not wait for each other.
TEST(SynapseCompiler, SplitsANarrowWeightGradientOverTheBatchOnBothMmes) {
  Graph g;
  mme::ConvDesc d;
  d.n = 32, d.c = 64, d.h = d.w = 28, d.k = 64, d.r = d.s = 1;
  const TensorId dy = g.tensor("dy", Dtype::kBf16, {64, 28, 28, 32}, TensorKind::kPersistent);
  const TensorId x = g.tensor("x", Dtype::kBf16, {64, 28, 28, 32}, TensorKind::kPersistent);
  const TensorId dw = g.tensor("dw", Dtype::kBf16, {64, 1, 1, 64}, TensorKind::kPersistent);
  g.convolution("wgrad", mme::MmeOp::kConvWeightGrad, d, dy, x, dw);
  Target gaudi2 = Target::of(driver::kGaudi2DeviceId);
  gaudi2.tpcs = 24;
  const Recipe r = compile(g, gaudi2);
  ASSERT_EQ(r.stages.size(), 4u);
  EXPECT_THAT(r.notes, ::testing::Contains("split wgrad over the batch on 2 MMEs"));
  const mme::MmeOperation first = mme_job(r.stages[0].jobs.at(0));
  const mme::MmeOperation second = mme_job(r.stages[1].jobs.at(0));
  EXPECT_EQ(r.stages[0].jobs.size(), 1u);
  EXPECT_EQ(r.stages[1].jobs.size(), 1u);
  EXPECT_NE(r.stages[0].jobs[0].queue, r.stages[1].jobs[0].queue);
  EXPECT_TRUE(r.stages[1].waits.empty());
  EXPECT_EQ(first.conv.n, 16u);
  EXPECT_EQ(second.conv.n, 16u);
  EXPECT_EQ(first.out, Dtype::kF32);
  // dy's and x's images are both 28 x 28 x 64 bf16: the second share starts 16 of them later.
  EXPECT_EQ(second.a - first.a, std::uint64_t{16} * 28 * 28 * 64 * 2);
  EXPECT_EQ(second.b - first.b, std::uint64_t{16} * 28 * 28 * 64 * 2);
  EXPECT_EQ(r.stages[2].engine, Engine::kTpc);
  EXPECT_EQ(r.stages[2].waits, (std::vector<std::uint32_t>{0, 1}));
  EXPECT_EQ(r.stages[3].node, "wgrad.round");
  // A gradient that already fills both MMEs stays whole.
  Graph wide;
  d.k = 1024;
  const TensorId dy2 = wide.tensor("dy", Dtype::kBf16, {1024, 28, 28, 32}, TensorKind::kPersistent);
  const TensorId x2 = wide.tensor("x", Dtype::kBf16, {64, 28, 28, 32}, TensorKind::kPersistent);
  const TensorId dw2 = wide.tensor("dw", Dtype::kBf16, {64, 1, 1, 1024}, TensorKind::kPersistent);
  wide.convolution("wgrad", mme::MmeOp::kConvWeightGrad, d, dy2, x2, dw2);
  const Recipe whole = compile(wide, gaudi2);
  ASSERT_EQ(whole.stages.size(), 1u);
  EXPECT_EQ(whole.stages[0].jobs.size(), 2u);
}

// y = relu(x w): the GEMM's result rows in slices, the ReLU's slice s waiting for the GEMM's
// slice s alone (and its own slice before), so that the TPCs work on one slice while the MMEs
// compute the next. The slices are whole blocks of tiles on both MMEs and cover the rows once.
// y = relu(x w) in f32, x [m rows of n], w [n x n].
Graph gemm_then_relu(std::uint32_t m, std::uint32_t n) {
  Graph g;
  const TensorId x = g.tensor("x", Dtype::kF32, {n, m}, TensorKind::kPersistent);
  const TensorId w = g.tensor("w", Dtype::kF32, {n, n}, TensorKind::kPersistent);
  const TensorId c = g.tensor("c", Dtype::kF32, {n, m});
  const TensorId y = g.tensor("y", Dtype::kF32, {n, m}, TensorKind::kPersistent);
  mme::GemmDesc gemm;
  gemm.m = m;
  gemm.n = gemm.k = n;
  g.gemm("mm", x, w, c, gemm);
  g.kernel("relu", elementwise("relu", {n, m}), {c, y});
  return g;
}

TEST(SynapseCompiler, PipelinesAGemmAndTheKernelReadingItsRows) {
  const Graph g = gemm_then_relu(8192, 512);
  const Recipe r = compile(g, unfused());
  std::vector<std::uint32_t> mme_stages, tpc_stages;
  for (std::uint32_t k = 0; k < r.stages.size(); ++k)
    (r.stages[k].node == "mm" ? mme_stages : tpc_stages).push_back(k);
  ASSERT_GE(mme_stages.size(), 2u);
  ASSERT_EQ(mme_stages.size(), tpc_stages.size());
  EXPECT_EQ(r.notes, std::vector<std::string>{
                         fmt::format("pipelined mm into relu in {} slices", mme_stages.size())});
  std::uint32_t next_row = 0;
  for (std::size_t s = 0; s < mme_stages.size(); ++s) {
    const std::vector<std::uint32_t> want =
        s == 0 ? std::vector<std::uint32_t>{mme_stages[0]}
               : std::vector<std::uint32_t>{mme_stages[s], tpc_stages[s - 1]};
    std::vector<std::uint32_t> got = r.stages[tpc_stages[s]].waits;
    std::sort(got.begin(), got.end());
    std::vector<std::uint32_t> sorted = want;
    std::sort(sorted.begin(), sorted.end());
    EXPECT_EQ(got, sorted) << "slice " << s;
    for (const EngineJob& job : r.stages[mme_stages[s]].jobs) {
      const mme::MmeOperation op = mme_job(job);
      EXPECT_EQ(op.m_start, next_row) << "slice " << s;
      EXPECT_EQ(op.m_start % 256, 0u);  // whole blocks of 2 x 128-row tiles
      next_row += op.m_count;
    }
    EXPECT_EQ(r.stages[mme_stages[s]].jobs.size(), 2u);  // both MMEs in every slice
  }
  EXPECT_EQ(next_row, 8192u);
  // The TPC slices' flops add up to the kernel's; the pass off, two stages.
  Target off = unfused();
  off.pipeline = false;
  const Recipe plain = compile(g, off);
  ASSERT_EQ(plain.stages.size(), 2u);
  double flops = 0;
  for (std::uint32_t k : tpc_stages) flops += r.stages[k].flops;
  EXPECT_NEAR(flops, plain.stages[1].flops, 1e-6 * plain.stages[1].flops);
  EXPECT_TRUE(plain.notes.empty());
  // Too small to gain from slices (each slice's handoff costs more than the overlap saves).
  EXPECT_EQ(compile(gemm_then_relu(1024, 128), unfused()).stages.size(), 2u);
}

// Every byte of a recipe flipped in turn: each is refused or read back whole (never a crash).
TEST(SynapseRecipe, EveryCorruptByteIsRefusedCleanly) {
  const std::vector<std::uint8_t> good = serialize(compile(chain(2), Target::gaudi1()));
  for (std::size_t i = 0; i < good.size(); i += 7) {
    std::vector<std::uint8_t> b = good;
    b[i] ^= 0xA5;
    EXPECT_NE(refusal(b), "accepted") << "byte " << i;
  }
}

}  // namespace
}  // namespace podsim::synapse
