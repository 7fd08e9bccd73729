// Every kernel of the TPC library against its CPU reference, on at least 20 shapes per type
// (ragged edges included: sizes that are not multiples of a vector or of a loop's unrolling),
// run by the executor over flat memory with the index space split across three cores.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

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
// Rows the softmax kernels keep in registers (up to 128, 256 and 512 elements), enough of them
// that a core's slice takes several loop passes, the last one partial, and rows whose end is
// left to the next pass and after the last one (softmax_rows.tpcs).
const Shapes kManyShortRowShapes = {{128, 100}, {100, 61}, {64, 50},  {1, 30},
                                    {129, 47},  {256, 45}, {200, 37}, {65, 26},
                                    {512, 29},  {300, 23}, {128, 8},  {128, 3, 11}};
// Rows past what the layer norms keep in vector local memory (4096 backward, 6656 forward).
const Shapes kWideRowShapes = {{4097, 3}, {6657, 2}};
// The kernels by width: in registers (4 to 16 vectors, ragged or whole; forward, a pass taking
// two rows: odd slices leave one spare), then in vector local memory (the forward's up to 6656,
// the backward's 4096; past that the wide kernels).
const Shapes kLayerNormShapes = {{1024, 5}, {1024, 1}, {768, 7},  {960, 2}, {769, 3},
                                 {256, 4},  {1025, 3}, {4096, 2}, {6656, 3}};
// Reductions over the rows of each channel (reduce along dimension 1, batch norm): the row shapes,
// then rows enough to split into several blocks (the last one shorter), with one to eight
// 64-channel vectors per row (a pass then takes several rows, or leaves slots spare), wider rows
// (walked in octets, then in groups of 4096 channels), channels below one vector, and ResNet-50's
// C = 64 over rows enough for the most blocks (192; its 802816 rows would take minutes here).
Shapes column_shapes() {
  Shapes s = kRowShapes;
  s.insert(s.end(), {{64, 2000},
                     {65, 3001},
                     {200, 777},
                     {300, 555},
                     {7, 10001},
                     {513, 301},
                     {1000, 130},
                     {2049, 70},
                     {2048, 200},
                     {4500, 150},
                     {64, 7, 7, 41},
                     {64, 100000}});
  return s;
}
const Shapes kColumnShapes = column_shapes();
// Batch norm's fused variants change only its last pass: both of its layouts (C dividing 512
// streams flat, any other walks rows), ragged rows, and a wide row.
const Shapes kEpilogueShapes = {{64, 2000}, {65, 301},  {200, 77},     {256, 300},
                                {7, 1001},  {1000, 13}, {64, 7, 7, 41}};
const Shapes kMatrixShapes = {{1, 1},   {1, 5},   {5, 1},   {7, 3},   {63, 2},    {64, 64},
                              {65, 3},  {100, 7}, {127, 2}, {128, 3}, {129, 129}, {200, 9},
                              {255, 4}, {256, 2}, {257, 3}, {31, 33}, {300, 11},  {2, 300},
                              {17, 64}, {64, 17}, {513, 5}};
// Pooling's x [C, W, H, N] for each window: C around the 64-lane vectors and the four vectors a
// point covers, N around the four batch elements a point may cover instead, edges the windows
// do not reach, inputs no larger than one window.
const Shapes kStemPoolShapes = {{64, 16, 16, 2}, {1, 1, 1, 1},   {65, 5, 6, 3}, {130, 7, 4, 1},
                                {3, 2, 9, 5},    {256, 4, 4, 2}, {300, 3, 5, 1}};
const Shapes kMnistPoolShapes = {{32, 26, 26, 2}, {20, 11, 11, 3}, {1, 2, 2, 1},  {70, 3, 5, 4},
                                 {64, 26, 11, 1}, {129, 4, 7, 2},  {7, 11, 26, 5}};
// Global pools take a kernel of 8, 16 or 32 running vectors by C (global_pool.tpcs); past 2048
// channels, the point per window position.
const Shapes kGlobalPoolShapes = {{2048, 7, 7, 2}, {64, 7, 7, 3},   {1, 7, 7, 1},
                                  {100, 7, 7, 5},  {257, 7, 7, 4},  {512, 7, 7, 1},
                                  {3, 7, 7, 9},    {1000, 7, 7, 3}, {2100, 7, 7, 1}};
