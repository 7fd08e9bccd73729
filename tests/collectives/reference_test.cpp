// The host's reference for collectives, window by window: any window of a rank's expected output
// equals that part of the whole, for every algorithm and operation, so a check that never holds a
// whole buffer per rank compares against the same values; and the windows agree with sums and
// copies computed here independently.
#include "collectives/reference.h"

#include <gtest/gtest.h>

#include <stdexcept>

namespace podsim::collectives {
namespace {

constexpr int kRanks = 8;

Bytes slice(const Bytes& whole, std::uint64_t first, std::uint64_t count, std::size_t element) {
  return Bytes(whole.begin() + static_cast<std::ptrdiff_t>(first * element),
               whole.begin() + static_cast<std::ptrdiff_t>((first + count) * element));
}

TEST(Reference, AnyWindowIsThatPartOfTheWholeResult) {
  const Hierarchy boxes{2, 4, 3};  // two boxes of four ranks, three lanes
  int compared = 0;
  for (Algorithm algorithm : {Algorithm::kRing, Algorithm::kMesh, Algorithm::kHierarchical,
                              Algorithm::kHalvingDoubling, Algorithm::kTree}) {
    for (Op op : {Op::kAllReduce, Op::kReduceScatter, Op::kAllGather, Op::kBroadcast, Op::kReduce,
                  Op::kAllToAll, Op::kSendRecv}) {
      if (!supports(algorithm, op)) continue;
      Spec spec;
      spec.op = op;
      spec.algorithm = algorithm;
      spec.type = core::DataType::kBf16;  // rounds at every step, so the order shows
      spec.count = 96 * kRanks;
      spec.rings = algorithm == Algorithm::kRing && op == Op::kAllReduce ? 3 : 1;
      spec.pipeline = algorithm == Algorithm::kHierarchical ? 2 : 0;
      spec.across = Algorithm::kRing;
      spec.root = 5;
      const InputPattern inputs(spec, kRanks, 7);
      const std::size_t element = core::size_of(spec.type);
      for (int rank = 0; rank < kRanks; ++rank) {
        if (!has_result(spec, rank)) continue;
        const std::uint64_t elements = layout(spec, kRanks, rank).output_bytes / element;
        const Bytes whole = expected_output(spec, algorithm, inputs, rank, 0, elements, &boxes);
        ASSERT_EQ(whole.size(), elements * element);
        for (std::uint64_t first = 0; first < elements; first += 37) {
          const std::uint64_t count = std::min<std::uint64_t>(37, elements - first);
          EXPECT_EQ(expected_output(spec, algorithm, inputs, rank, first, count, &boxes),
                    slice(whole, first, count, element))
              << to_string(algorithm) << " " << to_string(op) << " rank " << rank << " from "
              << first;
          ++compared;
        }
      }
    }
  }
  EXPECT_GT(compared, 500);
}

TEST(Reference, RefusesAHierarchicalPhaseAcrossTheBoxesNotDecided) {
  Spec spec;
  spec.count = 8 * kRanks;
  const Hierarchy boxes{2, 4, 1};
  const InputPattern inputs(spec, kRanks, 3);
  EXPECT_THROW(expected_output(spec, Algorithm::kHierarchical, inputs, 0, 0, 8, &boxes),
               std::invalid_argument);
}

// Integer sums are exact in any order: every algorithm's all-reduce is the plain sum of the
// ranks' inputs, and an all-gather's block b is rank b's input.
TEST(Reference, WindowsMatchSumsAndCopiesMadeHere) {
  Spec spec;
  spec.type = core::DataType::kInt32;
  spec.count = 64 * kRanks;
  spec.across = Algorithm::kHalvingDoubling;
  const Hierarchy boxes{2, 4, 1};
  for (Algorithm algorithm : {Algorithm::kRing, Algorithm::kMesh, Algorithm::kHierarchical,
                              Algorithm::kHalvingDoubling, Algorithm::kTree}) {
    spec.op = Op::kAllReduce;
    const InputPattern inputs(spec, kRanks, 3);
    const Bytes got = expected_output(spec, algorithm, inputs, 0, 100, 200, &boxes);
    for (std::uint64_t i = 0; i < 200; ++i) {
      double sum = 0;
      for (int r = 0; r < kRanks; ++r)
        sum += core::element_value(spec.type, inputs.window(r, 100 + i, 1).data(), 0);
      ASSERT_EQ(core::element_value(spec.type, got.data(), i), sum) << to_string(algorithm) << i;
    }
  }
  spec.op = Op::kAllGather;
  const InputPattern inputs(spec, kRanks, 3);
  const std::uint64_t per = spec.count / kRanks;
  const Bytes got = expected_output(spec, Algorithm::kRing, inputs, 2, per - 5, 10);
  Bytes want = inputs.window(0, per - 5, 5);
  const Bytes next = inputs.window(1, 0, 5);
  want.insert(want.end(), next.begin(), next.end());
  EXPECT_EQ(got, want);
}

// Different ranks and seeds draw different inputs; the same ones draw the same.
TEST(Reference, InputsDependOnSeedAndRankOnly) {
  Spec spec;
  spec.count = 1000;
  const InputPattern a(spec, kRanks, 1), b(spec, kRanks, 1), c(spec, kRanks, 2);
  EXPECT_EQ(a.window(3, 10, 100), b.window(3, 10, 100));
  EXPECT_NE(a.window(3, 10, 100), c.window(3, 10, 100));
  EXPECT_NE(a.window(3, 10, 100), a.window(4, 10, 100));
}

}  // namespace
}  // namespace podsim::collectives
