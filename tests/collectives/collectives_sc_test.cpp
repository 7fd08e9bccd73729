// Ring and mesh collectives on the modeled hardware, in functional mode: every operation, data
// type, reduction, in place and out of place, on 2, 3, 5, 8 and 16 ranks, each result compared bit
// for bit with the host's reference in the documented reduction order.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <vector>

#include "collectives/communicator.h"
#include "collectives/reference.h"
#include "collectives/system_file.h"
#include "hw/system/system_config.h"
#include "hw/system/topology.h"

namespace podsim::collectives {
namespace {

struct Bench : sc_core::sc_module {
  SC_HAS_PROCESS(Bench);
  Bench(sc_core::sc_module_name name, const std::string& system, int ranks, const Spec& shape,
        system::ChipModel chip_model)
      : sc_module(name), base(shape), algorithm(shape.algorithm) {
    auto loaded = collectives::load_system_file(system, {});
    auto topology = system::build_topology(loaded.config);
    system::ModelOptions options;
    options.chips = chip_model;
    model = std::make_unique<system::SystemModel>("system", loaded.config, std::move(topology),
                                                  options);
    std::vector<int> chips;
    for (int i = 0; i < ranks; ++i) chips.push_back(i);
    comm.emplace(*model, chips);
    SC_THREAD(run);
  }

  // Every combination, one collective after another; counts chosen so segments are uneven
  // (all-reduce) and chunks split segments.
  void run() {
    const int n = comm->size();
    for (Op op : kOps) {
      if (!supports(algorithm, op)) continue;
      for (auto type : {core::DataType::kFp32, core::DataType::kBf16, core::DataType::kFp16,
                        core::DataType::kInt32}) {
        for (auto reduce : {core::ReduceOp::kSum, core::ReduceOp::kMin, core::ReduceOp::kMax}) {
          if (!reduces(op) && reduce != core::ReduceOp::kSum) continue;
          for (bool in_place : {false, true}) {
            Spec spec = base;
            spec.op = op;
            spec.type = type;
            spec.reduce = reduce;
            spec.in_place = in_place;
            spec.algorithm = algorithm;
            // Hierarchical needs whole elements per box rank (at most 8 on hls2): 127 each,
            // which splits unevenly over the 3 rails and the boxes.
            const auto per_box = static_cast<std::uint64_t>(std::min(n, 8));
            spec.count = splits_evenly(op) ? 96 * static_cast<std::uint64_t>(n)
                         : algorithm == Algorithm::kHierarchical ? 127 * per_box
                                                                 : 1000 + 7;
            // Several rings run all-reduce, reduce-scatter and all-gather only.
            if (op != Op::kAllReduce && op != Op::kReduceScatter && op != Op::kAllGather) {
              spec.rings = 1;
            }
            spec.root = n / 2;  // neither the first nor the last rank where there are three
            spec.chunk_bytes = 64 * core::size_of(type);
            const auto inputs = load_inputs(*comm, spec, 11);
            auto handle = comm->start(spec);
            handle->wait_done();
            const std::string what =
                fmt::format("{} {} {} {} {} on {} ranks", to_string(algorithm), to_string(op),
                            core::to_string(type), core::to_string(reduce),
                            in_place ? "in place" : "out of place", n);
            EXPECT_TRUE(handle->ok) << what;
            EXPECT_EQ(check_outputs(*comm, spec, handle->algorithm, inputs), 0u) << what;
            EXPECT_EQ(handle->algorithm, algorithm) << what;
            EXPECT_GT(handle->end_ps, handle->start_ps) << what;
            ++runs;
          }
        }
      }
    }
  }

