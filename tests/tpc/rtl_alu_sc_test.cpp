// The RTL vector ALU (tpc_vector_alu.sv through Verilator) against the C++ datapath: every
// operation and type the RTL implements, on random operands salted with the values where
// float arithmetic goes wrong (zeros of both signs, subnormals, the largest finite values,
// infinities, NaNs with payloads, ties for rounding), must give identical bits. And a kernel run
// by a core whose vector ALU is the RTL writes what the C++ datapath writes.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>

#include "collectives/system_file.h"
#include "core/kernel.h"
#include "core/random.h"
#include "hw/system/topology.h"
#include "hw/tpc/kernels/functional.h"
#include "hw/tpc/rtl/rtl_vector_alu.h"
#include "tests/support/on_chip.h"

namespace podsim::tpc {
namespace {

// Bit patterns of a lane type, a quarter of them from the troublesome set.
class Operands {
 public:
  explicit Operands(std::uint64_t seed) : rng_(seed) {}

  std::uint32_t f32() {
    static const std::uint32_t kSpecial[] = {
        0x00000000, 0x80000000, 0x00000001, 0x80000001, 0x007FFFFF, 0x00800000, 0x00800001,
        0x7F7FFFFF, 0xFF7FFFFF, 0x7F800000, 0xFF800000, 0x7FC00000, 0x7F800001, 0xFFC12345,
        0x3F800000, 0xBF800000, 0x3F800001, 0x33800000, 0x34000000, 0x4B000000, 0x3EFFFFFF};
    const std::uint64_t r = rng_.next();
    if (r % 4 == 0) return kSpecial[(r >> 8) % std::size(kSpecial)];
    if (r % 4 == 1) return static_cast<std::uint32_t>(r >> 32);  // any bits
    // Near 1 with a random exponent offset: sums and products that round and cancel.
    const std::uint32_t exponent = 127 + static_cast<std::uint32_t>((r >> 8) % 48) - 24;
    return static_cast<std::uint32_t>((r >> 60) & 1) << 31 | exponent << 23 |
           (static_cast<std::uint32_t>(r >> 16) & 0x7FFFFF);
  }
  std::uint16_t bf16() {
    const std::uint64_t r = rng_.next();
    if (r % 3 == 0) return static_cast<std::uint16_t>(f32() >> 16);
    return static_cast<std::uint16_t>(r >> 24);
  }
  std::uint32_t integer() {
    static const std::uint32_t kSpecial[] = {0, 1, 0xFFFFFFFF, 0x80000000, 0x7FFFFFFF, 31, 32, 33};
    const std::uint64_t r = rng_.next();
    if (r % 4 == 0) return kSpecial[(r >> 8) % std::size(kSpecial)];
    if (r % 4 == 1) return static_cast<std::uint32_t>(r >> 40) % 64;
    return static_cast<std::uint32_t>(r >> 32);
  }
  void fill(Vector& v, Dtype t) {
    for (int i = 0; i < 64; ++i) {
      if (t == Dtype::kBf16) {
        v.u16[2 * i] = bf16();
        v.u16[2 * i + 1] = bf16();
      } else {
        v.u32[i] = t == Dtype::kF32 ? f32() : integer();
      }
    }
  }
  std::uint64_t next() { return rng_.next(); }

 private:
  core::Random rng_;
};

struct Comparison {
  std::uint64_t operations = 0;
  std::vector<std::string> mismatches;
};

// Runs the comparison in a SystemC thread: the RTL answers through delta cycles.
struct Bench : sc_core::sc_module {
  RtlVectorAlu alu{"alu"};
  Comparison result;
  int vectors_per_case;
  SC_HAS_PROCESS(Bench);
  Bench(sc_core::sc_module_name name, int vectors) : sc_module(name), vectors_per_case(vectors) {
    SC_THREAD(compare);
  }

  void compare() {
    Operands gen(42);
    for (int o = 0; o < kOpCount; ++o) {
      const Op op = static_cast<Op>(o);
      for (int t = 0; t < kDtypeCount; ++t) {
        const Dtype dtype = static_cast<Dtype>(t);
        if (!RtlVectorAlu::implements(op, dtype)) continue;
        for (int n = 0; n < vectors_per_case; ++n) compare_one(op, dtype, gen);
      }
    }
  }

