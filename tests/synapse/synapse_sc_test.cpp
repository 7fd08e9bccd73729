// The Synapse-like stack on a modeled Gaudi1 through the driver: graphs compiled to recipes and
// launched, results against CPU references, streams and events, bad input refused.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <random>
#include <set>

#include "synapse/compiler.h"
#include "synapse/runtime.h"
#include "synapse/session.h"
#include "tests/synapse/runtime_bench.h"
#include "workloads/lm_head.h"
#include "workloads/mlp.h"
#include "workloads/transformer.h"

namespace podsim::synapse {
namespace {

using test::Bench;
using test::kHost;
using test::with_runtime;

std::vector<float> random_values(std::size_t n, std::uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = d(gen);
  return v;
}

// Host buffer -> device tensor.
std::uint64_t to_device(Runtime& rt, StreamId h2d, const std::vector<float>& v) {
  const std::uint64_t bytes = v.size() * sizeof(float);
  const std::uint64_t host = rt.host_malloc(bytes);
  rt.host_write(host, v.data(), bytes);
  const std::uint64_t dev = rt.device_malloc(bytes);
  rt.memcpy(h2d, dev, host, bytes);
  rt.synchronize(h2d);
  rt.host_free(host);
  return dev;
}

std::vector<float> to_host(Runtime& rt, StreamId d2h, std::uint64_t dev, std::size_t n) {
  const std::uint64_t bytes = n * sizeof(float);
  const std::uint64_t host = rt.host_malloc(bytes);
  rt.memcpy(d2h, host, dev, bytes);
  rt.synchronize(d2h);
  std::vector<float> v(n);
  rt.host_read(host, v.data(), bytes);
  rt.host_free(host);
  return v;
}

// y = relu(x w + b) in f32: an MME GEMM, then two TPC kernels, the intermediate in the
// workspace. Shapes are dimension 0 first: x is [in, batch] (rows of `in`), w [out, in].
TEST(Synapse, ALayerRunsOnTheEnginesAndMatchesTheCpu) {
  constexpr std::uint32_t kBatch = 64, kIn = 96, kOut = 80;
  Graph g;
  const TensorId x = g.tensor("x", Dtype::kF32, {kIn, kBatch}, TensorKind::kPersistent);
  const TensorId w = g.tensor("w", Dtype::kF32, {kOut, kIn}, TensorKind::kPersistent);
  const TensorId b = g.tensor("b", Dtype::kF32, {kOut}, TensorKind::kPersistent);
  const TensorId xw = g.tensor("xw", Dtype::kF32, {kOut, kBatch});
  const TensorId pre = g.tensor("pre", Dtype::kF32, {kOut, kBatch});
  const TensorId y = g.tensor("y", Dtype::kF32, {kOut, kBatch}, TensorKind::kPersistent);
  mme::GemmDesc gemm;
  gemm.m = kBatch;
  gemm.n = kOut;
  gemm.k = kIn;
  g.gemm("matmul", x, w, xw, gemm);
  tpc::KernelRequest bias{"bias_add", Dtype::kF32, {}, {kOut, kBatch}, {}};
  g.kernel("bias", bias, {xw, b, pre});
  g.kernel("relu", tpc::KernelRequest{"relu", Dtype::kF32, {}, {kOut, kBatch}, {}}, {pre, y});
  const Recipe recipe = compile(g, Target::gaudi1());
  ASSERT_EQ(recipe.stages.size(), 2u);  // the GEMM, then bias and ReLU fused into one launch
  EXPECT_EQ(recipe.stages[0].engine, Engine::kMme);
  EXPECT_EQ(recipe.stages[1].node, "bias+relu");
  EXPECT_EQ(recipe.stages[1].waits, std::vector<std::uint32_t>{0});
  EXPECT_EQ(recipe.workspace_bytes, kOut * kBatch * 4u);  // xw only: pre stays in registers

  const auto xs = random_values(kIn * kBatch, 1), ws = random_values(kOut * kIn, 2),
             bs = random_values(kOut, 3);
  with_runtime([&](Bench& s) {
    Runtime& rt = s.rt;
    const std::uint64_t dx = to_device(rt, s.h2d, xs), dw = to_device(rt, s.h2d, ws),
                        db = to_device(rt, s.h2d, bs);
    const std::uint64_t dy = rt.device_malloc(kOut * kBatch * 4);
    const std::uint64_t workspace = rt.device_malloc(recipe.workspace_bytes);
    const Event start = rt.record(s.compute);
    const LaunchInfo first = rt.launch(s.compute, recipe, {dx, dw, db, dy}, workspace);
    EXPECT_TRUE(first.uploaded_program);
    EXPECT_TRUE(first.uploaded_command_buffers);
    const Event end = rt.record(s.compute);
    rt.synchronize(end);
    EXPECT_GT(rt.elapsed(start, end), 0u);
    const std::vector<float> got = to_host(rt, s.d2h, dy, kOut * kBatch);
    for (std::uint32_t r = 0; r < kBatch; ++r) {
      for (std::uint32_t c = 0; c < kOut; ++c) {
        double want = bs[c];
        for (std::uint32_t k = 0; k < kIn; ++k) want += double(xs[r * kIn + k]) * ws[k * kOut + c];
        want = std::max(want, 0.0);
        ASSERT_NEAR(got[r * kOut + c], want, 1e-4 + 1e-5 * std::abs(want)) << r << "," << c;
      }
    }
    // The same addresses again: nothing to upload.
    const LaunchInfo second = rt.launch(s.compute, recipe, {dx, dw, db, dy}, workspace);
    EXPECT_FALSE(second.uploaded_program);
    EXPECT_FALSE(second.uploaded_command_buffers);
    rt.synchronize(s.compute);
  });
}

// A copy runs on an internal DMA engine, a convolution on the MME: y = conv(copy of x, w).
TEST(Synapse, CopiesAndConvolutionsRunOnTheirEngines) {
  mme::ConvDesc conv;
  conv.n = 2;
  conv.c = 8;
  conv.h = conv.w = 10;
  conv.k = 16;
  conv.r = conv.s = 3;
  conv.pad_h = conv.pad_w = 1;
  const std::uint32_t in = conv.n * conv.c * conv.h * conv.w;
  const std::uint32_t filters = conv.k * conv.r * conv.s * conv.c;
  const std::uint32_t out = conv.n * conv.k * conv.p() * conv.q();
  Graph g;
  const TensorId x = g.tensor("x", Dtype::kF32, {in}, TensorKind::kPersistent);
  const TensorId staged = g.tensor("staged", Dtype::kF32, {in});
  const TensorId w = g.tensor("w", Dtype::kF32, {filters}, TensorKind::kPersistent);
  const TensorId y = g.tensor("y", Dtype::kF32, {out}, TensorKind::kPersistent);
  g.copy("stage", x, staged);
  g.convolution("conv", mme::MmeOp::kConvForward, conv, staged, w, y);
  const Recipe recipe = compile(g, Target::gaudi1());
  ASSERT_EQ(recipe.stages.size(), 2u);
  EXPECT_EQ(recipe.stages[0].engine, Engine::kDma);
  EXPECT_EQ(recipe.stages[1].waits, std::vector<std::uint32_t>{0});
  const auto xs = random_values(in, 4), ws = random_values(filters, 5);
  with_runtime([&](Bench& s) {
    Runtime& rt = s.rt;
    const std::uint64_t dx = to_device(rt, s.h2d, xs), dw = to_device(rt, s.h2d, ws);
    const std::uint64_t dy = rt.device_malloc(out * 4);
    const std::uint64_t workspace = rt.device_malloc(recipe.workspace_bytes);
    rt.launch(s.compute, recipe, {dx, dw, dy}, workspace);
    rt.synchronize(s.compute);
    const std::vector<float> got = to_host(rt, s.d2h, dy, out);
    mme::MmeOperation op;
    op.op = mme::MmeOp::kConvForward;
    op.in = op.out = Dtype::kF32;
    op.conv = conv;
    std::vector<double> want(out, 0.0);
    mme::reference(op, std::vector<double>(xs.begin(), xs.end()),
                   std::vector<double>(ws.begin(), ws.end()), want);
    for (std::uint32_t i = 0; i < out; ++i) ASSERT_NEAR(got[i], want[i], 1e-4) << i;
  });
}

// A compute stream that waits for a copy's event starts after it; events time the device.
TEST(Synapse, StreamsOrderWorkAndEventsTimeIt) {
  constexpr std::uint32_t kElements = 1u << 18;  // 1 MiB of f32
  Graph g;
  const TensorId x = g.tensor("x", Dtype::kF32, {kElements}, TensorKind::kPersistent);
  const TensorId y = g.tensor("y", Dtype::kF32, {kElements}, TensorKind::kPersistent);
  g.kernel("relu", tpc::KernelRequest{"relu", Dtype::kF32, {}, {kElements}, {}}, {x, y});
  const Recipe recipe = compile(g, Target::gaudi1());
  const auto xs = random_values(kElements, 6);
  with_runtime([&](Bench& s) {
    Runtime& rt = s.rt;
    const std::uint64_t host = rt.host_malloc(kElements * 4);
    rt.host_write(host, xs.data(), kElements * 4);
    const std::uint64_t dx = rt.device_malloc(kElements * 4), dy = rt.device_malloc(kElements * 4);
    rt.launch(s.compute, recipe, {dx, dy}, 0);  // uploads the program and command buffers
    rt.synchronize(s.compute);
    const Event before = rt.record(s.h2d);
    rt.memcpy(s.h2d, dx, host, kElements * 4);
    const Event copied = rt.record(s.h2d);
    rt.wait(s.compute, copied);
    rt.launch(s.compute, recipe, {dx, dy}, 0);
    const Event done = rt.record(s.compute);
    const core::TimePs copy = rt.elapsed(before, copied), kernel = rt.elapsed(copied, done);
    // 1 MiB over PCIe Gen4 x16 (at most ~32 GB/s) takes over 30 us.
    EXPECT_GT(copy, 30'000'000u);
    EXPECT_GT(kernel, 0u);
    const std::vector<float> got = to_host(rt, s.d2h, dy, kElements);
    for (std::uint32_t i = 0; i < kElements; i += 997) ASSERT_EQ(got[i], std::max(xs[i], 0.0f));
  });
}

std::string refusal(const std::function<void()>& f) {
  try {
    f();
  } catch (const RuntimeError& e) {
    return e.what();
  }
  return "accepted";
}

TEST(Synapse, BadCallsAreRefusedWithTheirReason) {
  const Recipe recipe = [] {
    Graph g;
    const TensorId x = g.tensor("x", Dtype::kF32, {64}, TensorKind::kPersistent);
    const TensorId t = g.tensor("t", Dtype::kF32, {64});
    const TensorId y = g.tensor("y", Dtype::kF32, {64}, TensorKind::kPersistent);
    g.kernel("a", tpc::KernelRequest{"relu", Dtype::kF32, {}, {64}, {}}, {x, t});
    g.kernel("b", tpc::KernelRequest{"relu", Dtype::kF32, {}, {64}, {}}, {t, y});
    Target unfused = Target::gaudi1();
    unfused.fuse = false;  // keep t in the workspace
    return compile(g, unfused);
  }();
  driver::test::with_device([&](driver::Device& device, host::HostCpu&, system::SystemModel& m) {
    Runtime rt(device, m.host(0).memory(), kHost);
    EXPECT_EQ(refusal([&] { Runtime second(device, m.host(0).memory(), kHost); }),
              "synapse: acquiring the device: Device or resource busy (another process holds it)");
    const StreamId compute = rt.create_stream(StreamKind::kCompute);
    const StreamId h2d = rt.create_stream(StreamKind::kHostToDevice);
    const std::uint64_t a = rt.device_malloc(256), b = rt.device_malloc(256);
    EXPECT_EQ(refusal([&] { rt.launch(compute, recipe, {a}, 0); }),
              "synapse: the recipe takes 2 persistent tensors, 1 addresses given");
    EXPECT_EQ(refusal([&] {
                rt.launch(compute, recipe, {a, b}, 0);
              }),
              "synapse: the recipe needs a workspace of 256 bytes");
    EXPECT_EQ(refusal([&] {
                rt.launch(h2d, recipe, {a, b}, a);
              }),
              "synapse: launch on stream 1, which is not a compute stream");
    EXPECT_EQ(refusal([&] { rt.memcpy(compute, a, b, 16); }),
              "synapse: memcpy on stream 0, which is not a copy stream");
    EXPECT_EQ(refusal([&] { rt.memcpy(h2d, a, kHost.base + (512u << 20), 16); }),
              "synapse: host range [0x120000000, +16) is not inside one host_malloc'd buffer");
    EXPECT_EQ(refusal([&] { rt.memcpy(7, a, b, 16); }), "synapse: stream 7 does not exist");
    EXPECT_NE(refusal([&] { rt.device_malloc(1ull << 40); }).find("the device has"),
              std::string::npos);
    EXPECT_EQ(refusal([&] { rt.device_free(a + 8); }),
              fmt::format("synapse: device_free({:#x}): not a device_malloc'd buffer", a + 8));
    EXPECT_EQ(refusal([&] { rt.host_free(12); }),
              "synapse: host_free(0xc): not a host_malloc'd buffer");
    // Nothing above disturbed the device: the recipe still runs.
    const std::uint64_t workspace = rt.device_malloc(recipe.workspace_bytes);
    rt.launch(compute, recipe, {a, b}, workspace);
    rt.synchronize(compute);
  });
}

// A fused chain (bias, GELU, a residual add, ReLU) with an intermediate another node reads
// later: the device's results against the CPU, and against the same graph unfused.
// Regression: the runtime once cached uploads by graph signature, so the second of two recipes
// of one graph ran the first's kernel binaries.
TEST(Synapse, AFusedChainMatchesTheCpuAndTheUnfusedGraph) {
  constexpr std::uint32_t kC = 200, kR = 37;  // ragged against 64 lanes and 4 rows
  Graph g;
  const TensorId x = g.tensor("x", Dtype::kF32, {kC, kR}, TensorKind::kPersistent);
  const TensorId b = g.tensor("b", Dtype::kF32, {kC}, TensorKind::kPersistent);
  const TensorId res = g.tensor("res", Dtype::kF32, {kC, kR}, TensorKind::kPersistent);
  const TensorId t1 = g.tensor("t1", Dtype::kF32, {kC, kR});
  const TensorId t2 = g.tensor("t2", Dtype::kF32, {kC, kR});
  const TensorId t3 = g.tensor("t3", Dtype::kF32, {kC, kR});
  const TensorId y = g.tensor("y", Dtype::kF32, {kC, kR}, TensorKind::kPersistent);
  const TensorId z = g.tensor("z", Dtype::kF32, {kC, kR}, TensorKind::kPersistent);
  const auto req = [&](const char* k) {
    return tpc::KernelRequest{k, Dtype::kF32, {}, {kC, kR}, {}};
  };
  g.kernel("bias", req("bias_add"), {x, b, t1});
  g.kernel("gelu", req("gelu"), {t1, t2});
  g.kernel("residual", req("sub"), {res, t2, t3});  // the chain's value on the right
  g.kernel("relu", req("relu"), {t3, y});
  g.kernel("later", req("mul"), {t2, t2, z});  // reads the GELU's result after the chain
  Target unfused = Target::gaudi1();
  unfused.fuse = false;
  const Recipe fused = compile(g, Target::gaudi1()), plain = compile(g, unfused);
  ASSERT_EQ(fused.stages.size(), 2u);
  EXPECT_EQ(fused.stages[0].node, "bias+gelu+residual+relu");
  EXPECT_EQ(plain.stages.size(), 5u);
  EXPECT_EQ(fused.notes,
            std::vector<std::string>{"fused bias+gelu+residual+relu into one TPC launch"});
  const auto xs = random_values(kC * kR, 7), bs = random_values(kC, 8),
             rs = random_values(kC * kR, 9);
  std::vector<std::vector<float>> results;
  std::vector<core::TimePs> times;
  with_runtime([&](Bench& s) {
    Runtime& rt = s.rt;
    const std::uint64_t dx = to_device(rt, s.h2d, xs), db = to_device(rt, s.h2d, bs),
                        dr = to_device(rt, s.h2d, rs);
    const std::uint64_t dy = rt.device_malloc(kC * kR * 4), dz = rt.device_malloc(kC * kR * 4);
    for (const Recipe* r : {&fused, &plain}) {
      const std::uint64_t workspace = rt.device_malloc(r->workspace_bytes);
      rt.launch(s.compute, *r, {dx, db, dr, dy, dz}, workspace);  // uploads the recipe
      rt.synchronize(s.compute);
      const Event before = rt.record(s.compute);
      rt.launch(s.compute, *r, {dx, db, dr, dy, dz}, workspace);
      times.push_back(rt.elapsed(before, rt.record(s.compute)));
      rt.synchronize(s.compute);
      results.push_back(to_host(rt, s.d2h, dy, kC * kR));
      results.push_back(to_host(rt, s.d2h, dz, kC * kR));
    }
  });
  // The fused node reads x once and writes y once; its parts apart make five passes.
  EXPECT_LT(times[0], times[1]) << "fused " << times[0] << " ps, apart " << times[1] << " ps";
  const auto gelu = [](double v) {
    return 0.5 * v * (1 + std::tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)));
  };
  for (std::uint32_t i = 0; i < kC * kR; ++i) {
    const double t2v = gelu(double(xs[i]) + bs[i % kC]);
    const double want_y = std::max(double(rs[i]) - t2v, 0.0), want_z = t2v * t2v;
    ASSERT_NEAR(results[0][i], want_y, 1e-5) << i;  // fused
    ASSERT_NEAR(results[1][i], want_z, 1e-5) << i;
    ASSERT_NEAR(results[2][i], want_y, 1e-5) << i;  // unfused
    ASSERT_NEAR(results[3][i], want_z, 1e-5) << i;
  }
}

