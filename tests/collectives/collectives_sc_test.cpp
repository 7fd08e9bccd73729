// Ring and mesh collectives on the modeled hardware, in functional mode: every operation, data
// type, reduction, in place and out of place, on 2, 3, 5, 8 and 16 ranks, each result compared bit
// for bit with the host's reference in the documented reduction order.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <vector>

#include "collectives/communicator.h"
#include "collectives/reference.h"
#include "hw/system/system_config.h"
#include "hw/system/topology.h"

namespace podsim::collectives {
namespace {

struct Bench : sc_core::sc_module {
  SC_HAS_PROCESS(Bench);
  Bench(sc_core::sc_module_name name, const std::string& system, int ranks, Algorithm algo)
      : sc_module(name), algorithm(algo) {
    auto loaded = system::load_system(system, {});
    auto topology = system::build_topology(loaded.config);
    model = std::make_unique<system::SystemModel>("system", loaded.config, std::move(topology),
                                                  system::ModelOptions{});
    std::vector<int> chips;
    for (int i = 0; i < ranks; ++i) chips.push_back(i);
    comm.emplace(*model, chips);
    SC_THREAD(run);
  }

  // Every combination, one collective after another; counts chosen so segments are uneven
  // (all-reduce) and chunks split segments.
  void run() {
    const int n = comm->size();
    for (Op op : {Op::kAllReduce, Op::kReduceScatter, Op::kAllGather}) {
      if (algorithm == Algorithm::kHierarchical && op != Op::kAllReduce) continue;
      for (auto type : {core::DataType::kFp32, core::DataType::kBf16, core::DataType::kFp16,
                        core::DataType::kInt32}) {
        for (auto reduce : {core::ReduceOp::kSum, core::ReduceOp::kMin, core::ReduceOp::kMax}) {
          if (op == Op::kAllGather && reduce != core::ReduceOp::kSum) continue;
          for (bool in_place : {false, true}) {
            Spec spec;
            spec.op = op;
            spec.type = type;
            spec.reduce = reduce;
            spec.in_place = in_place;
            spec.algorithm = algorithm;
            // Hierarchical needs whole elements per box rank (8): 1016 = 8 x 127, and 127
            // splits unevenly over the 3 rails and the boxes.
            spec.count = op != Op::kAllReduce ? 96 * static_cast<std::uint64_t>(n)
                         : algorithm == Algorithm::kHierarchical ? 1016
                                                                 : 1000 + 7;
            spec.chunk_bytes = 64 * core::size_of(type);
            const auto inputs = load_inputs(*comm, spec, 11);
            auto handle = comm->start(spec);
            while (!handle->done()) wait(handle->finished);
            const std::string what =
                fmt::format("{} {} {} {} on {} ranks", to_string(op), core::to_string(type),
                            core::to_string(reduce), in_place ? "in place" : "out of place", n);
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

  Algorithm algorithm;
  std::unique_ptr<system::SystemModel> model;
  std::optional<Communicator> comm;
  int runs = 0;
};

void run_all(const std::string& system, int ranks, Algorithm algorithm = Algorithm::kRing) {
  Bench bench("bench", system, ranks, algorithm);
  sc_core::sc_start();
  EXPECT_EQ(bench.runs, algorithm == Algorithm::kHierarchical ? 12 * 2 : (12 + 12 + 4) * 2);
}

TEST(RingCollectives, TwoRanks) { run_all("hls2", 2); }
TEST(RingCollectives, ThreeRanks) { run_all("hls2", 3); }
TEST(RingCollectives, FiveRanks) { run_all("hls2", 5); }
TEST(RingCollectives, EightRanks) { run_all("hls2", 8); }
// Sixteen ranks span two boxes: the ring crosses the scale-out network twice.
TEST(RingCollectives, SixteenRanksAcrossBoxes) { run_all("hls2-pod128", 16); }

// The direct mesh within one box: every peer link at once, three lanes per peer on hls2 and
// one on hls1.
TEST(MeshCollectives, TwoRanks) { run_all("hls2", 2, Algorithm::kMesh); }
TEST(MeshCollectives, ThreeRanks) { run_all("hls2", 3, Algorithm::kMesh); }
TEST(MeshCollectives, FiveRanks) { run_all("hls2", 5, Algorithm::kMesh); }
TEST(MeshCollectives, EightRanks) { run_all("hls2", 8, Algorithm::kMesh); }
TEST(MeshCollectives, EightRanksOneLinkPerPeer) { run_all("hls1", 8, Algorithm::kMesh); }

// Hierarchical all-reduce: mesh reduce-scatter in each box, a ring per scale-out rail across the
// boxes, mesh all-gather; two and three boxes.
TEST(HierarchicalCollectives, TwoBoxes) { run_all("hls2-pod128", 16, Algorithm::kHierarchical); }
TEST(HierarchicalCollectives, ThreeBoxes) { run_all("hls2-pod128", 24, Algorithm::kHierarchical); }

}  // namespace
}  // namespace podsim::collectives
