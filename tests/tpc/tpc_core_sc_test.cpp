// The TPC core as a block: started through its registers, timed by its pipeline and memory.
// Tile reuse replays a recorded tile with exactly the time executing it takes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <tlm_utils/simple_initiator_socket.h>

#include <set>

#include "core/bulk_transfer.h"
#include "core/kernel.h"
#include "core/memory_target.h"
#include "hw/tpc/assembler.h"
#include "hw/tpc/kernels/functional.h"
#include "hw/tpc/kernels/library.h"
#include "hw/tpc/tpc_core.h"
#include "hw/tpc/tpc_registers.h"
#include "podsim/spec/gaudi1.h"

namespace podsim::tpc {
namespace {

constexpr std::uint64_t kBinary = 0x100000;
constexpr std::uint64_t kBuffers = 0x200000;

core::MemoryTargetConfig memory_config(double bytes_per_second) {
  core::MemoryTargetConfig c;
  c.size = core::ByteSize{64 << 20};
  c.bandwidth = core::Bandwidth{bytes_per_second * 8};
  c.latency = core::Duration{150000};
  c.functional = true;
  c.timing_only_payload = true;  // the binary is read for its bytes; tensors carry none
  return c;
}

TpcCoreConfig core_config(bool reuse) {
  TpcCoreConfig c;
  c.tile_reuse = reuse;
  return c;
}

// Two cores over one memory, one executing every tile and one reusing, both timing only (or
// the first functional: it then computes every value).
struct Harness : sc_core::sc_module {
  core::MemoryTarget memory;
  TpcCore executing, reusing;
  tlm_utils::simple_initiator_socket<Harness> to_executing, to_reusing;
  explicit Harness(sc_core::sc_module_name name, double bytes_per_second = 200e9,
                   bool executing_functional = false)
      : sc_module(name),
        memory("memory", memory_config(bytes_per_second)),
        executing("executing", core_config(false), executing_functional),
        reusing("reusing", core_config(true), false),
        to_executing("to_executing"),
        to_reusing("to_reusing") {
    executing.memory_socket.bind(memory.target_socket);
    reusing.memory_socket.bind(memory.target_socket);
    to_executing.bind(executing.register_socket);
    to_reusing.bind(reusing.register_socket);
  }
};

// Runs one tile of `plan`'s launch `launch` on `core` and returns how long it took.
core::TimePs run_tile(Harness& h, TpcCore& core, const KernelPlan& plan, const Slice& slice,
                      std::size_t launch = 0, std::uint64_t binary = kBinary) {
  KernelRegisters k;
  k.state = launch_state(plan.launches[launch], buffer_addresses(plan, kBuffers), slice);
  k.access_scale = plan.launches[launch].access_scale;
  k.binary = binary;
  auto& socket = &core == &h.executing ? h.to_executing : h.to_reusing;
  tlm::tlm_generic_payload t;
  core::TimePs done = 0;
  for (const RegisterRun& run : register_image(k)) {
    std::vector<std::uint32_t> values = run.values;
    EXPECT_TRUE(core::bulk_transfer(socket, t, tlm::TLM_WRITE_COMMAND, run.offset,
                                    reinterpret_cast<std::uint8_t*>(values.data()),
                                    static_cast<std::uint32_t>(4 * values.size()), core::now_ps(),
                                    done));
  }
  std::uint32_t go = 1;
  const core::TimePs start = core::now_ps();
  EXPECT_TRUE(core::bulk_transfer(socket, t, tlm::TLM_WRITE_COMMAND,
                                  PODSIM_GAUDI1_TPC_CFG_TPC_EXECUTE_OFFSET,
                                  reinterpret_cast<std::uint8_t*>(&go), 4, start, done));
  core::TimePs end = 0;
  core.when_idle([&] { end = core::now_ps(); });
  core::run_to_completion();
  EXPECT_FALSE(core.busy());
  return end - start;
}

TEST(TpcCore, AReusedTileTakesExactlyTheTimeOfExecutingIt) {
  Harness h("harness");
  sc_core::sc_start(sc_core::SC_ZERO_TIME);
  const std::vector<std::uint8_t> binary = kernel_binary("gelu.f32", Generation::kGaudi2);
  h.memory.backing().write(kBinary, binary.data(), binary.size());
  // gelu over 256 Ki f32: 512 index points of 512 elements; tiles of 64 points, 128 KiB each.
  const KernelPlan plan = plan_kernel({"gelu", Dtype::kF32, std::nullopt, {262144}, {}});
  const Slice x{{0, 0, 0, 0, 0}, {64, 1, 1, 1, 1}}, y{{64, 0, 0, 0, 0}, {128, 1, 1, 1, 1}};
  const core::TimePs executed = run_tile(h, h.executing, plan, y);
  run_tile(h, h.reusing, plan, x);  // recorded
  EXPECT_EQ(h.reusing.stats().reused_tiles.value(), 0u);
  const core::TimePs replayed = run_tile(h, h.reusing, plan, y);
  EXPECT_EQ(h.reusing.stats().reused_tiles.value(), 1u);
  EXPECT_EQ(replayed, executed);
  EXPECT_EQ(h.reusing.stats().bundles.value(), 2 * h.executing.stats().bundles.value());
  EXPECT_EQ(h.reusing.stats().bytes_read.value(), 2 * h.executing.stats().bytes_read.value());
  EXPECT_GT(executed, 0u);
  // The last tile reaches the tensors' end, where bursts are clipped: it is executed, not reused.
  const Slice last{{448, 0, 0, 0, 0}, {512, 1, 1, 1, 1}};
  const core::TimePs tail_executed = run_tile(h, h.executing, plan, last);
  EXPECT_EQ(run_tile(h, h.reusing, plan, last), tail_executed);
  EXPECT_EQ(h.reusing.stats().reused_tiles.value(), 1u);
}

// A kernel's time is the larger of its bundles at the clock and its memory traffic: here a
// memory of 50 GB/s binds (768 KiB take 15.7 us; the bundles issue in 4.4 us at 1.5 GHz).
TEST(TpcCore, AStreamingTileRunsAtTheMemorysRate) {
  Harness h("harness", 50e9);
  sc_core::sc_start(sc_core::SC_ZERO_TIME);
  const std::vector<std::uint8_t> binary = kernel_binary("add.f32", Generation::kGaudi2);
  h.memory.backing().write(kBinary, binary.data(), binary.size());
  const KernelPlan plan = plan_kernel({"add", Dtype::kF32, std::nullopt, {65536}, {}});
  const core::TimePs t =
      run_tile(h, h.executing, plan, Slice{{0, 0, 0, 0, 0}, plan.launches[0].index_space});
  const double bytes = 3.0 * 65536 * 4;
  const double memory_ps = bytes / 50e9 * 1e12;
  EXPECT_GT(static_cast<double>(t), memory_ps);
  EXPECT_LT(static_cast<double>(t), 1.1 * memory_ps);
  const double bundle_ps = static_cast<double>(h.executing.stats().bundles.value()) / 1.5e9 * 1e12;
  EXPECT_LT(bundle_ps, memory_ps);
}

// A timing-only core computes no vector values. Nothing but vector values depends on them (no
// instruction moves a vector into a scalar, index or predicate register or an address), so
// every kernel of the library takes the same time and bundles as when a functional core runs
// it on real data. Index buffers (embedding rows, labels) are the exception that is not the
// vector unit's: their values are addresses, and a timing-only core reads them as zeros, so
// they are zero here too.
TEST(TpcCore, TimingOnlyCoresTakeTheTimeOfComputingEveryValue) {
  Harness h("harness", 200e9, true);
  sc_core::sc_start(sc_core::SC_ZERO_TIME);
  std::vector<KernelRequest> requests;
  for (const KernelInfo& info : kernel_infos()) {
    KernelRequest r{info.name, info.dtypes.front(), std::nullopt, {300, 7}, {}};
    if (info.name == "cast") r.to = info.dtypes.front() == Dtype::kF32 ? Dtype::kBf16 : Dtype::kF32;
    if (info.name == "embedding") r.params["indices"] = 37;
    if (info.name.rfind("reduce", 0) == 0) r.params["dim"] = 1;
    if (info.name == "batch_norm" || info.name == "batch_norm_bwd" || r.params.count("dim")) {
      // Rows of more than 512 channels take the wide kernels, in several blocks.
      KernelRequest wide = r;
      wide.shape = {600, 130};
      requests.push_back(wide);
    }
    if (info.name.find("pool") != std::string::npos) {
      // Windows overlapping along H (the backward gathers), then apart (its cells kernels).
      r.shape = {100, 9, 7, 5};
      r.params = {{"window_h", 3}, {"window_w", 3}, {"stride_h", 2}, {"pad_h", 1}, {"pad_w", 1}};
      requests.push_back(r);
      r.params = {{"window_h", 2}, {"window_w", 3}, {"pad_w", 1}};
    }
    requests.push_back(r);
  }
  std::set<std::string> kernels;
  for (const KernelRequest& r : requests) {
    const KernelPlan plan = plan_kernel(r);
    std::vector<std::vector<std::uint8_t>> buffers = make_buffers(plan, 5);
    for (std::size_t i = 0; i < buffers.size(); ++i) {
      if (plan.buffers[i].fill.kind == Fill::kIntegers)
        std::fill(buffers[i].begin(), buffers[i].end(), 0);
    }
    const std::vector<std::uint64_t> addresses = buffer_addresses(plan, kBuffers);
    for (std::size_t i = 0; i < buffers.size(); ++i)
      h.memory.backing().write(addresses[i], buffers[i].data(), buffers[i].size());
    for (std::size_t l = 0; l < plan.launches.size(); ++l) {
      const std::vector<std::uint8_t> binary =
          kernel_binary(plan.launches[l].binary, Generation::kGaudi2);
      h.memory.backing().write(kBinary, binary.data(), binary.size());
      const Slice all{{}, plan.launches[l].index_space};
      const std::uint64_t bundles = h.executing.stats().bundles.value();
      const core::TimePs computed = run_tile(h, h.executing, plan, all, l);
      const std::uint64_t computed_bundles = h.executing.stats().bundles.value() - bundles;
      const std::uint64_t before = h.reusing.stats().bundles.value();
      EXPECT_EQ(run_tile(h, h.reusing, plan, all, l), computed) << r.kernel << " launch " << l;
      EXPECT_EQ(h.reusing.stats().bundles.value() - before, computed_bundles) << r.kernel;
    }
    kernels.insert(r.kernel);
  }
  EXPECT_EQ(kernels.size(), kernel_infos().size());
  EXPECT_EQ(h.executing.stats().failed.value(), 0u);
}

}  // namespace
}  // namespace podsim::tpc

