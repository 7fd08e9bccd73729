// Collectives in flight at once: on disjoint hardware they do not slow each other; on the same
// ports they share the links' bandwidth. Timing only, 64 MiB all-reduces.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <vector>

#include "collectives/communicator.h"
#include "collectives/system_file.h"
#include "hw/system/system_config.h"
#include "hw/system/topology.h"

namespace podsim::collectives {
namespace {

struct Driver : sc_core::sc_module {
  SC_HAS_PROCESS(Driver);
  Driver(sc_core::sc_module_name name, std::function<void(Driver&)> body)
      : sc_module(name), body_(std::move(body)) {
    SC_THREAD(run);
  }
  void run() { body_(*this); }
  // Starts every spec on its communicator at once and waits for all; returns their times.
  std::vector<double> together(std::vector<std::pair<Communicator*, Spec>> runs) {
    std::vector<std::shared_ptr<Handle>> handles;
    for (auto& [comm, spec] : runs) handles.push_back(comm->start(spec));
    std::vector<double> seconds;
    for (auto& h : handles) {
      h->wait_done();
      EXPECT_TRUE(h->ok);
      seconds.push_back(h->seconds());
    }
    return seconds;
  }
  std::function<void(Driver&)> body_;
};

std::unique_ptr<system::SystemModel> timing_only_model(const std::string& system) {
  auto loaded = collectives::load_system_file(system, {});
  auto topology = system::build_topology(loaded.config);
  return std::make_unique<system::SystemModel>("system", loaded.config, std::move(topology),
                                               system::ModelOptions{1, false});
}

Spec all_reduce(std::uint64_t base = 0) {
  Spec s;
  s.count = 16u << 20;  // 64 MiB of fp32
  s.base = base;
  return s;
}

TEST(ConcurrentCollectives, DisjointBoxesTakeNoLongerThanAlone) {
  auto model = timing_only_model("hls2-pod128");
  Communicator box0(*model, {0, 1, 2, 3, 4, 5, 6, 7});
  Communicator box1(*model, {8, 9, 10, 11, 12, 13, 14, 15});
  std::vector<double> alone, both;
  Driver d("driver", [&](Driver& self) {
    box0.open();
    box1.open();
    alone.push_back(self.together({{&box0, all_reduce()}})[0]);
    alone.push_back(self.together({{&box1, all_reduce()}})[0]);
    both = self.together({{&box0, all_reduce()}, {&box1, all_reduce()}});
  });
  sc_core::sc_start();
  ASSERT_EQ(both.size(), 2u);
  EXPECT_LE(both[0], alone[0] * 1.0001);
  EXPECT_LE(both[1], alone[1] * 1.0001);
}

TEST(ConcurrentCollectives, TwoOnTheSamePortsShareTheBandwidth) {
  auto model = timing_only_model("hls2");
  Communicator box(*model, {0, 1, 2, 3, 4, 5, 6, 7});
  const std::uint64_t second_base = layout(all_reduce(), 8, 0).end;
  std::vector<double> alone, both;
  Driver d("driver", [&](Driver& self) {
    box.open();  // the devices' set-up is no collective's time
    alone = self.together({{&box, all_reduce()}});
    both = self.together({{&box, all_reduce()}, {&box, all_reduce(second_base)}});
  });
  sc_core::sc_start();
  ASSERT_EQ(both.size(), 2u);
  // Both sets of bytes cross the same links: the pair ends after about twice the time of one,
  // and the first to end was slowed too (their writes share each QP's queue in posting order).
  const double last = std::max(both[0], both[1]), first = std::min(both[0], both[1]);
  EXPECT_GE(last, 1.7 * alone[0]);  // fixed latencies overlap, so a little under 2x
  EXPECT_LE(last, 2.1 * alone[0]);
  EXPECT_GE(first, 1.4 * alone[0]);
}

// A collective keeps its queues and sync objects for as long as it runs, however many others
// start and finish elsewhere meanwhile (a regression of the sequencer days: ids were handed out
// round-robin, so a hierarchical all-reduce over 128 boxes reused one still running); more
// collectives than a chip has slots wait their turn.
TEST(ConcurrentCollectives, ACollectiveKeepsWhatItHoldsWhileItRuns) {
  auto model = timing_only_model("hls2");
  Communicator first(*model, {0, 1}), other(*model, {2, 3});
  Spec tiny = all_reduce();
  tiny.count = 1024;
  Spec big = all_reduce();
  big.count = 256u << 20;  // 1 GiB: longer than the tiny ones' launches (about 35 us each)
  const std::uint64_t second_base = layout(big, 2, 0).end;
  bool both_ok = false;
  Driver d("driver", [&](Driver& self) {
    auto long_one = first.start(big);
    for (int i = 1; i < 300; ++i) self.together({{&other, tiny}});
    ASSERT_FALSE(long_one->done());
    auto next = first.start(all_reduce(second_base));
    EXPECT_NE(next->id, long_one->id);
    long_one->wait_done();
    next->wait_done();
    both_ok = long_one->ok && next->ok;
    // Six at once on the same chips: four run, two wait for a slot, all finish.
    std::vector<std::pair<Communicator*, Spec>> six(6, {&other, tiny});
    EXPECT_EQ(self.together(six).size(), 6u);
  });
  sc_core::sc_start();
  EXPECT_TRUE(both_ok);
}

}  // namespace
}  // namespace podsim::collectives