const Shapes kOddPoolShapes = {{5, 7, 6, 2},   {64, 4, 3, 1}, {66, 9, 5, 3}, {1, 2, 2, 1},
                               {200, 8, 8, 2}, {2, 5, 1, 6},  {130, 3, 4, 4}};
using Params = std::map<std::string, double>;
// ResNet-50's stem, MNIST's 2 x 2, ResNet-50's global average pool, and windows whose axes
// differ in every parameter: overlapping along both, and with strides beyond the window (inputs
// no window covers).
const Params kStemPool = {{"window_h", 3}, {"window_w", 3}, {"stride_h", 2},
                          {"stride_w", 2}, {"pad_h", 1},    {"pad_w", 1}};
const Params kMnistPool = {{"window_h", 2}, {"window_w", 2}, {"stride_h", 2}, {"stride_w", 2}};
const Params kGlobalPool = {{"window_h", 7}, {"window_w", 7}};
const Params kOddPool = {{"window_h", 3}, {"window_w", 4}, {"stride_h", 1},
                         {"stride_w", 3}, {"pad_h", 2},    {"pad_w", 1}};
const Params kGappedPool = {{"window_h", 2}, {"window_w", 1}, {"stride_h", 3},
                            {"stride_w", 2}, {"pad_h", 1},    {"pad_w", 0}};
// 2 x 2 windows a column and a row apart: each input in up to four windows, walked row by row.
const Params kOverlapPool = {{"window_h", 2}, {"window_w", 2}, {"stride_h", 1},
                             {"stride_w", 1}, {"pad_h", 1},    {"pad_w", 0}};

struct Case {
  std::string kernel;
  const Shapes* shapes;
  std::map<std::string, double> params;
  std::string label = {};  // tells apart cases of one kernel and parameters on other shapes
};

// How ctest's listing names a case (GoogleTest would print its bytes).
void PrintTo(const Case& c, std::ostream* os) { *os << c.kernel; }

std::vector<Case> cases() {
  std::vector<Case> out;
  for (const char* k :
       {"add",          "sub",  "mul",      "min",     "max",         "div",        "relu",
        "relu_bwd",     "gelu", "gelu_bwd", "sigmoid", "sigmoid_bwd", "tanh",       "tanh_bwd",
        "sgd_momentum", "adam", "lamb",     "lars",    "dropout",     "dropout_bwd"}) {
    out.push_back({k, &kAnyShapes, {}});
  }
  out.push_back({"fill", &kAnyShapes, {}});
  out.push_back({"fill", &kAnyShapes, {{"value", -1.5}}, "negative"});
  for (const char* k : {"bias_add", "softmax", "softmax_bwd", "log_softmax", "cross_entropy",
                        "cross_entropy_bwd", "layer_norm", "layer_norm_bwd"}) {
    out.push_back({k, &kRowShapes, {}});
  }
  out.push_back({"softmax", &kManyShortRowShapes, {}, "passes"});
  out.push_back({"softmax_bwd", &kManyShortRowShapes, {}, "passes"});
  out.push_back({"batch_norm", &kColumnShapes, {}});
  out.push_back({"batch_norm", &kEpilogueShapes, {{"relu", 1}}});      // a ReLU folded in
  out.push_back({"batch_norm", &kEpilogueShapes, {{"residual", 1}}});  // and a residual
  out.push_back({"batch_norm", &kEpilogueShapes, {{"residual", 1}, {"relu", 1}}});
  out.push_back({"batch_norm_bwd", &kColumnShapes, {}});
  // Layer norm's backward sums dgamma and dbeta over blocks of rows; rows too wide for vector
  // local memory take the kernels that read gamma (and beta) from memory for every row.
  out.push_back({"layer_norm_bwd", &kColumnShapes, {}, "blocks"});
  out.push_back({"layer_norm", &kWideRowShapes, {}, "wide"});
  out.push_back({"layer_norm", &kLayerNormShapes, {}, "widths"});
  out.push_back({"layer_norm_bwd", &kLayerNormShapes, {}, "widths"});
  out.push_back({"layer_norm_bwd", &kWideRowShapes, {}, "wide"});
  out.push_back({"reduce_sum", &kRowShapes, {{"dim", 0}}});
  out.push_back({"reduce_max", &kRowShapes, {{"dim", 0}}});
  out.push_back({"reduce_sum", &kColumnShapes, {{"dim", 1}}});
  out.push_back({"reduce_max", &kColumnShapes, {{"dim", 1}}});
  out.push_back({"transpose", &kMatrixShapes, {}});
  out.push_back({"embedding", &kMatrixShapes, {{"indices", 37}}});
  for (const char* k : {"max_pool", "max_pool_bwd", "avg_pool", "avg_pool_bwd"}) {
    out.push_back({k, &kStemPoolShapes, kStemPool});
    out.push_back({k, &kMnistPoolShapes, kMnistPool});
    out.push_back({k, &kGlobalPoolShapes, kGlobalPool});
    out.push_back({k, &kOddPoolShapes, kOddPool});
    out.push_back({k, &kOddPoolShapes, kGappedPool});
    out.push_back({k, &kMnistPoolShapes, kOverlapPool});
  }
  // The gradient through a ReLU before the pool folded in, on each of the backward's paths (the
  // stem's row pairs, the row walks, windows apart, the point per position).
  const auto with_relu = [](Params p) {
    p["relu"] = 1;
    return p;
  };
  out.push_back({"max_pool_bwd", &kStemPoolShapes, with_relu(kStemPool)});
  out.push_back({"max_pool_bwd", &kMnistPoolShapes, with_relu(kMnistPool)});
  out.push_back({"max_pool_bwd", &kGlobalPoolShapes, with_relu(kGlobalPool)});
  out.push_back({"max_pool_bwd", &kOddPoolShapes, with_relu(kOddPool)});
  out.push_back({"max_pool_bwd", &kMnistPoolShapes, with_relu(kOverlapPool)});
  return out;
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  std::string name = info.param.kernel;
  for (const auto& [k, v] : info.param.params) {
    if (v >= 0) name += "_" + k + std::to_string(static_cast<int>(v));
  }
  if (!info.param.label.empty()) name += "_" + info.param.label;
  return name;
}

