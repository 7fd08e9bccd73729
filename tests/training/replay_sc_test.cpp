// Replaying one replica's compute profile for every worker is exact: the chips of a box,
// measuring the same step at the same time through their own drivers and runtimes (sharing the
// host's PCIe tree and memory), take what the chips of one box alone take.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <systemc>

#include "collectives/system_file.h"
#include "core/kernel.h"
#include "hw/system/system_model.h"
#include "hw/system/topology.h"
#include "sims/chip_software.h"
#include "tests/training/small_gpt.h"
#include "training/profile.h"

namespace podsim::training {
namespace {

// Within 2%, or one HBM refresh: the second box's launches are lined up with the first box's
// second round, so they start at other moments than the first box's did alone (other phases of
// the clocks, of refresh, of the host's queues); on launches of tens of microseconds that moves
// them by up to 1%, and an all-bank refresh (tRFC, 350 ns on Gaudi2) falling inside a 14 us
// launch or not, with the requests it holds up, by 450 ns.
// Which chip of a box wins the host's queues first may differ between the rounds, so the
// chips' times are compared in order of length: the box takes the same set of times.
void expect_same(const std::vector<StepProfile>& got, const std::vector<StepProfile>& want) {
  ASSERT_EQ(got.size(), want.size());
  constexpr double kRefreshPs = 600'000;
  const auto sorted = [](const std::vector<StepProfile>& box, std::size_t shape, int pass) {
    std::vector<core::TimePs> times;
    for (const StepProfile& p : box) {
      const LayerTiming& t = p.shapes.at(shape);
      times.push_back(pass == 0 ? t.forward_ps : pass == 1 ? t.backward_ps : t.optimizer_ps);
    }
    std::sort(times.begin(), times.end());
    return times;
  };
  for (std::size_t s = 0; s < want.front().shapes.size(); ++s) {
    for (int pass = 0; pass < 3; ++pass) {
      const auto a = sorted(got, s, pass), b = sorted(want, s, pass);
      for (std::size_t i = 0; i < a.size(); ++i) {
        EXPECT_NEAR(static_cast<double>(a[i]), static_cast<double>(b[i]),
                    std::max(2e-2 * static_cast<double>(b[i]), kRefreshPs))
            << (pass == 0   ? "forward"
                : pass == 1 ? "backward"
                            : "optimizer")
            << " of shape " << s << ", the " << i << "th shortest";
      }
    }
  }
}

// One box's replicas measured alone, then a second box's while the first measures again: the
// second box's chips take what the first box's took alone, so one box's profile stands for
// every box's.
TEST(Replay, EveryBoxTakesWhatOneBoxAloneTakes) {
  const auto system =
      collectives::load_system_file("hls2-pod128", {"boxes=2", "network.leaf_down_ports=16"});
  system::SystemModel sim("system", system.config, system::build_topology(system.config),
                          system::ModelOptions{1, false});
  const Model model = test::small_gpt();
  constexpr int kPerBox = 8;
  std::vector<int> chips(2 * kPerBox);
  std::iota(chips.begin(), chips.end(), 0);
  std::vector<StepProfile> alone(kPerBox), together(chips.size());
  ReplicaBarrier box_alone(kPerBox), boxes(2 * kPerBox);
  int alone_left = kPerBox;
  sc_core::sc_event alone_done;
  const std::string failure =
      sims::run_with_runtimes(sim, sims::served_device(system, "test", "hls2-pod128"), chips,
                              [&](synapse::Runtime& runtime, int chip) {
                                if (chip < kPerBox) {
                                  alone[static_cast<std::size_t>(chip)] =
                                      measure_profile(runtime, model, "gaudi2", {}, &box_alone);
                                  if (--alone_left == 0) alone_done.notify(sc_core::SC_ZERO_TIME);
                                }
                                if (alone_left > 0) sc_core::wait(alone_done);
                                together[static_cast<std::size_t>(chip)] =
                                    measure_profile(runtime, model, "gaudi2", {}, &boxes);
                              });
  ASSERT_EQ(failure, "");
  expect_same({together.begin() + kPerBox, together.end()}, alone);
  // The replicas of one box do slow each other down (they share its host): the profile keeps
  // the slowest.
  const StepProfile box = slowest_replica(alone);
  EXPECT_EQ(box.replicas, kPerBox);
  for (const StepProfile& p : alone) {
    for (std::size_t s = 0; s < p.shapes.size(); ++s) {
      EXPECT_LE(p.shapes[s].backward_ps, box.shapes[s].backward_ps);
    }
  }
}

}  // namespace
}  // namespace podsim::training