// y = relu(x w) with the GEMM and the ReLU pipelined in slices of rows (the handoff cost set to
// 0 so that this small graph is sliced): the same result, to the bit, as the two nodes whole,
// and both as the CPU's.
TEST(Synapse, APipelinedGemmAndKernelMatchTheWholeNodesAndTheCpu) {
  constexpr std::uint32_t kM = 2048, kN = 256, kK = 256;
  Graph g;
  const TensorId x = g.tensor("x", Dtype::kF32, {kK, kM}, TensorKind::kPersistent);
  const TensorId w = g.tensor("w", Dtype::kF32, {kN, kK}, TensorKind::kPersistent);
  const TensorId c = g.tensor("c", Dtype::kF32, {kN, kM});
  const TensorId y = g.tensor("y", Dtype::kF32, {kN, kM}, TensorKind::kPersistent);
  mme::GemmDesc gemm;
  gemm.m = kM;
  gemm.n = kN;
  gemm.k = kK;
  g.gemm("mm", x, w, c, gemm);
  g.kernel("relu", tpc::KernelRequest{"relu", Dtype::kF32, {}, {kN, kM}, {}}, {c, y});
  Target sliced = Target::gaudi1();
  sliced.stage_ns = 0;
  Target whole = sliced;
  whole.pipeline = false;
  const Recipe pipelined = compile(g, sliced), plain = compile(g, whole);
  ASSERT_EQ(pipelined.notes.size(), 1u);
  EXPECT_THAT(pipelined.notes[0], ::testing::HasSubstr("pipelined mm into relu in"));
  EXPECT_GT(pipelined.stages.size(), plain.stages.size());
  const auto xs = random_values(kK * kM, 3), ws = random_values(kN * kK, 4);
  std::vector<std::vector<float>> results;
  with_runtime([&](Bench& s) {
    Runtime& rt = s.rt;
    const std::uint64_t dx = to_device(rt, s.h2d, xs), dw = to_device(rt, s.h2d, ws);
    for (const Recipe* r : {&pipelined, &plain}) {
      const std::uint64_t dy = rt.device_malloc(kN * kM * 4);
      const std::uint64_t workspace = rt.device_malloc(r->workspace_bytes);
      rt.launch(s.compute, *r, {dx, dw, dy}, workspace);
      rt.synchronize(s.compute);
      results.push_back(to_host(rt, s.d2h, dy, kN * kM));
    }
  });
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0], results[1]);
  for (std::uint32_t i = 0; i < kM; i += 97) {
    for (std::uint32_t j = 0; j < kN; j += 13) {
      double v = 0;
      for (std::uint32_t k = 0; k < kK; ++k) v += double(xs[i * kK + k]) * ws[k * kN + j];
      ASSERT_NEAR(results[0][i * kN + j], std::max(v, 0.0), 1e-4) << i << ", " << j;
    }
  }
}

