// Every kernel of the TPC library against its CPU reference, on at least 20 shapes per type
// (ragged edges included: sizes that are not multiples of a vector or of a loop's unrolling),
// run by the executor over flat memory with the index space split across three cores.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "hw/tpc/kernels/functional.h"
#include "hw/tpc/kernels/library.h"

namespace podsim::tpc {
namespace {

using Shapes = std::vector<std::vector<std::uint32_t>>;

// Shapes of any rank; element counts around the vector and unrolling boundaries.
const Shapes kAnyShapes = {
    {1},     {7},         {63},     {64},       {65},         {127},           {128},
    {255},   {256},       {257},    {1000},     {4097},       {3, 5},          {17, 3},
    {64, 2}, {100, 3, 2}, {129, 4}, {31, 7, 3}, {5, 5, 5, 5}, {2, 3, 4, 5, 6}, {300, 7}};
// [C, R...] with C around the 64-lane chunks and rows beyond the four-row blocks.
const Shapes kRowShapes = {{1, 1},        {1, 9},   {7, 3},   {63, 2},  {64, 5},   {65, 4},
                           {100, 1},      {127, 3}, {128, 2}, {129, 7}, {200, 5},  {255, 2},
                           {256, 3},      {257, 6}, {511, 1}, {513, 2}, {1000, 3}, {64, 2, 3},
                           {30, 3, 2, 2}, {700, 9}, {2049, 2}};
const Shapes kMatrixShapes = {{1, 1},   {1, 5},   {5, 1},   {7, 3},   {63, 2},    {64, 64},
                              {65, 3},  {100, 7}, {127, 2}, {128, 3}, {129, 129}, {200, 9},
                              {255, 4}, {256, 2}, {257, 3}, {31, 33}, {300, 11},  {2, 300},
                              {17, 64}, {64, 17}, {513, 5}};

struct Case {
  std::string kernel;
  const Shapes* shapes;
  std::map<std::string, double> params;
};

// How ctest's listing names a case (GoogleTest would print its bytes).
void PrintTo(const Case& c, std::ostream* os) { *os << c.kernel; }

std::vector<Case> cases() {
  std::vector<Case> out;
  for (const char* k :
       {"add", "sub", "mul", "min", "max", "div", "relu", "relu_bwd", "gelu", "gelu_bwd", "sigmoid",
        "sigmoid_bwd", "tanh", "tanh_bwd", "sgd_momentum", "adam", "lamb"}) {
    out.push_back({k, &kAnyShapes, {}});
  }
  for (const char* k : {"bias_add", "softmax", "log_softmax", "cross_entropy", "cross_entropy_bwd",
                        "layer_norm", "layer_norm_bwd", "batch_norm", "batch_norm_bwd"}) {
    out.push_back({k, &kRowShapes, {}});
  }
  out.push_back({"reduce_sum", &kRowShapes, {{"dim", 0}}});
  out.push_back({"reduce_max", &kRowShapes, {{"dim", 0}}});
  out.push_back({"reduce_sum", &kRowShapes, {{"dim", 1}}});
  out.push_back({"reduce_max", &kRowShapes, {{"dim", 1}}});
  out.push_back({"transpose", &kMatrixShapes, {}});
  out.push_back({"embedding", &kMatrixShapes, {{"indices", 37}}});
  return out;
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  std::string name = info.param.kernel;
  for (const auto& [k, v] : info.param.params)
    name += "_" + k + std::to_string(static_cast<int>(v));
  return name;
}

class KernelLibrary : public ::testing::TestWithParam<Case> {};

TEST_P(KernelLibrary, MatchesItsCpuReferenceOnEveryShapeAndType) {
  const Case& c = GetParam();
  int runs = 0;
  for (const KernelInfo& info : kernel_infos()) {
    if (info.name != c.kernel) continue;
    for (Dtype t : info.dtypes) {
      for (const auto& shape : *c.shapes) {
        KernelRequest request{c.kernel, t, std::nullopt, shape, c.params};
        const KernelPlan plan = plan_kernel(request);
        auto got = make_buffers(plan, 42 + runs);
        auto want = got;
        run_functional(plan, got, 3);
        run_reference(plan, want);
        for (std::size_t b = 0; b < plan.buffers.size(); ++b) {
          const auto role = plan.buffers[b].role;
          if (role != BufferSpec::Role::kOutput && role != BufferSpec::Role::kInOut) continue;
          const auto problem = compare_buffer(plan, static_cast<int>(b), got[b], want[b]);
          ASSERT_EQ(problem, std::nullopt) << c.kernel << "." << tpc::info(t).name << " shape "
                                           << ::testing::PrintToString(shape);
        }
        ++runs;
      }
    }
  }
  EXPECT_GE(runs, 20);
}

INSTANTIATE_TEST_SUITE_P(Tpc, KernelLibrary, ::testing::ValuesIn(cases()), case_name);

TEST(KernelLibrary, CastsConvertEveryPairTheLibraryHas) {
  const std::pair<Dtype, Dtype> pairs[] = {{Dtype::kF32, Dtype::kBf16}, {Dtype::kBf16, Dtype::kF32},
                                           {Dtype::kF32, Dtype::kF16},  {Dtype::kF16, Dtype::kF32},
                                           {Dtype::kBf16, Dtype::kF16}, {Dtype::kF16, Dtype::kBf16},
                                           {Dtype::kI32, Dtype::kF32},  {Dtype::kF32, Dtype::kI32}};
  int runs = 0;
  for (const auto& [from, to] : pairs) {
    for (const auto& shape : kAnyShapes) {
      const KernelPlan plan = plan_kernel({"cast", from, to, shape, {}});
      auto got = make_buffers(plan, 7 + runs++);
      auto want = got;
      run_functional(plan, got, 3);
      run_reference(plan, want);
      ASSERT_EQ(compare_buffer(plan, 1, got[1], want[1]), std::nullopt)
          << info(from).name << " to " << info(to).name;
    }
  }
}

TEST(KernelLibrary, BadRequestsAreRefusedWithTheReason) {
  const auto error = [](const KernelRequest& r) {
    try {
      plan_kernel(r);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_THAT(error({"frobnicate", Dtype::kF32, std::nullopt, {4}, {}}),
              ::testing::HasSubstr("unknown kernel 'frobnicate' (kernels: add,"));
  EXPECT_EQ(error({"softmax", Dtype::kI32, std::nullopt, {4}, {}}),
            "kernel 'softmax' does not take type i32 (types: f32, bf16, f16)");
  EXPECT_EQ(error({"add", Dtype::kF32, std::nullopt, {4, 0}, {}}),
            "kernel 'add': dimension 1 of the shape is 0");
  EXPECT_EQ(error({"add", Dtype::kF32, std::nullopt, {}, {}}),
            "kernel 'add' needs a shape of 1 to 5 dimensions, not 0");
  EXPECT_THAT(error({"adam", Dtype::kF32, std::nullopt, {4}, {{"lr2", 1}}}),
              ::testing::HasSubstr("has no parameter 'lr2' (it takes lr (default 0.001)"));
  EXPECT_EQ(error({"adam", Dtype::kF32, std::nullopt, {4}, {{"beta1", 1.5}}}),
            "kernel 'adam': beta1 and beta2 must lie in [0, 1)");
  EXPECT_THAT(error({"softmax", Dtype::kF32, std::nullopt, {30000, 2}, {}}),
              ::testing::HasSubstr("rows of 30000 elements"));
  EXPECT_EQ(error({"cast", Dtype::kI32, Dtype::kBf16, {4}, {}}),
            "kernel 'cast' has no conversion from i32 to bf16");
  EXPECT_EQ(error({"reduce_sum", Dtype::kF32, std::nullopt, {4, 4}, {{"dim", 2}}}),
            "kernel 'reduce_sum': dim = 2 (0 or 1)");
}

TEST(KernelLibrary, TheIndexSpaceIsSplitIntoContiguousSlicesAlongItsOutermostDimension) {
  const std::vector<Slice> s = partition({10, 7, 1, 1, 1}, 3);
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0].start[1], 0);
  EXPECT_EQ(s[0].end[1], 2);
  EXPECT_EQ(s[2].end[1], 7);
  EXPECT_EQ(s[1].start[0], 0);
  EXPECT_EQ(s[1].end[0], 10);
  EXPECT_EQ(partition({2, 1, 1, 1, 1}, 8).size(), 2u);
}

}  // namespace
}  // namespace podsim::tpc