  void compare_one(Op op, Dtype t, Operands& gen) {
    Vector a, b, d, want, got;
    VMask c, want_mask, got_mask;
    gen.fill(a, t);
    gen.fill(b, t);
    gen.fill(d, t);
    c.words = {gen.next(), gen.next(), gen.next(), gen.next()};
    VpuArgs args;
    args.a = &a, args.b = &b, args.d = &d, args.c = &c;
    args.modifier = static_cast<std::uint8_t>(gen.next() % 6);  // cmp's condition
    const bool mask = op == Op::kVpuCmp;
    VpuArgs cpp = args, rtl = args;
    if (mask) {
      cpp.out_mask = &want_mask, rtl.out_mask = &got_mask;
    } else {
      cpp.out = &want, rtl.out = &got;
    }
    vpu_function(op, t)(cpp);
    ASSERT_TRUE(alu.execute(op, t, rtl));
    ++result.operations;
    if (mask ? got_mask == want_mask : std::memcmp(got.u8, want.u8, 256) == 0) return;
    for (int i = 0; i < 64 && result.mismatches.size() < 10; ++i) {
      if (!mask && got.u32[i] != want.u32[i]) {
        result.mismatches.push_back(fmt::format(
            "{}.{} word {}: a {:#010x} b {:#010x} d {:#010x}: rtl {:#010x}, c++ {:#010x}",
            info(op).name, info(t).name, i, a.u32[i], b.u32[i], d.u32[i], got.u32[i], want.u32[i]));
      }
    }
    if (mask)
      result.mismatches.push_back(
          fmt::format("{}.{} cond {}: masks differ", info(op).name, info(t).name, args.modifier));
  }
};

TEST(RtlVectorAlu, AgreesWithTheCppDatapathBitForBitOnRandomOperations) {
  Bench bench("bench", 40);
  sc_core::sc_start();
  // 16 operations over their types, 40 vectors of 64 or 128 elements each.
  EXPECT_GE(bench.result.operations, 1500u);
  EXPECT_EQ(bench.alu.operations(), bench.result.operations);
  EXPECT_THAT(bench.result.mismatches, ::testing::IsEmpty());
}

TEST(RtlVectorAlu, TakesWhatItImplementsAndLeavesTheRestToCpp) {
  EXPECT_TRUE(RtlVectorAlu::implements(Op::kVpuAdd, Dtype::kBf16));
  EXPECT_TRUE(RtlVectorAlu::implements(Op::kVpuShr, Dtype::kI32));
  EXPECT_FALSE(RtlVectorAlu::implements(Op::kVpuAdd, Dtype::kF16));
  EXPECT_FALSE(RtlVectorAlu::implements(Op::kVpuExp, Dtype::kF32));
  EXPECT_FALSE(RtlVectorAlu::implements(Op::kVpuAnd, Dtype::kF32));
}

// A kernel on a chip whose TPCs use the RTL: the results equal the C++ datapath's functional
// run bit for bit, and the RTL computed the VPU work it implements.
TEST(RtlVectorAlu, KernelsOnRtlCoresWriteWhatTheCppDatapathWrites) {
  auto loaded =
      collectives::load_system_file("hls2", {"chip.tpc.core.vpu_model=rtl", "chip.tpc.cores=2"});
  system::SystemModel m("system", loaded.config, system::build_topology(loaded.config),
                        system::ModelOptions{1, true});
  sc_core::sc_start(sc_core::SC_ZERO_TIME);
  chip::Chip& chip = m.chip(0);
  const KernelRequest requests[] = {{"layer_norm", Dtype::kBf16, std::nullopt, {100, 3}, {}},
                                    {"relu", Dtype::kF32, std::nullopt, {1000}, {}},
                                    {"add", Dtype::kI32, std::nullopt, {700}, {}}};
  std::vector<std::vector<std::vector<std::uint8_t>>> got, want;
  const std::string failure = test::with_runtime(m, [&](synapse::Runtime& rt) {
    for (const KernelRequest& r : requests) {
      const KernelPlan plan = plan_kernel(r);
      auto buffers = make_buffers(plan, 3);
      auto expected = buffers;
      run_functional(plan, expected, 2);
      got.push_back(test::node_buffers(plan, buffers));
      want.push_back(test::node_buffers(plan, expected));
      synapse::run_kernel(rt, r, 0, &got.back());
    }
  });
  ASSERT_EQ(failure, "");
  ASSERT_EQ(got.size(), 3u);
  for (std::size_t k = 0; k < got.size(); ++k) {
    for (std::size_t i = 0; i < got[k].size(); ++i) {
      EXPECT_EQ(got[k][i], want[k][i]) << requests[k].kernel << " tensor " << i;
    }
  }
  EXPECT_GT(chip.tpc(0).rtl_alu()->operations(), 0u);
  EXPECT_EQ(chip.error_count(), 0u);
}

}  // namespace
}  // namespace podsim::tpc