// y = x w with w staged in the SRAM (the compiler's copy, then the MME reading it there): the
// same result, to the bit, as with w read from HBM, and the CPU's; sooner, since HBM serves w
// once instead of once for every block of 256 result rows.
TEST(Synapse, AGemmWithItsWeightsStagedInSramMatchesHbmAndTheCpu) {
  constexpr std::uint32_t kM = 8192, kN = 256, kK = 256;
  Graph g;
  const TensorId x = g.tensor("x", Dtype::kF32, {kK, kM}, TensorKind::kPersistent);
  const TensorId w = g.tensor("w", Dtype::kF32, {kN, kK}, TensorKind::kPersistent);
  const TensorId y = g.tensor("y", Dtype::kF32, {kN, kM}, TensorKind::kPersistent);
  mme::GemmDesc gemm;
  gemm.m = kM;
  gemm.n = kN;
  gemm.k = kK;
  g.gemm("mm", x, w, y, gemm);
  Target sram = Target::gaudi1();
  sram.sram_bytes = 8 << 20;  // within the runtime's half of Gaudi1's 24 MB
  Target hbm = sram;
  hbm.sram_bytes = 0;
  const Recipe staged = compile(g, sram), plain = compile(g, hbm);
  ASSERT_EQ(staged.stages.size(), 2u);
  ASSERT_EQ(plain.stages.size(), 1u);
  const auto xs = random_values(kK * kM, 5), ws = random_values(kN * kK, 6);
  std::vector<std::vector<float>> results;
  std::vector<core::TimePs> times;
  with_runtime([&](Bench& s) {
    Runtime& rt = s.rt;
    const std::uint64_t dx = to_device(rt, s.h2d, xs), dw = to_device(rt, s.h2d, ws);
    for (const Recipe* r : {&staged, &plain}) {
      const std::uint64_t dy = rt.device_malloc(kN * kM * 4);
      const std::uint64_t workspace = r->workspace_bytes ? rt.device_malloc(r->workspace_bytes) : 0;
      rt.launch(s.compute, *r, {dx, dw, dy}, workspace);  // uploads the recipe
      rt.synchronize(s.compute);
      const Event before = rt.record(s.compute);
      rt.launch(s.compute, *r, {dx, dw, dy}, workspace);
      times.push_back(rt.elapsed(before, rt.record(s.compute)));
      rt.synchronize(s.compute);
      results.push_back(to_host(rt, s.d2h, dy, kN * kM));
    }
    Recipe greedy = staged;  // staging more than the runtime's part of the SRAM holds
    greedy.sram_bytes = 64 << 20;
    try {
      rt.launch(s.compute, greedy, {dx, dw, dx}, 0);
      ADD_FAILURE() << "a recipe staging 64 MiB was launched";
    } catch (const RuntimeError& e) {
      EXPECT_THAT(e.what(), ::testing::HasSubstr("stages 67108864 bytes in SRAM"));
    }
  });
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0], results[1]);
  EXPECT_LT(times[0], times[1]) << "staged " << times[0] << " ps, from HBM " << times[1] << " ps";
  for (std::uint32_t i = 0; i < kM; i += 101) {
    for (std::uint32_t j = 0; j < kN; j += 13) {
      double v = 0;
      for (std::uint32_t k = 0; k < kK; ++k) v += double(xs[i * kK + k]) * ws[k * kN + j];
      ASSERT_NEAR(results[0][i * kN + j], v, 1e-4) << i << ", " << j;
    }
  }
}

