// Convolutional network units (workloads/convnet.h) on a modeled Gaudi1 through Synapse and the
// driver, against their double-precision references: every output, input gradient and
// parameter gradient.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "synapse/session.h"
#include "tests/synapse/runtime_bench.h"
#include "workloads/convnet.h"

namespace podsim::synapse {
namespace {

using test::Bench;
using test::with_runtime;
using workloads::ConvUnitConfig;
using workloads::ConvUnitKind;

// f32 results are within a few roundings of the reference (about 4e-7 of the largest seen).
constexpr double kF32 = 2e-5;

// Each result within `tolerance` of its tensor's largest magnitude; `expected` results in all.
void expect_unit_matches_cpu(const ConvUnitConfig& config, double tolerance, std::size_t expected,
                             bool input_gradient = true, Mode mode = Mode::kLazy) {
  with_runtime([&](Bench& b) {
    Session session(b.rt, mode);
    workloads::ConvUnitStep step(session, config, true, input_gradient);
    step.step();
    const workloads::Tensors got = step.results();
    const workloads::Tensors want = step.unit().reference(step.input(), step.output_gradient());
    EXPECT_EQ(got.size(), expected);
    test::expect_results_match(got, want, tolerance);
  });
}

ConvUnitConfig config(ConvUnitKind kind, std::uint32_t channels, std::uint32_t size,
                      tpc::Dtype dtype = tpc::Dtype::kF32) {
  ConvUnitConfig c;
  c.kind = kind;
  c.batch = 2;
  c.channels = channels;
  c.height = c.width = size;
  c.dtype = dtype;
  return c;
}

// The MNIST net's block: 3x3 convolution with a bias, ReLU, 2x2 max pool over an odd map.
TEST(ConvNet, ConvBlockWithBiasAndPoolMatchesTheCpu) {
  ConvUnitConfig c = config(ConvUnitKind::kConvBlock, 1, 11);
  c.filters = 8;
  c.batch_norm = false;
  c.pool = 2;
  expect_unit_matches_cpu(c, kF32, 4);  // y, dx, filters, bias
}

// ResNet's stem in small: 7x7 stride 2 with padding, batch norm, 3x3 stride 2 padded pool.
TEST(ConvNet, StemBlockMatchesTheCpu) {
  ConvUnitConfig c = config(ConvUnitKind::kConvBlock, 3, 16);
  c.filters = 8;
  c.window = 7;
  c.stride = 2;
  c.pad = 3;
  c.pool = 3;
  c.pool_stride = 2;
  c.pool_pad = 1;
  expect_unit_matches_cpu(c, kF32, 5);  // y, dx, filters, gamma, beta
}

TEST(ConvNet, AFirstUnitComputesNoInputGradient) {
  ConvUnitConfig c = config(ConvUnitKind::kConvBlock, 3, 8);
  c.filters = 4;
  expect_unit_matches_cpu(c, kF32, 4, false);  // y, filters, gamma, beta
}

TEST(ConvNet, BottleneckWithProjectionMatchesTheCpu) {
  ConvUnitConfig c = config(ConvUnitKind::kBottleneck, 8, 8);
  c.mid = 4;
  c.filters = 16;
  c.stride = 2;
  expect_unit_matches_cpu(c, kF32, 2 + 4 * 3);  // y, dx, four convolutions and norms
}

TEST(ConvNet, BottleneckWithIdentityMatchesTheCpuInEagerMode) {
  ConvUnitConfig c = config(ConvUnitKind::kBottleneck, 16, 6);
  c.mid = 4;
  c.filters = 16;
  expect_unit_matches_cpu(c, kF32, 2 + 3 * 3, true, Mode::kEager);
}

TEST(ConvNet, BottleneckMatchesTheCpuInBf16) {
  ConvUnitConfig c = config(ConvUnitKind::kBottleneck, 8, 8, tpc::Dtype::kBf16);
  c.mid = 8;
  c.filters = 16;
  c.stride = 2;
  expect_unit_matches_cpu(c, 6e-2, 2 + 4 * 3);
}

// ResNet's head: a global average pool, one dense layer, the mean cross-entropy.
TEST(ConvNet, ClassifierWithGlobalPoolMatchesTheCpu) {
  ConvUnitConfig c = config(ConvUnitKind::kClassifier, 32, 4);
  c.global_pool = true;
  c.classes = 10;
  expect_unit_matches_cpu(c, kF32, 4);  // losses, dx, weights, bias
}

// The MNIST net's head: flattened maps, dense 8 with ReLU, dense 10.
TEST(ConvNet, FlattenedClassifierMatchesTheCpu) {
  ConvUnitConfig c = config(ConvUnitKind::kClassifier, 8, 5);
  c.hidden = {8};
  c.classes = 10;
  expect_unit_matches_cpu(c, kF32, 6);
}

}  // namespace
}  // namespace podsim::synapse
