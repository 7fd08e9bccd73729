// What `auto` resolves to on the presets, from the tuning table (docs/collectives.md, "How auto
// picks").
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "collectives/communicator.h"
#include "collectives/system_file.h"
#include "hw/system/system_config.h"
#include "hw/system/topology.h"

namespace podsim::collectives {
namespace {

struct Picker {
  std::unique_ptr<system::SystemModel> model;
  std::unique_ptr<Communicator> comm;

  Picker(const std::string& system, int ranks) {
    auto loaded = collectives::load_system_file(system, {});
    auto topology = system::build_topology(loaded.config);
    model = std::make_unique<system::SystemModel>("system", loaded.config, std::move(topology),
                                                  system::ModelOptions{1, false});
    std::vector<int> chips;
    for (int i = 0; i < ranks; ++i) chips.push_back(i);
    comm = std::make_unique<Communicator>(*model, chips, loaded.tuning);
  }
  std::string pick(Op op, std::uint64_t bytes, int pipeline = 1) const {
    Spec spec;
    spec.op = op;
    spec.count = bytes / 4;
    spec.pipeline = pipeline;
    return to_string(comm->resolve(spec));
  }
  // The phase across the boxes a hierarchical all-reduce of `bytes` runs, asked as `across`.
  std::string across(std::uint64_t bytes, Algorithm algorithm = Algorithm::kAuto,
                     Algorithm across = Algorithm::kAuto) const {
    Spec spec;
    spec.count = bytes / 4;
    spec.algorithm = algorithm;
    spec.across = across;
    return to_string(comm->with_across(spec).across);
  }
};

constexpr std::uint64_t kKiB = 1024, kMiB = 1024 * kKiB;

TEST(AutoAlgorithm, InAnHls2Box) {
  const Picker p("hls2", 8);
  EXPECT_EQ(p.pick(Op::kAllReduce, 4 * kKiB), "tree");
  EXPECT_EQ(p.pick(Op::kAllReduce, 64 * kKiB), "mesh");
  EXPECT_EQ(p.pick(Op::kAllReduce, 1 * kMiB), "mesh");
  EXPECT_EQ(p.pick(Op::kBroadcast, 4 * kKiB), "mesh");
  EXPECT_EQ(p.pick(Op::kReduce, 64 * kKiB), "tree");
  EXPECT_EQ(p.pick(Op::kReduce, 256 * kKiB), "mesh");
  EXPECT_EQ(p.pick(Op::kSendRecv, 1 * kMiB), "ring");
  EXPECT_EQ(p.pick(Op::kAllToAll, 1 * kMiB), "mesh");
}

TEST(AutoAlgorithm, Hls1CarriesItsOwnTable) {
  const Picker p("hls1", 8);
  EXPECT_EQ(p.pick(Op::kAllReduce, 4 * kKiB), "mesh");
}

TEST(AutoAlgorithm, AcrossBoxes) {
  const Picker p("hls2-pod128", 32);
  EXPECT_EQ(p.pick(Op::kAllReduce, 64 * kKiB), "halving_doubling");
  EXPECT_EQ(p.pick(Op::kAllReduce, 1 * kMiB), "hierarchical");
  EXPECT_EQ(p.pick(Op::kReduce, 64 * kKiB), "tree");
  EXPECT_EQ(p.pick(Op::kReduce, 1 * kMiB), "mesh");
  EXPECT_EQ(p.pick(Op::kReduceScatter, 1 * kMiB), "mesh");
  // A pipeline depth only the hierarchical algorithm takes: the rules that cannot run are
  // passed over.
  EXPECT_EQ(p.pick(Op::kAllReduce, 64 * kKiB, 4), "hierarchical");
}

TEST(AutoAlgorithm, PhaseAcrossTheBoxesByBoxesAndSize) {
  // One model per process (SystemC names): 4 boxes as 32 ranks of hls2-pod128.
  const Picker four("hls2-pod128", 32);
  EXPECT_EQ(four.across(1 * kMiB), "halving_doubling");
  EXPECT_EQ(four.across(8 * kMiB), "ring");
  EXPECT_EQ(four.across(1024 * kMiB), "ring");
  // An explicit hierarchical request below the hierarchical rules' sizes takes the first
  // hierarchical rule's phase; an explicit phase is kept.
  EXPECT_EQ(four.across(64 * kKiB, Algorithm::kHierarchical), "halving_doubling");
  EXPECT_EQ(four.across(1 * kMiB, Algorithm::kAuto, Algorithm::kRing), "ring");
  EXPECT_EQ(four.across(1024 * kMiB, Algorithm::kHierarchical, Algorithm::kHalvingDoubling),
            "halving_doubling");
}

TEST(AutoAlgorithm, PhaseAcrossSixteenBoxes) {
  const Picker sixteen("hls2-pod128", 128);
  EXPECT_EQ(sixteen.across(8 * kMiB), "halving_doubling");
  EXPECT_EQ(sixteen.across(16 * kMiB), "ring");
}

TEST(AutoAlgorithm, RanksThatAreNotWholeBoxesSkipTheHierarchicalRule) {
  const Picker p("hls2-pod128", 12);
  EXPECT_EQ(p.pick(Op::kAllReduce, 1 * kMiB), "mesh");
}

}  // namespace
}  // namespace podsim::collectives