// A chain without a bias (a residual add, GELU, ReLU) streams its tensors eight vectors a point;
// its length is ragged against that, and the add's result is read again later.
TEST(Synapse, AStreamedFusedChainMatchesTheCpu) {
  constexpr std::uint32_t kC = 200, kR = 37;
  Graph g;
  const TensorId x = g.tensor("x", Dtype::kF32, {kC, kR}, TensorKind::kPersistent);
  const TensorId res = g.tensor("res", Dtype::kF32, {kC, kR}, TensorKind::kPersistent);
  const TensorId t1 = g.tensor("t1", Dtype::kF32, {kC, kR});
  const TensorId t2 = g.tensor("t2", Dtype::kF32, {kC, kR});
  const TensorId y = g.tensor("y", Dtype::kF32, {kC, kR}, TensorKind::kPersistent);
  const TensorId z = g.tensor("z", Dtype::kF32, {kC, kR}, TensorKind::kPersistent);
  const auto req = [&](const char* k) {
    return tpc::KernelRequest{k, Dtype::kF32, {}, {kC, kR}, {}};
  };
  g.kernel("residual", req("add"), {x, res, t1});
  g.kernel("gelu", req("gelu"), {t1, t2});
  g.kernel("relu", req("relu"), {t2, y});
  g.kernel("later", req("mul"), {t1, t1, z});
  const Recipe fused = compile(g, Target::gaudi1());
  ASSERT_EQ(fused.stages.size(), 2u);
  EXPECT_EQ(fused.stages[0].node, "residual+gelu+relu");
  const auto xs = random_values(kC * kR, 21), rs = random_values(kC * kR, 22);
  std::vector<float> got_y, got_z;
  with_runtime([&](Bench& s) {
    Runtime& rt = s.rt;
    const std::uint64_t dx = to_device(rt, s.h2d, xs), dr = to_device(rt, s.h2d, rs);
    const std::uint64_t dy = rt.device_malloc(kC * kR * 4), dz = rt.device_malloc(kC * kR * 4);
    const std::uint64_t workspace = rt.device_malloc(fused.workspace_bytes);
    rt.launch(s.compute, fused, {dx, dr, dy, dz}, workspace);
    rt.synchronize(s.compute);
    got_y = to_host(rt, s.d2h, dy, kC * kR);
    got_z = to_host(rt, s.d2h, dz, kC * kR);
  });
  for (std::uint32_t i = 0; i < kC * kR; ++i) {
    const double t = double(xs[i]) + rs[i];
    const double gelu = 0.5 * t * (1 + std::tanh(0.7978845608028654 * (t + 0.044715 * t * t * t)));
    ASSERT_NEAR(got_y[i], std::max(gelu, 0.0), 1e-5) << i;
    ASSERT_NEAR(got_z[i], t * t, 1e-5) << i;
  }
}