namespace podsim::tpc {
namespace {

// A binary scheduled for another generation's latencies is refused with a kernel fault: its
// code would read results before this core's pipeline has them.
TEST(TpcCore, RefusesABinaryScheduledForAnotherGeneration) {
  Harness h("harness");
  std::vector<core::ErrorEvent> errors;
  h.executing.set_error_sink([&](const core::ErrorEvent& e) { errors.push_back(e); });
  sc_core::sc_start(sc_core::SC_ZERO_TIME);
  const std::vector<std::uint8_t> binary = kernel_binary("add.f32", Generation::kGaudi);
  h.memory.backing().write(kBinary, binary.data(), binary.size());
  const KernelPlan plan = plan_kernel({"add", Dtype::kF32, std::nullopt, {4096}, {}});
  run_tile(h, h.executing, plan, {{0, 0, 0, 0, 0}, {4, 1, 1, 1, 1}});
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].kind, core::ErrorEvent::Kind::kKernelFault);
  EXPECT_THAT(errors[0].detail,
              ::testing::HasSubstr("scheduled for gaudi cores; this core is gaudi2"));
  EXPECT_EQ(h.executing.stats().failed.value(), 1u);
}

// The library builds every kernel for each generation; they differ where the latencies do (an
// integer divide takes 7 cycles on Gaudi, 12 on Gaudi2).
TEST(TpcCore, TheLibraryHoldsEveryKernelForEachGeneration) {
  for (const std::string& key : kernel_binary_keys()) {
    for (int g = 0; g < kGenerationCount; ++g) {
      const auto binary = kernel_binary(key, static_cast<Generation>(g));
      EXPECT_EQ(binary_generation(binary.data()), static_cast<Generation>(g)) << key;
    }
  }
  const std::string divides = "mov.i32 s1, 100\ndiv.i32 s2, s1, 7\nadd.i32 s3, s2, 1\nhalt\n";
  const auto gaudi = assemble(".sched\n" + divides + ".endsched\n", {"t", {}, Generation::kGaudi});
  const auto gaudi2 =
      assemble(".sched\n" + divides + ".endsched\n", {"t", {}, Generation::kGaudi2});
  EXPECT_EQ(gaudi2.bundles.size(), gaudi.bundles.size() + 5);
}

}  // namespace
}  // namespace podsim::tpc
