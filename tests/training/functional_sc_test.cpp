// Data-parallel training for real: 4 replicas of the MNIST net, each on its chip of an hls1 box
// (or two boxes) with batch b, their gradients averaged by the collectives over the box's links
// or by the hosts, against one chip of the first box training on the whole batch 4b in the same
// simulation (and updating its own weights on the chip).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "collectives/system_file.h"
#include "hw/system/system_model.h"
#include "training/functional.h"

namespace podsim::training {
namespace {

struct Runs {
  FunctionalResult parallel, single, alone;
};

// Where the replicas run: an hls1 box (chips 0-3), or two boxes' hosts (chips 0, 1 of the
// first and 8, 9 of the second).
struct Where {
  std::vector<std::string> overrides;
  std::vector<int> chips = {0, 1, 2, 3};
};
const Where kOneBox;
const Where kTwoHosts{{"boxes=2", "network.kind=leaf-spine", "network.leaf_down_ports=16"},
                      {0, 1, 8, 9}};

// `options` on the placement's chips; on chip 4 one replica of 4x the batch; on chip 5 one
// replica of the batch alone (what a replica would do without the others' gradients); both
// single chips on their own (hccl's one-replica path: no collective, the update on the chip).
Runs train_all(FunctionalOptions options, const Where& on = kOneBox) {
  const auto loaded = collectives::load_system_file("hls1", on.overrides);
  system::SystemModel model("system", loaded.config, system::build_topology(loaded.config),
                            system::ModelOptions{1, true});
  FunctionalOptions one = options, alone = options;
  one.replicas = alone.replicas = 1;
  one.strategy = alone.strategy = Strategy::kHccl;
  one.host_staged = alone.host_staged = false;
  one.batch = options.batch * 4;
  FunctionalRun parallel(model, options, on.chips);
  FunctionalRun single(model, one, {4});
  FunctionalRun lone(model, alone, {5});
  sc_core::sc_start();
  return {parallel.result(), single.result(), lone.result()};
}

// How far two runs' updates (final parameters less the initial ones) are apart, against the
// largest of the second's.
double update_difference(const std::vector<double>& a, const std::vector<double>& b,
                         const std::vector<double>& initial) {
  double worst = 0, scale = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    worst = std::max(worst, std::abs(a[i] - b[i]));
    scale = std::max(scale, std::abs(b[i] - initial[i]));
  }
  return worst / scale;
}

// `tolerance`: of the single chip's update. Measured: bf16 2.7e-2 (the weights' rounding), f32
// 8e-7; a replica alone ends 4 to 6 times its update away.
void expect_matches_one_chip(Strategy strategy, tpc::Dtype dtype, double tolerance,
                             bool host_staged = false, const Where& on = kOneBox) {
  FunctionalOptions o;
  o.strategy = strategy;
  o.host_staged = host_staged;
  o.dtype = dtype;
  o.batch = 4;
  o.steps = 3;
  const Runs r = train_all(o, on);
  ASSERT_EQ(r.parallel.parameters.size(), 4u);
  const std::vector<double>& single = r.single.parameters.front();
  ASSERT_EQ(single.size(), 10994u);
  // All runs start from the same values (the same seed; ranks 1-3 from rank 0's broadcast).
  ASSERT_EQ(r.parallel.initial, r.single.initial);
  for (const auto& replica : r.parallel.parameters) {
    // Identical replicas: the broadcast gave them one start and the all-reduce one gradient.
    EXPECT_EQ(replica, r.parallel.parameters.front());
    EXPECT_LT(update_difference(replica, single, r.single.initial), tolerance);
  }
  // A replica training alone on its slice ends far from both: the check above can fail.
  EXPECT_GT(update_difference(r.alone.parameters.front(), single, r.single.initial), 0.5);
  EXPECT_EQ(r.parallel.losses.size(), 3u);
  for (std::size_t s = 0; s < r.parallel.losses.size(); ++s)
    EXPECT_NEAR(r.parallel.losses[s], r.single.losses[s], 2e-2 * r.single.losses[s]) << s;
  // The net's 22 KiB of gradients fit one buffer; ipu-multiworker streams its 6 tensors apart.
  EXPECT_EQ(r.parallel.all_reduces, strategy == Strategy::kIpuMultiworker ? 6 : 1);
  EXPECT_EQ(r.parallel.broadcasts, strategy == Strategy::kIpuMultiworker ? 6 : 1);
}

TEST(FunctionalTraining, HcclReplicasEndWhereOneChipWithTheirWholeBatchEnds) {
  expect_matches_one_chip(Strategy::kHccl, tpc::Dtype::kBf16, 0.1);
}

TEST(FunctionalTraining, HorovodReplicasEndWhereOneChipWithTheirWholeBatchEnds) {
  expect_matches_one_chip(Strategy::kHorovod, tpc::Dtype::kBf16, 0.1);
}

// Host-staged: every buffer over PCIe to the host, summed by its CPU, and back.
TEST(FunctionalTraining, HostStagedHorovodReplicasEndWhereOneChipWithTheirWholeBatchEnds) {
  expect_matches_one_chip(Strategy::kHorovod, tpc::Dtype::kBf16, 0.1, true);
}

// The host averages and applies SGD with momentum to its fp32 master weights; the chips only
// compute gradients.
TEST(FunctionalTraining, IpuMultiworkerReplicasEndWhereOneChipWithTheirWholeBatchEnds) {
  expect_matches_one_chip(Strategy::kIpuMultiworker, tpc::Dtype::kBf16, 0.1);
}

// On two hosts, each sums its own replicas' copies and the hosts all-reduce their sums over
// their front-end network; without that the two hosts' replicas would end apart.
TEST(FunctionalTraining, HostStagedHorovodReplicasOnTwoHostsEndWhereOneChipEnds) {
  expect_matches_one_chip(Strategy::kHorovod, tpc::Dtype::kBf16, 0.1, true, kTwoHosts);
}

// The step-0 broadcast also crosses the hosts' network: rank 0's weights reach the second host's
// replicas, which start from other values.
TEST(FunctionalTraining, IpuMultiworkerReplicasOnTwoHostsEndWhereOneChipEnds) {
  expect_matches_one_chip(Strategy::kIpuMultiworker, tpc::Dtype::kBf16, 0.1, false, kTwoHosts);
}

TEST(FunctionalTraining, InF32TheHostsUpdateMatchesTheChipsToItsRounding) {
  expect_matches_one_chip(Strategy::kIpuMultiworker, tpc::Dtype::kF32, 1e-4);
}

TEST(FunctionalTraining, InF32TheReplicasMatchOneChipToItsRounding) {
  expect_matches_one_chip(Strategy::kHccl, tpc::Dtype::kF32, 1e-4);
}

// Small buckets split the gradients into several all-reduces, with the same result. (The tests
// above would see a broadcast that moved nothing: ranks other than 0 start from other values.)
TEST(FunctionalTraining, SmallBucketsSplitTheGradientsIntoSeveralAllReduces) {
  FunctionalOptions o;
  o.batch = 4;
  o.steps = 3;
  o.broadcast = false;
  o.bucket_bytes = 4096;
  const Runs r = train_all(o);
  EXPECT_EQ(r.parallel.broadcasts, 0);
  EXPECT_GT(r.parallel.all_reduces, 2);
  // Without a broadcast every replica starts from the same seed (ranks start apart only when a
  // broadcast is to reconcile them).
  EXPECT_LT(update_difference(r.parallel.parameters[3], r.single.parameters[0], r.single.initial),
            0.1);
}

// Through several hosts the sum needs their network: without one the run is refused, naming the
// key.
TEST(FunctionalTraining, ThroughHostsWithoutTheirNetworkIsRefused) {
  auto overrides = kTwoHosts.overrides;
  overrides.push_back("host.network.enabled=false");
  auto loaded = collectives::load_system_file("hls1", overrides);
  system::SystemModel model("system", loaded.config, system::build_topology(loaded.config),
                            system::ModelOptions{1, true});
  FunctionalOptions o;
  o.strategy = Strategy::kIpuMultiworker;
  o.replicas = 2;
  try {
    FunctionalRun run(model, o, {0, 8});
    ADD_FAILURE() << "not refused";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("host.network.enabled"));
  }
}

}  // namespace
}  // namespace podsim::training