// Batch norm then ReLU (after a residual addition when `residual`): the compiler folds them into
// the norm's last pass (residual = 1, relu = 1), so the intermediate results are never written;
// the device's results against the CPU, and against the same graph unfused. Channels 64 (the
// flat pass) and 96 (the row-walking pass).
void expect_batch_norm_relu_fused(std::uint32_t c, bool residual = false) {
  constexpr std::uint32_t kM = 45;
  Graph g;
  const TensorId x = g.tensor("x", Dtype::kF32, {c, kM}, TensorKind::kPersistent);
  const TensorId gamma = g.tensor("gamma", Dtype::kF32, {c}, TensorKind::kPersistent);
  const TensorId beta = g.tensor("beta", Dtype::kF32, {c}, TensorKind::kPersistent);
  const TensorId t = g.tensor("t", Dtype::kF32, {c, kM});
  const TensorId mean = g.tensor("mean", Dtype::kF32, {c});
  const TensorId rstd = g.tensor("rstd", Dtype::kF32, {c});
  const TensorId y = g.tensor("y", Dtype::kF32, {c, 5, 9}, TensorKind::kPersistent);
  const TensorId res = g.tensor("res", Dtype::kF32, {c, kM}, TensorKind::kPersistent);
  const TensorId sum = g.tensor("sum", Dtype::kF32, {c, kM});
  g.kernel("bn", tpc::KernelRequest{"batch_norm", Dtype::kF32, {}, {c, kM}, {}},
           {x, gamma, beta, t, mean, rstd});
  if (residual) {
    g.kernel("add", tpc::KernelRequest{"add", Dtype::kF32, {}, {c, kM}, {}}, {res, t, sum});
  }
  g.kernel("relu", tpc::KernelRequest{"relu", Dtype::kF32, {}, {c, 5, 9}, {}},
           {residual ? sum : t, y});
  Target unfused = Target::gaudi1();
  unfused.fuse = false;
  const Recipe fused = compile(g, Target::gaudi1()), plain = compile(g, unfused);
  EXPECT_EQ(fused.notes, std::vector<std::string>{residual ? "fused bn+add+relu into one TPC launch"
                                                           : "fused bn+relu into one TPC launch"});
  ASSERT_EQ(fused.stages.size(), 3u);  // the norm's three launches, no addition or ReLU
  EXPECT_EQ(plain.stages.size(), residual ? 5u : 4u);
  const auto xs = random_values(c * kM, 11), gs = random_values(c, 12), bs = random_values(c, 13),
             rs = random_values(c * kM, 14);
  std::vector<std::vector<float>> results;
  with_runtime([&](Bench& s) {
    Runtime& rt = s.rt;
    const std::uint64_t dx = to_device(rt, s.h2d, xs), dg = to_device(rt, s.h2d, gs),
                        db = to_device(rt, s.h2d, bs), dr = to_device(rt, s.h2d, rs),
                        dy = rt.device_malloc(c * kM * 4);
    for (const Recipe* r : {&fused, &plain}) {
      const std::uint64_t workspace = rt.device_malloc(r->workspace_bytes);
      rt.launch(s.compute, *r, {dx, dg, db, dy, dr}, workspace);
      rt.synchronize(s.compute);
      results.push_back(to_host(rt, s.d2h, dy, c * kM));
    }
  });
  int clamped = 0;
  for (std::uint32_t i = 0; i < c; ++i) {
    double m = 0, v = 0;
    for (std::uint32_t j = 0; j < kM; ++j) m += xs[i + j * c];
    m /= kM;
    for (std::uint32_t j = 0; j < kM; ++j) v += (xs[i + j * c] - m) * (xs[i + j * c] - m);
    const double r = 1 / std::sqrt(v / kM + 1e-5);
    for (std::uint32_t j = 0; j < kM; ++j) {
      const std::size_t k = i + j * c;
      const double want = std::max(0.0, (xs[k] - m) * r * gs[i] + bs[i] + (residual ? rs[k] : 0));
      clamped += want == 0;
      ASSERT_NEAR(results[0][k], want, 1e-4) << k;  // fused
      ASSERT_NEAR(results[1][k], want, 1e-4) << k;  // unfused
    }
  }
  EXPECT_GT(clamped, 0);  // the ReLU did something
}