  Spec base;
  Algorithm algorithm;
  std::unique_ptr<system::SystemModel> model;
  std::optional<Communicator> comm;
  int runs = 0;
};

// Kernels the ranks' TPCs ran.
std::uint64_t tpc_kernels(system::SystemModel& model, int ranks) {
  std::uint64_t kernels = 0;
  for (int r = 0; r < ranks; ++r) {
    for (int t = 0; t < model.chip(r).tpc_cores(); ++t)
      kernels += model.chip(r).tpc(t).stats().kernels.value();
  }
  return kernels;
}

// `shape`: the algorithm and its parameters (rings, pipeline depth, where reductions run).
void run_all(const std::string& system, int ranks, const Spec& shape,
             system::ChipModel chips = system::ChipModel::kDetailed) {
  const Algorithm algorithm = shape.algorithm;
  Bench bench("bench", system, ranks, shape, chips);
  sc_core::sc_start();
  int expected = 0;  // 4 types x 3 reductions (or sum alone) x in place or not, per operation
  for (Op op : kOps) {
    if (supports(algorithm, op)) expected += (reduces(op) ? 12 : 4) * 2;
  }
  EXPECT_EQ(bench.runs, expected);
  // Reductions run on the TPCs exactly when asked to.
  const std::uint64_t kernels = tpc_kernels(*bench.model, ranks);
  if (shape.reduce_engine == Spec::ReduceEngine::kTpc) {
    EXPECT_GT(kernels, 0u);
  } else {
    EXPECT_EQ(kernels, 0u);
  }
}

void run_all(const std::string& system, int ranks, Algorithm algorithm = Algorithm::kRing) {
  Spec shape;
  shape.algorithm = algorithm;
  run_all(system, ranks, shape);
}

TEST(RingCollectives, TwoRanks) { run_all("hls2", 2); }
TEST(RingCollectives, ThreeRanks) { run_all("hls2", 3); }
TEST(RingCollectives, FiveRanks) { run_all("hls2", 5); }
TEST(RingCollectives, EightRanks) { run_all("hls2", 8); }
// Sixteen ranks span two boxes: the ring crosses the scale-out network twice.
TEST(RingCollectives, SixteenRanksAcrossBoxes) { run_all("hls2-pod128", 16); }

// Several rings, every second one backwards, each on its slice of the vector (all-reduce) or of
// every rank's part (reduce-scatter, all-gather); the other operations run on one ring whatever
// the count.
Spec rings(int count) {
  Spec shape;
  shape.algorithm = Algorithm::kRing;
  shape.rings = count;
  return shape;
}
TEST(MultiRingCollectives, TwoRanksTwoRings) { run_all("hls2", 2, rings(2)); }
TEST(MultiRingCollectives, FiveRanksSixRings) { run_all("hls2", 5, rings(6)); }
// A part of 96 elements over 5 rings: uneven shares.
TEST(MultiRingCollectives, ThreeRanksFiveRings) { run_all("hls2", 3, rings(5)); }
TEST(MultiRingCollectives, SixteenRanksThreeRings) { run_all("hls2-pod128", 16, rings(3)); }

// The direct mesh within one box: every peer link at once, three lanes per peer on hls2 and
// one on hls1.
TEST(MeshCollectives, TwoRanks) { run_all("hls2", 2, Algorithm::kMesh); }
TEST(MeshCollectives, ThreeRanks) { run_all("hls2", 3, Algorithm::kMesh); }
TEST(MeshCollectives, FiveRanks) { run_all("hls2", 5, Algorithm::kMesh); }
TEST(MeshCollectives, EightRanks) { run_all("hls2", 8, Algorithm::kMesh); }
TEST(MeshCollectives, EightRanksOneLinkPerPeer) { run_all("hls1", 8, Algorithm::kMesh); }
// Across two boxes the peers outside the box are reached over the scale-out rails.
TEST(MeshCollectives, SixteenRanksAcrossBoxes) { run_all("hls2-pod128", 16, Algorithm::kMesh); }

// Hierarchical all-reduce: mesh reduce-scatter in each box, a ring per scale-out rail across the
// boxes, mesh all-gather; two and three boxes.
TEST(HierarchicalCollectives, TwoBoxes) { run_all("hls2-pod128", 16, Algorithm::kHierarchical); }
TEST(HierarchicalCollectives, ThreeBoxes) { run_all("hls2-pod128", 24, Algorithm::kHierarchical); }
// Within one box the phase across boxes has nothing to do.
TEST(HierarchicalCollectives, TwoRanks) { run_all("hls2", 2, Algorithm::kHierarchical); }
TEST(HierarchicalCollectives, ThreeRanks) { run_all("hls2", 3, Algorithm::kHierarchical); }
TEST(HierarchicalCollectives, FiveRanks) { run_all("hls2", 5, Algorithm::kHierarchical); }
TEST(HierarchicalCollectives, EightRanks) { run_all("hls2", 8, Algorithm::kHierarchical); }

// Pipelined: the vector in pieces whose phases overlap.
Spec pipelined(int depth) {
  Spec shape;
  shape.algorithm = Algorithm::kHierarchical;
  shape.pipeline = depth;
  return shape;
}
TEST(HierarchicalCollectives, TwoBoxesPipelinedFourDeep) {
  run_all("hls2-pod128", 16, pipelined(4));
}
TEST(HierarchicalCollectives, ThreeBoxesPipelinedThreeDeep) {
  run_all("hls2-pod128", 24, pipelined(3));
}
// Halving-doubling across the boxes: three boxes fold one in first, four do not.
Spec halving_doubling_across(int depth) {
  Spec shape = pipelined(depth);
  shape.across = Algorithm::kHalvingDoubling;
  return shape;
}
TEST(HierarchicalCollectives, ThreeBoxesHalvingDoublingAcross) {
  run_all("hls2-pod128", 24, halving_doubling_across(1));
}
TEST(HierarchicalCollectives, FourBoxesHalvingDoublingAcrossPipelined) {
  run_all("hls2-pod128", 32, halving_doubling_across(2));
}

// Recursive halving-doubling (all-reduce): 3 and 5 ranks fold their extra ranks in first.
TEST(HalvingDoublingCollectives, TwoRanks) { run_all("hls2", 2, Algorithm::kHalvingDoubling); }
TEST(HalvingDoublingCollectives, ThreeRanks) { run_all("hls2", 3, Algorithm::kHalvingDoubling); }
TEST(HalvingDoublingCollectives, FiveRanks) { run_all("hls2", 5, Algorithm::kHalvingDoubling); }
TEST(HalvingDoublingCollectives, EightRanks) { run_all("hls2", 8, Algorithm::kHalvingDoubling); }
TEST(HalvingDoublingCollectives, SixteenRanksAcrossBoxes) {
  run_all("hls2-pod128", 16, Algorithm::kHalvingDoubling);
}

// The double binary tree (all-reduce, broadcast and reduce).
TEST(TreeCollectives, TwoRanks) { run_all("hls2", 2, Algorithm::kTree); }
TEST(TreeCollectives, ThreeRanks) { run_all("hls2", 3, Algorithm::kTree); }
TEST(TreeCollectives, FiveRanks) { run_all("hls2", 5, Algorithm::kTree); }
TEST(TreeCollectives, EightRanks) { run_all("hls2", 8, Algorithm::kTree); }
TEST(TreeCollectives, EightRanksOneLinkPerPeer) { run_all("hls1", 8, Algorithm::kTree); }
TEST(TreeCollectives, SixteenRanksAcrossBoxes) { run_all("hls2-pod128", 16, Algorithm::kTree); }

// Coarse chips (collectives/direct_launcher.h): the same programs posted straight to the NICs,
// jobs reduced in memory by the engines' rate model; the same results bit for bit.
Spec coarse_shape(Algorithm algorithm, int rings = 1) {
  Spec shape;
  shape.algorithm = algorithm;
  shape.rings = rings;
  return shape;
}
constexpr auto kCoarse = system::ChipModel::kCoarse;
TEST(CoarseChips, RingFiveRanks) { run_all("hls2", 5, coarse_shape(Algorithm::kRing), kCoarse); }
TEST(CoarseChips, TwoRingsEightRanks) {
  run_all("hls2", 8, coarse_shape(Algorithm::kRing, 2), kCoarse);
}
TEST(CoarseChips, MeshEightRanks) { run_all("hls2", 8, coarse_shape(Algorithm::kMesh), kCoarse); }
TEST(CoarseChips, HalvingDoublingFiveRanks) {
  run_all("hls2", 5, coarse_shape(Algorithm::kHalvingDoubling), kCoarse);
}
TEST(CoarseChips, TreeSixteenRanksAcrossBoxes) {
  run_all("hls2-pod128", 16, coarse_shape(Algorithm::kTree), kCoarse);
}
TEST(CoarseChips, HierarchicalThreeBoxesPipelined) {
  run_all("hls2-pod128", 24, pipelined(3), kCoarse);
}

// Reductions as TPC kernels (the kernel library's add, min and max) instead of DMA reductions:
// the same results bit for bit.
Spec on_tpcs(Algorithm algorithm) {
  Spec shape;
  shape.algorithm = algorithm;
  shape.reduce_engine = Spec::ReduceEngine::kTpc;
  return shape;
}
TEST(TpcReductions, RingFiveRanks) { run_all("hls2", 5, on_tpcs(Algorithm::kRing)); }
TEST(TpcReductions, MeshEightRanks) { run_all("hls2", 8, on_tpcs(Algorithm::kMesh)); }
TEST(TpcReductions, TreeEightRanksOnGaudi1) { run_all("hls1", 8, on_tpcs(Algorithm::kTree)); }
TEST(TpcReductions, HalvingDoublingThreeRanks) {
  run_all("hls2", 3, on_tpcs(Algorithm::kHalvingDoubling));
}
TEST(TpcReductions, HierarchicalTwoBoxes) {
  run_all("hls2-pod128", 16, on_tpcs(Algorithm::kHierarchical));
}

}  // namespace
}  // namespace podsim::collectives