// Fills the outputs with NaN (all ones), so that an element a kernel does not write fails.
void poison_outputs(const KernelPlan& plan, std::vector<std::vector<std::uint8_t>>& buffers) {
  for (std::size_t b = 0; b < plan.buffers.size(); ++b) {
    if (plan.buffers[b].role == BufferSpec::Role::kOutput)
      std::fill(buffers[b].begin(), buffers[b].end(), 0xFF);
  }
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
        poison_outputs(plan, got);
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
  // The kernel exists, and every shape ran in at least two types.
  EXPECT_GE(runs, 2 * static_cast<int>(c.shapes->size()));
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

// Dropout's draws: about 1 - p of the elements kept, whatever the values; the same draws on one
// core or seven (they follow the element, not the split); another seed, other draws.
TEST(KernelLibrary, DropoutKeepsOneMinusPAndItsDrawsFollowTheSeedAndElementAlone) {
  const std::uint32_t n = 1 << 17;
  const auto masks = [&](double p, double seed, int cores) {
    const KernelPlan plan =
        plan_kernel({"dropout", Dtype::kBf16, std::nullopt, {n}, {{"p", p}, {"seed", seed}}});
    auto buffers = make_buffers(plan, 5);
    run_functional(plan, buffers, cores);
    return buffers[2];
  };
  for (const double p : {0.1, 0.5, 0.9}) {
    const auto mask = masks(p, 3, 7);
    const double kept = std::accumulate(mask.begin(), mask.end(), 0.0) / n;
    const double sigma = std::sqrt(p * (1 - p) / n);
    EXPECT_NEAR(kept, 1 - p, 4 * sigma) << "p = " << p;
  }
  const auto one = masks(0.1, 3, 1), seven = masks(0.1, 3, 7), other = masks(0.1, 4, 7);
  EXPECT_EQ(one, seven);
  std::size_t differ = 0;
  for (std::uint32_t i = 0; i < n; ++i) differ += one[i] != other[i];
  // Two independent draws with p = 0.1 disagree on 2 p (1 - p) = 18% of the elements.
  EXPECT_NEAR(static_cast<double>(differ) / n, 0.18, 0.01);
  // Neighbouring elements are not correlated: both kept as often as independent draws are.
  std::size_t pairs = 0;
  for (std::uint32_t i = 0; i + 1 < n; i += 2) pairs += one[i] && one[i + 1];
  EXPECT_NEAR(static_cast<double>(pairs) / (n / 2), 0.81, 0.01);
}

// A slice dropped on its own with its place as the offset draws what the whole tensor draws
// there (how a layer drops its attention a sequence at a time): the masks' bytes agree.
TEST(KernelLibrary, DropoutOfASliceAtItsOffsetDrawsAsTheWholeTensorThere) {
  const std::uint32_t n = 3 * 4096, first = 4096 + 256;
  const auto mask = [](std::uint32_t elements, double offset) {
    const KernelPlan plan = plan_kernel({"dropout",
                                         Dtype::kBf16,
                                         std::nullopt,
                                         {elements},
                                         {{"p", 0.3}, {"seed", 9}, {"offset", offset}}});
    auto buffers = make_buffers(plan, 5);
    run_functional(plan, buffers, 3);
    std::vector<std::uint8_t> want = buffers[2];
    run_reference(plan, buffers);
    EXPECT_EQ(buffers[2], want) << "the kernel and its reference disagree at offset " << offset;
    return want;
  };
  const std::vector<std::uint8_t> whole = mask(n, 0), tail = mask(n - first, first);
  EXPECT_TRUE(std::equal(tail.begin(), tail.end(), whole.begin() + first));
  // Another offset, other draws.
  const std::vector<std::uint8_t> moved = mask(n - first, first + 2);
  EXPECT_NE(moved, tail);
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
  EXPECT_THAT(error({"dropout", Dtype::kBf16, std::nullopt, {4}, {{"p", 0}}}),
              ::testing::HasSubstr("dropout: p = 0 is not in (0, 1)"));
  EXPECT_THAT(error({"dropout", Dtype::kBf16, std::nullopt, {4}, {{"seed", -1}}}),
              ::testing::HasSubstr("seed = -1 is not an integer"));
  EXPECT_THAT(error({"dropout", Dtype::kBf16, std::nullopt, {4}, {{"offset", 3}}}),
              ::testing::HasSubstr("offset = 3 is not an even integer"));
  EXPECT_EQ(error({"reduce_sum", Dtype::kF32, std::nullopt, {4, 4}, {{"dim", 2}}}),
            "kernel 'reduce_sum': dim = 2 (0 or 1)");
}

// Runs a request on three functional cores with the named inputs' values (other inputs zero),
// requires the reference to agree, and returns the named output.
std::vector<double> run_with(const KernelRequest& request,
                             const std::map<std::string, std::vector<double>>& inputs,
                             const std::string& output) {
  const KernelPlan plan = plan_kernel(request);
  std::vector<std::vector<std::uint8_t>> buffers;
  std::optional<std::size_t> out;
  for (const BufferSpec& b : plan.buffers) {
    buffers.emplace_back(b.bytes(), 0);
    if (b.name == output) out = buffers.size() - 1;
    const auto it = inputs.find(b.name);
    if (it == inputs.end()) continue;
    EXPECT_EQ(it->second.size(), b.elements()) << b.name;
    for (std::size_t i = 0; i < it->second.size() && i < b.elements(); ++i)
      write_element(buffers.back(), b.dtype, i, it->second[i]);
  }
  EXPECT_TRUE(out) << "no buffer " << output;
  if (!out) return {};
  auto want = buffers;
  poison_outputs(plan, buffers);
  run_functional(plan, buffers, 3);
  run_reference(plan, want);
  EXPECT_EQ(compare_buffer(plan, static_cast<int>(*out), buffers[*out], want[*out]), std::nullopt)
      << request.kernel;
  std::vector<double> got(plan.buffers[*out].elements());
  for (std::size_t i = 0; i < got.size(); ++i)
    got[i] = read_element(buffers[*out], plan.buffers[*out].dtype, i);
  return got;
}

// x [1, 4, 4, 1] = -(1 + w + 4 h): negative, so a padding of 0 would win a max.
std::vector<double> ramp_4x4() {
  std::vector<double> x(16);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = -1.0 - static_cast<double>(i);
  return x;
}

TEST(KernelLibrary, PoolingGivesHandComputedValues) {
  const std::vector<std::uint32_t> shape = {1, 4, 4, 1};
  // y and dy [1, Q, P, 1] are listed q + Q p; dx as x, w + 4 h.
  EXPECT_THAT(
      run_with({"max_pool", Dtype::kF32, std::nullopt, shape, {}}, {{"x", ramp_4x4()}}, "y"),
      ::testing::ElementsAre(-1, -3, -9, -11));
  EXPECT_THAT(
      run_with({"max_pool", Dtype::kF32, std::nullopt, shape, kStemPool}, {{"x", ramp_4x4()}}, "y"),
      ::testing::ElementsAre(-1, -2, -5, -6));
  EXPECT_THAT(
      run_with({"avg_pool", Dtype::kF32, std::nullopt, shape, {}}, {{"x", ramp_4x4()}}, "y"),
      ::testing::ElementsAre(-3.5, -5.5, -11.5, -13.5));
  // count_include_pad: the corner window holds four inputs and divides by nine.
  EXPECT_THAT(
      run_with({"avg_pool", Dtype::kF32, std::nullopt, shape, kStemPool}, {{"x", ramp_4x4()}}, "y"),
      ::testing::Pointwise(::testing::FloatEq(),
                           std::vector<float>{-14.f / 9, -30.f / 9, -57.f / 9, -11.f}));
  const std::vector<double> dy = {1, 2, 3, 4};
  EXPECT_THAT(
      run_with({"avg_pool_bwd", Dtype::kF32, std::nullopt, shape, kStemPool}, {{"dy", dy}}, "dx"),
      ::testing::Pointwise(::testing::FloatEq(),
                           std::vector<float>{1.f / 9, 3.f / 9, 2.f / 9, 2.f / 9,   //
                                              4.f / 9, 10.f / 9, 6.f / 9, 6.f / 9,  //
                                              3.f / 9, 7.f / 9, 4.f / 9, 4.f / 9,   //
                                              3.f / 9, 7.f / 9, 4.f / 9, 4.f / 9}));
  EXPECT_THAT(run_with({"max_pool_bwd", Dtype::kF32, std::nullopt, shape, kStemPool},
                       {{"x", ramp_4x4()}, {"y", {-1, -2, -5, -6}}, {"dy", dy}}, "dx"),
              ::testing::ElementsAre(1, 2, 0, 0, 3, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0));
}

// Each window's gradient goes to exactly one input: the first of the window's maxima in row
// major order. Inputs of all one value make every place a maximum; were ties shared, the inputs
// inside several windows would collect several gradients, and the others would not stay zero.
// Overlapping windows (a gather after an index pass) and windows apart (one pass over cells).
TEST(KernelLibrary, MaxPoolBwdGivesEachWindowsGradientToItsFirstMaximumOnly) {
  const Params overlapping = {{"window_h", 3}, {"window_w", 3}, {"stride_h", 1}, {"stride_w", 1}};
  for (Dtype t : {Dtype::kF32, Dtype::kBf16}) {
    for (const Params& params : {overlapping, kStemPool, kMnistPool}) {
      const auto get = [&params](const char* name) {
        return params.count(name) ? static_cast<int>(params.at(name)) : 0;
      };
      // 70 channels and 5 batch elements: two vectors along C, units along C and N.
      const std::uint32_t c = 70, n = 5;
      const std::vector<double> x(c * 16 * n, 1.5);
      std::vector<double> dy(c * 4 * n), want(x.size(), 0.0);
      for (std::uint32_t b = 0; b < n; ++b)
        for (std::uint32_t k = 0; k < 4; ++k)
          for (std::uint32_t ch = 0; ch < c; ++ch) {
            const double g = 1 + k + 4 * b + (ch % 3);
            dy[ch + c * (k + 4 * b)] = g;
            // A window's first place inside x: its origin, or the first past the padding.
            const int q = static_cast<int>(k % 2), p = static_cast<int>(k / 2);
            const auto w =
                static_cast<std::uint32_t>(std::max(0, q * get("stride_w") - get("pad_w")));
            const auto h =
                static_cast<std::uint32_t>(std::max(0, p * get("stride_h") - get("pad_h")));
            want[ch + c * (w + 4 * (h + 4 * b))] = g;
          }
      const KernelRequest forward{"max_pool", t, std::nullopt, {c, 4, 4, n}, params};
      const std::vector<double> y = run_with(forward, {{"x", x}}, "y");
      KernelRequest backward = forward;
      backward.kernel = "max_pool_bwd";
      EXPECT_EQ(run_with(backward, {{"x", x}, {"y", y}, {"dy", dy}}, "dx"), want)
          << info(t).name << " stride " << get("stride_h") << " pad " << get("pad_h");
    }
  }
  // Maxima at (w, h) = (1, 0) and (0, 1): row major picks the first row's.
  EXPECT_THAT(run_with({"max_pool_bwd", Dtype::kF32, std::nullopt, {1, 2, 2, 1}, {}},
                       {{"x", {0, 5, 5, 1}}, {"y", {5}}, {"dy", {7}}}, "dx"),
              ::testing::ElementsAre(0, 7, 0, 0));
}

// Through max_pool's own output, the gradient is conserved: every window hands its dy to one
// input, padding never takes it. Inputs of few values make ties common.
TEST(KernelLibrary, MaxPoolBwdOfMaxPoolsOutputHandsOnEveryWindowsGradient) {
  const std::pair<std::vector<std::uint32_t>, Params> cases[] = {{{64, 16, 16, 2}, kStemPool},
                                                                 {{32, 26, 26, 2}, kMnistPool}};
  for (const auto& [shape, params] : cases) {
    for (Dtype t : {Dtype::kF32, Dtype::kBf16}) {
      const KernelRequest forward{"max_pool", t, std::nullopt, shape, params};
      KernelPlan plan = plan_kernel(forward);
      plan.buffers[0].fill = {Fill::kIntegers, -2, 2};
      auto buffers = make_buffers(plan, 11);
      run_functional(plan, buffers, 3);
      const auto contents = [&](std::size_t b) {
        std::vector<double> v(plan.buffers[b].elements());
        for (std::size_t i = 0; i < v.size(); ++i) v[i] = read_element(buffers[b], t, i);
        return v;
      };
      // Small integers: the sums below are exact.
      std::vector<double> dy(plan.buffers[1].elements());
      for (std::size_t i = 0; i < dy.size(); ++i) dy[i] = 1 + static_cast<double>(i % 7);
      KernelRequest backward = forward;
      backward.kernel = "max_pool_bwd";
      const std::vector<double> dx =
          run_with(backward, {{"x", contents(0)}, {"y", contents(1)}, {"dy", dy}}, "dx");
      EXPECT_EQ(std::accumulate(dx.begin(), dx.end(), 0.0),
                std::accumulate(dy.begin(), dy.end(), 0.0))
          << info(t).name << " stride " << params.at("stride_h");
    }
  }
}

TEST(KernelLibrary, PoolingRefusesBadWindowsNamingTheParameter) {
  const auto error = [](const std::string& kernel, std::vector<std::uint32_t> shape,
                        const Params& params) {
    try {
      plan_kernel({kernel, Dtype::kF32, std::nullopt, std::move(shape), params});
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_EQ(error("max_pool", {8, 5, 5, 1}, {{"window_h", 8}}),
            "kernel 'max_pool': window_h = 8 is larger than the padded input (H + 2 pad_h = 5)");
  EXPECT_EQ(error("avg_pool_bwd", {8, 5, 5, 1}, {{"window_w", 9}, {"pad_w", 1}}),
            "kernel 'avg_pool_bwd': window_w = 9 is larger than the padded input (W + 2 pad_w = "
            "7)");
  EXPECT_EQ(error("avg_pool", {8, 5, 5, 1}, {{"stride_w", 0}}),
            "kernel 'avg_pool': stride_w = 0 (a whole number from 1 to 32767)");
  EXPECT_EQ(error("max_pool_bwd", {8, 5, 5, 1}, {{"pad_h", 2}}),
            "kernel 'max_pool_bwd': pad_h = 2 is not smaller than window_h = 2 (a window would "
            "hold padding only)");
  EXPECT_EQ(error("max_pool", {8, 5, 5, 1}, {{"window_w", 2.5}}),
            "kernel 'max_pool': window_w = 2.5 (a whole number from 1 to 32767)");
  EXPECT_EQ(error("max_pool", {8, 5, 5, 1}, {{"pad_w", -1}}),
            "kernel 'max_pool': pad_w = -1 (a whole number from 0 to 32767)");
  EXPECT_EQ(error("avg_pool", {64, 16, 16}, {}),
            "kernel 'avg_pool' takes x's shape [C, W, H, N] (4 dimensions), not 3");
  EXPECT_THAT(error("max_pool", {8, 5, 5, 1}, {{"window", 3}}),
              ::testing::HasSubstr("has no parameter 'window' (it takes window_h (default 2), "
                                   "window_w (default 2), stride_h (default 2)"));
  // The strides follow the windows unless given.
  EXPECT_THAT(error("max_pool", {8, 5, 5, 1}, {{"window_h", 3}, {"stride", 1}}),
              ::testing::HasSubstr("stride_h (default 3), stride_w (default 2)"));
  EXPECT_EQ(plan_kernel({"max_pool", Dtype::kF32, std::nullopt, {8, 11, 11, 1}, {{"window_h", 3}}})
                .buffers[1]
                .dims,
            (std::vector<std::uint32_t>{8, 5, 3, 1}));
}

// Per-channel reductions take their rows in blocks, a point each, then combine the blocks'
// partial results per channel: ResNet-50's largest activations plan enough blocks to keep every
// core of the largest chip busy, and cover every row once; a small input plans one block.
TEST(KernelLibrary, ColumnReductionsSplitLargeInputsIntoBlocksOfRows) {
  const Params dim1 = {{"dim", 1}};
  const std::pair<const char*, Params> kernels[] = {
      {"batch_norm", {}}, {"batch_norm_bwd", {}}, {"reduce_sum", dim1}, {"reduce_max", dim1}};
  for (const auto& [kernel, params] : kernels) {
    for (const std::vector<std::uint32_t>& shape :
         {std::vector<std::uint32_t>{64, 802816}, {2048, 12544}, {64, 5}, {3000, 40}}) {
      const KernelPlan plan = plan_kernel({kernel, Dtype::kBf16, std::nullopt, shape, params});
      const LaunchSpec& first = plan.launches.at(0);
      const std::int32_t blocks = first.index_space[1];
      const std::uint32_t rows = first.srf[0];
      const std::string where = std::string(kernel) + " " + ::testing::PrintToString(shape);
      EXPECT_EQ(first.binary.find("_wide") != std::string::npos, shape[0] > 512) << where;
      if (shape[1] > 10000) {
        EXPECT_GE(blocks, 64) << where;
      } else {
        EXPECT_EQ(blocks, 1) << where;
      }
      EXPECT_LT(std::uint64_t{rows} * (blocks - 1), shape[1]) << where;
      EXPECT_GE(std::uint64_t{rows} * blocks, shape[1]) << where;
      // Each scratch buffer holds a column per block; the second launch has a point per 64
      // channels.
      int scratch = 0;
      for (const BufferSpec& b : plan.buffers) {
        if (b.role != BufferSpec::Role::kScratch) continue;
        EXPECT_EQ(b.dims,
                  (std::vector<std::uint32_t>{shape[0], static_cast<std::uint32_t>(blocks)}))
            << where;
        ++scratch;
      }
      EXPECT_EQ(scratch, std::string(kernel).rfind("batch_norm", 0) == 0 ? 2 : 1) << where;
      EXPECT_EQ(plan.launches.at(1).index_space[0], static_cast<std::int32_t>((shape[0] + 63) / 64))
          << where;
    }
  }
}

// Values far from zero that differ little: in f32, the mean of the squares less the square of the
// mean would cancel to noise (its rounding, 1000^2 * 2^-24, is 18 times the variance of channel
// 0). The blocks' means and squared deviations from them, merged with the spread of the means,
// hold rstd and mean to their tolerances, over many blocks.
TEST(KernelLibrary, BatchNormStatisticsHoldForValuesFarFromZero) {
  const std::uint32_t c = 64, m = 20000;
  std::vector<double> x(std::size_t{c} * m);
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double wobble = static_cast<double>((i * 2654435761u) % 2001) / 1000.0 - 1.0;
    x[i] = 1000.0 + static_cast<double>(1 + i % c) * 0.1 * wobble;  // channel k: +-(k + 1) / 10
  }
  const KernelRequest r{"batch_norm", Dtype::kF32, std::nullopt, {c, m}, {{"eps", 1e-12}}};
  ASSERT_GE(plan_kernel(r).launches[0].index_space[1], 32);
  const std::vector<double> rstd = run_with(r, {{"x", x}}, "rstd");
  // A uniform wobble over +-s has the variance s^2 / 3.
  EXPECT_NEAR(rstd[0], std::sqrt(3.0) / 0.1, 0.01 * std::sqrt(3.0) / 0.1);
  EXPECT_NEAR(rstd[63], std::sqrt(3.0) / 6.4, 0.01 * std::sqrt(3.0) / 6.4);
  run_with(r, {{"x", x}}, "mean");
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