TEST(Synapse, BatchNormThenReluFusedMatchesTheCpuAndTheUnfusedGraphFlat) {
  expect_batch_norm_relu_fused(64);
}

TEST(Synapse, BatchNormThenReluFusedMatchesTheCpuAndTheUnfusedGraphRows) {
  expect_batch_norm_relu_fused(96);
}

TEST(Synapse, BatchNormAResidualAndReluFusedMatchTheCpuAndTheUnfusedGraphFlat) {
  expect_batch_norm_relu_fused(64, true);
}

TEST(Synapse, BatchNormAResidualAndReluFusedMatchTheCpuAndTheUnfusedGraphRows) {
  expect_batch_norm_relu_fused(96, true);
}

// A max pool's backward then the gradient of the ReLU it pooled: the compiler folds the ReLU's
// into the pool's (relu = 1), one node fewer, with the same dx bit for bit as the graph unfused.
// The stem's geometry (3 x 3 windows moved by 2, padded by 1) on 64 channels.
TEST(Synapse, AReluGradientAfterAMaxPoolsBackwardFoldsIntoItBitForBit) {
  const std::vector<std::uint32_t> xs = {64, 12, 10, 2}, ys = {64, 6, 5, 2};
  const std::size_t nx = 64 * 12 * 10 * 2, ny = 64 * 6 * 5 * 2;
  const std::map<std::string, double> pool = {{"window_h", 3}, {"window_w", 3}, {"stride_h", 2},
                                              {"stride_w", 2}, {"pad_h", 1},    {"pad_w", 1}};
  Graph g;
  const TensorId a = g.tensor("a", Dtype::kF32, xs, TensorKind::kPersistent);  // relu(...)
  const TensorId pooled = g.tensor("pooled", Dtype::kF32, ys, TensorKind::kPersistent);
  const TensorId dy = g.tensor("dy", Dtype::kF32, ys, TensorKind::kPersistent);
  const TensorId da = g.tensor("da", Dtype::kF32, xs);
  const TensorId db = g.tensor("db", Dtype::kF32, xs, TensorKind::kPersistent);
  g.kernel("pool.bwd", tpc::KernelRequest{"max_pool_bwd", Dtype::kF32, {}, xs, pool},
           {dy, a, pooled, da});
  g.kernel("relu.bwd", tpc::KernelRequest{"relu_bwd", Dtype::kF32, {}, xs, {}}, {da, a, db});
  Target unfused = Target::gaudi1();
  unfused.fuse = false;
  const Recipe fused = compile(g, Target::gaudi1()), plain = compile(g, unfused);
  EXPECT_EQ(fused.notes, std::vector<std::string>{"fused pool.bwd+relu.bwd into one TPC launch"});
  EXPECT_EQ(plain.stages.size(), fused.stages.size() + 1);
  // a: a ReLU's output, with zeros; pooled: its pool, so some windows hold maxima of 0.
  std::vector<float> av = random_values(nx, 21);
  for (float& v : av) v = std::max(0.0f, v - 0.3f);
  std::vector<float> pv(ny, 0.0f);
  for (int n = 0; n < 2; ++n)
    for (int p = 0; p < 5; ++p)
      for (int q = 0; q < 6; ++q)
        for (int c = 0; c < 64; ++c) {
          float m = -INFINITY;
          for (int r = 0; r < 3; ++r)
            for (int s = 0; s < 3; ++s) {
              const int h = 2 * p - 1 + r, w = 2 * q - 1 + s;
              if (h >= 0 && w >= 0 && h < 10 && w < 12)
                m = std::max(m, av[static_cast<std::size_t>(c + 64 * (w + 12 * (h + 10 * n)))]);
            }
          pv[static_cast<std::size_t>(c + 64 * (q + 6 * (p + 5 * n)))] = m;
        }
  const std::vector<float> dyv = random_values(ny, 22);
  std::vector<std::vector<float>> results;
  with_runtime([&](Bench& s) {
    Runtime& rt = s.rt;
    const std::uint64_t d_a = to_device(rt, s.h2d, av), d_p = to_device(rt, s.h2d, pv),
                        d_dy = to_device(rt, s.h2d, dyv), out = rt.device_malloc(nx * 4);
    for (const Recipe* r : {&fused, &plain}) {
      const std::uint64_t workspace =
          rt.device_malloc(std::max<std::uint64_t>(256, r->workspace_bytes));
      rt.launch(s.compute, *r, {d_a, d_p, d_dy, out}, workspace);
      rt.synchronize(s.compute);
      results.push_back(to_host(rt, s.d2h, out, nx));
    }
  });
  EXPECT_EQ(results[0], results[1]);
  // Some elements took a window's gradient; windows whose maximum is 0 passed none.
  EXPECT_GT(std::count_if(results[0].begin(), results[0].end(), [](float v) { return v != 0; }), 0);
  int zero_windows = 0;
  for (float m : pv) zero_windows += m == 0;
  EXPECT_GT(zero_windows, 0);
}

// The MLP's mean loss over five steps against the CPU's double-precision training of the same
// network: in f32 to within rounding, in bf16 within its tolerance; eager and lazy alike.
void expect_mlp_matches_cpu(Mode mode, Dtype dtype, double tolerance) {
  workloads::MlpConfig config;
  config.layers = {64, 96, 10};
  config.batch = 32;
  config.lr = 0.2;
  config.dtype = dtype;
  const std::vector<double> want = workloads::reference_losses(config, 5);
  with_runtime([&](Bench& b) {
    Session session(b.rt, mode);
    workloads::Mlp mlp(session, config);
    for (int step = 0; step < 5; ++step) {
      const double loss = mlp.step(step);
      EXPECT_NEAR(loss, want[static_cast<std::size_t>(step)],
                  tolerance * want[static_cast<std::size_t>(step)])
          << to_string(mode) << " step " << step;
    }
    EXPECT_LT(want[4], want[0]);  // it learns
    if (mode == Mode::kLazy) {
      EXPECT_EQ(session.stats().compiles, 1u);  // one step graph, cached
      EXPECT_EQ(session.stats().launches, 5u);
    } else {
      EXPECT_GT(session.stats().cache_hits, session.stats().compiles);
    }
  });
}

TEST(Synapse, MlpLossMatchesTheCpuInLazyModeF32) {
  expect_mlp_matches_cpu(Mode::kLazy, Dtype::kF32, 1e-4);
}
TEST(Synapse, MlpLossMatchesTheCpuInEagerModeF32) {
  expect_mlp_matches_cpu(Mode::kEager, Dtype::kF32, 1e-4);
}
TEST(Synapse, MlpLossMatchesTheCpuInLazyModeBf16) {
  expect_mlp_matches_cpu(Mode::kLazy, Dtype::kBf16, 2e-2);
}
TEST(Synapse, MlpLossMatchesTheCpuInEagerModeBf16) {
  expect_mlp_matches_cpu(Mode::kEager, Dtype::kBf16, 2e-2);
}

// Every result of one transformer layer's forward and backward against the CPU's double
// precision: each tensor's worst element within `tolerance` of the tensor's largest magnitude.
// A layer small enough to check against the CPU in a fraction of a second.
workloads::TransformerConfig small_transformer(Dtype dtype) {
  workloads::TransformerConfig config;
  config.batch = 2;
  config.sequence = 16;
  config.hidden = 32;
  config.heads = 2;
  config.ffn = 64;
  config.dtype = dtype;
  return config;
}

void expect_transformer_matches_cpu(Mode mode, Dtype dtype, double tolerance, double dropout = 0,
                                    std::uint32_t packed = 0, bool fused_attention = false) {
  workloads::TransformerConfig config = small_transformer(dtype);
  config.dropout = dropout;
  config.packed = packed;
  config.fused_attention = fused_attention;
  const workloads::Tensors want =
      workloads::transformer_reference(config, workloads::transformer_inputs(config));
  workloads::TransformerConfig plain = config;
  plain.dropout = 0;
  const workloads::Tensors undropped =
      workloads::transformer_reference(plain, workloads::transformer_inputs(plain));
  with_runtime([&](Bench& b) {
    Session session(b.rt, mode);
    workloads::TransformerBlock block(session, config);
    const double loss = block.step();
    // L sums products of both signs: held to its terms' magnitude, not to its own.
    EXPECT_NEAR(loss, want.at("loss")[0], tolerance * want.at("loss_scale")[0]);
    const workloads::Tensors got = block.results();
    EXPECT_EQ(got.size(), 14u);  // out, dx and twelve parameter gradients
    test::expect_results_match(got, want, tolerance);
    if (packed > 1) {  // the mask matters: the unmasked layer's output is further off
      workloads::TransformerConfig open = config;
      open.packed = 0;
      const auto unmasked =
          workloads::transformer_reference(open, workloads::transformer_inputs(open));
      double apart = 0, off = 0;
      for (std::size_t i = 0; i < got.at("out").size(); ++i) {
        apart = std::max(apart, std::abs(unmasked.at("out")[i] - want.at("out")[i]));
        off = std::max(off, std::abs(got.at("out")[i] - want.at("out")[i]));
      }
      EXPECT_GT(apart, 4 * off);
    }
    if (dropout > 0) {  // the layer dropped: the undropped layer's output is much further off
      const auto furthest = [&](const std::vector<double>& a) {
        double d = 0;
        for (std::size_t i = 0; i < a.size(); ++i)
          d = std::max(d, std::abs(a[i] - want.at("out")[i]));
        return d;
      };
      EXPECT_GT(furthest(undropped.at("out")), 4 * furthest(got.at("out")));
    }
  });
}

TEST(Synapse, TransformerBlockMatchesTheCpuInLazyModeF32) {
  expect_transformer_matches_cpu(Mode::kLazy, Dtype::kF32, 1e-4);
}
TEST(Synapse, TransformerBlockMatchesTheCpuInEagerModeF32) {
  expect_transformer_matches_cpu(Mode::kEager, Dtype::kF32, 1e-4);
}
TEST(Synapse, TransformerBlockMatchesTheCpuInLazyModeBf16) {
  expect_transformer_matches_cpu(Mode::kLazy, Dtype::kBf16, 5e-2);
}
TEST(Synapse, TransformerBlockMatchesTheCpuInEagerModeBf16) {
  expect_transformer_matches_cpu(Mode::kEager, Dtype::kBf16, 5e-2);
}
// Dropout on the attention probabilities and both residual branches, drawn on the TPC as the
// reference draws them.
TEST(Synapse, TransformerBlockWithDropoutMatchesTheCpuInLazyModeBf16) {
  expect_transformer_matches_cpu(Mode::kLazy, Dtype::kBf16, 5e-2, 0.1);
}
// Two sequences packed into each row, attention masked between them (BERT's packed data).
TEST(Synapse, APackedTransformerBlockMatchesTheCpuInLazyModeF32) {
  expect_transformer_matches_cpu(Mode::kLazy, Dtype::kF32, 1e-4, 0, 2);
}

// Attention a sequence at a time, recomputed in the backward pass (FusedSDPA's way), with the
// packed rows' mask and dropout; and the same layer unfused, bit for bit (each sequence's
// dropout draws at its place in the unfused layer's order).
TEST(Synapse, AFusedAttentionBlockMatchesTheCpuInLazyModeBf16) {
  expect_transformer_matches_cpu(Mode::kLazy, Dtype::kBf16, 5e-2, 0.1, 2, true);
}
TEST(Synapse, AFusedAttentionBlockGivesTheUnfusedBlocksResultsBitForBit) {
  workloads::TransformerConfig config = small_transformer(Dtype::kBf16);
  config.dropout = 0.1;
  config.packed = 2;
  with_runtime([&](Bench& b) {
    const auto run = [&](bool fused) {
      workloads::TransformerConfig c = config;
      c.fused_attention = fused;
      Session session(b.rt, Mode::kLazy);
      workloads::TransformerBlock block(session, c);
      block.step();
      return block.results();
    };
    const workloads::Tensors unfused = run(false), fused = run(true);
    ASSERT_EQ(unfused.size(), fused.size());
    for (const auto& [name, values] : unfused) EXPECT_EQ(fused.at(name), values) << name;
  });
}

// BERT's head as Habana's MLPerf BERT runs it: the transform and the decoder on every token, the
// loss's rows gathered after it and their gradient copied into zeros. It runs, and it takes
// longer than the head on the loss's tokens alone (the GEMMs on every token).
TEST(Synapse, AHeadOnEveryTokenWithTheLossOnSomeRunsAndTakesLonger) {
  with_runtime([&](Bench& b) {
    const auto timed = [&](std::uint32_t tokens, std::uint32_t loss_tokens) {
      workloads::LmHeadConfig c;
      c.tokens = tokens;
      c.loss_tokens = loss_tokens;
      c.hidden = 64;
      c.vocab = 1000;
      c.transform = true;
      Session session(b.rt, Mode::kLazy);
      workloads::LmHead head(session, c);
      head.step();  // compiles and uploads
      const core::TimePs before = session.stats().device_time;
      head.step();
      return session.stats().device_time - before;
    };
    const core::TimePs gathered_first = timed(64, 0), on_every_token = timed(512, 64);
    EXPECT_GT(gathered_first, 0u);
    EXPECT_GT(on_every_token, gathered_first);
  });
}

}  // namespace
// A compile-only step compiles and uploads its recipe and runs nothing; on warmed engines, the
// launch timed after it takes what a launch in the steady state of a loop takes (the profile
// warms its layers so, training/profile.cpp), to the nanosecond.
TEST(Synapse, ACompileOnlyStepWarmsItsRecipeWithoutRunningIt) {
  const workloads::TransformerConfig config = small_transformer(Dtype::kBf16);
  with_runtime([&](Bench& b) {
    Session session(b.rt, Mode::kLazy);
    workloads::TransformerBlock block(session, config);
    session.warm_up();
    const SessionStats warm = session.stats();
    session.set_compile_only(true);
    for (int round = 0; round < 2; ++round) {
      block.step(false);
      block.step(true);
    }
    session.set_compile_only(false);
    EXPECT_EQ(session.stats().compiles, warm.compiles + 2);
    EXPECT_EQ(session.stats().launches, warm.launches);
    EXPECT_EQ(session.stats().device_time, warm.device_time);
    const auto timed = [&](bool backward) {
      const core::TimePs before = session.stats().device_time;
      block.step(backward);
      return session.stats().device_time - before;
    };
    const core::TimePs forward = timed(false), both = timed(true);
    EXPECT_EQ(session.stats().launches, warm.launches + 2);
    EXPECT_GT(forward, 0u);
    EXPECT_GT(both, forward);
    EXPECT_NEAR(double(forward), double(timed(false)), 1000.0);
    EXPECT_NEAR(double(both), double(timed(true)), 1000.0);
  });
}

}  // namespace podsim::synapse
