// Max-min fair rates by progressive filling: shares of one link, a flow held by its own limit,
// the textbook parking-lot line, order independence, removal, and bad input.
#include "hw/flow/max_min.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <vector>

namespace podsim::flow {
namespace {

TEST(MaxMin, FlowsShareOneLinkEqually) {
  MaxMinSolver s;
  const int link = s.add_link(100);
  const int a = s.add_flow({link}), b = s.add_flow({link}), c = s.add_flow({link});
  s.solve();
  for (int f : {a, b, c}) EXPECT_DOUBLE_EQ(s.rate(f), 100.0 / 3);
  EXPECT_DOUBLE_EQ(s.load(link), 100);
}

// A flow held by its own limit leaves the rest of the link to the others.
TEST(MaxMin, ALimitedFlowLeavesItsShareToTheOthers) {
  MaxMinSolver s;
  const int link = s.add_link(100);
  const int slow = s.add_flow({link}, 10), a = s.add_flow({link}), b = s.add_flow({link});
  s.solve();
  EXPECT_DOUBLE_EQ(s.rate(slow), 10);
  EXPECT_DOUBLE_EQ(s.rate(a), 45);
  EXPECT_DOUBLE_EQ(s.rate(b), 45);
}

// The parking lot: a long flow over links 0..2 and one short flow on each link; link 1 is half
// the others. Link 1 fills first (long and short1 at 25), then links 0 and 2 fill with short0
// and short2 at 75.
TEST(MaxMin, ParkingLotGivesEachItsBottleneckShare) {
  MaxMinSolver s;
  const int l0 = s.add_link(100), l1 = s.add_link(50), l2 = s.add_link(100);
  const int longest = s.add_flow({l0, l1, l2});
  const int s0 = s.add_flow({l0}), s1 = s.add_flow({l1}), s2 = s.add_flow({l2});
  s.solve();
  EXPECT_DOUBLE_EQ(s.rate(longest), 25);
  EXPECT_DOUBLE_EQ(s.rate(s1), 25);
  EXPECT_DOUBLE_EQ(s.rate(s0), 75);
  EXPECT_DOUBLE_EQ(s.rate(s2), 75);
  for (int l : {l0, l1, l2}) EXPECT_DOUBLE_EQ(s.load(l), l == l1 ? 50 : 100);
}

TEST(MaxMin, RatesDependOnTheFlowsNotOnTheOrderTheyCame) {
  MaxMinSolver a, b;
  for (MaxMinSolver* s : {&a, &b}) {
    s->add_link(40);
    s->add_link(100);
  }
  const int a1 = a.add_flow({0, 1}), a2 = a.add_flow({1}, 30), a3 = a.add_flow({0});
  const int b3 = b.add_flow({0}), b2 = b.add_flow({1}, 30), b1 = b.add_flow({0, 1});
  a.solve();
  b.solve();
  EXPECT_EQ(a.rate(a1), b.rate(b1));
  EXPECT_EQ(a.rate(a2), b.rate(b2));
  EXPECT_EQ(a.rate(a3), b.rate(b3));
  EXPECT_DOUBLE_EQ(a.rate(a1), 20);
  EXPECT_DOUBLE_EQ(a.rate(a2), 30);
}

// A flow that ends gives its share back at the next solve; its id is reused.
TEST(MaxMin, RemovingAFlowGivesItsShareBack) {
  MaxMinSolver s;
  const int link = s.add_link(90);
  const int a = s.add_flow({link}), b = s.add_flow({link}), c = s.add_flow({link});
  s.solve();
  EXPECT_DOUBLE_EQ(s.rate(a), 30);
  s.remove_flow(b);
  s.solve();
  EXPECT_DOUBLE_EQ(s.rate(a), 45);
  EXPECT_DOUBLE_EQ(s.rate(c), 45);
  EXPECT_EQ(s.live_flows(), 2);
  EXPECT_THROW(s.rate(b), std::invalid_argument);
  EXPECT_EQ(s.add_flow({link}), b);
}

// A flow that loads a link by a fraction of its rate (its ACKs on the way back) leaves the rest.
TEST(MaxMin, WeightedUsesLoadLinksByTheirShare) {
  MaxMinSolver s;
  const int forward = s.add_link(100), back = s.add_link(100);
  // A data flow each way; each one's ACKs take 2% of its rate on the other direction.
  const int ab = s.add_weighted_flow({{forward, 1}, {back, 0.02}});
  const int ba = s.add_weighted_flow({{back, 1}, {forward, 0.02}});
  s.solve();
  EXPECT_DOUBLE_EQ(s.rate(ab), 100 / 1.02);
  EXPECT_DOUBLE_EQ(s.rate(ba), 100 / 1.02);
  EXPECT_NEAR(s.load(forward), 100, 1e-9);
  EXPECT_THROW(s.add_weighted_flow({{forward, 0}}), std::invalid_argument);
}

// Only the flows a change can reach through full links are recomputed; the others keep their
// rates.
TEST(MaxMin, ASolveRecomputesOnlyWhatAChangeReaches) {
  MaxMinSolver s;
  const int l0 = s.add_link(100), l1 = s.add_link(100), l2 = s.add_link(60);
  const int a = s.add_flow({l0}), b = s.add_flow({l0, l1}), c = s.add_flow({l2});
  EXPECT_EQ(s.solve(), (std::vector<int>{a, b, c}));
  EXPECT_DOUBLE_EQ(s.rate(a), 50);
  // l1 had room (b is held on l0): d takes what b leaves there, and b keeps its rate.
  const int d = s.add_flow({l1});
  EXPECT_EQ(s.solve(), (std::vector<int>{d}));
  EXPECT_DOUBLE_EQ(s.rate(b), 50);
  EXPECT_DOUBLE_EQ(s.rate(d), 50);
  // l0 was full: b is recomputed, and through l1 (now full) d.
  s.remove_flow(a);
  EXPECT_EQ(s.solve(), (std::vector<int>{b, d}));
  EXPECT_DOUBLE_EQ(s.rate(b), 50);
  EXPECT_DOUBLE_EQ(s.rate(c), 60);  // untouched
  EXPECT_TRUE(s.solve().empty());   // nothing changed since
}

// A flow added on a link with room, where it fills the link and a flow kept there is faster,
// makes the solve recompute that flow: it gives up its excess. The slower one held elsewhere
// keeps its rate.
TEST(MaxMin, AFlowThatFillsALinkWithRoomRecomputesTheFasterFlowThere) {
  MaxMinSolver s;
  const int shared = s.add_link(100), own = s.add_link(80), narrow = s.add_link(10);
  const int fast = s.add_flow({shared, own}), slow = s.add_flow({shared, narrow});
  s.solve();
  EXPECT_DOUBLE_EQ(s.rate(fast), 80);  // shared has 10 left
  EXPECT_DOUBLE_EQ(s.rate(slow), 10);
  const int extra = s.add_flow({shared});
  EXPECT_EQ(s.solve(), (std::vector<int>{fast, extra}));
  EXPECT_DOUBLE_EQ(s.rate(fast), 45);
  EXPECT_DOUBLE_EQ(s.rate(extra), 45);
  EXPECT_DOUBLE_EQ(s.rate(slow), 10);
}

// Whether `s`'s rates are max-min fair: no link over capacity, every limited flow at most its
// limit, and every flow held either by its limit or by a full link on which no flow is faster.
void expect_max_min_fair(const MaxMinSolver& s,
                         const std::vector<std::vector<MaxMinSolver::Use>>& uses,
                         const std::vector<double>& capacity, const std::vector<double>& limit) {
  constexpr double kTolerance = 1e-9;
  std::vector<double> load(capacity.size(), 0), fastest(capacity.size(), 0);
  for (std::size_t f = 0; f < uses.size(); ++f) {
    for (const auto& u : uses[f]) {
      load[static_cast<std::size_t>(u.link)] += u.weight * s.rate(static_cast<int>(f));
      fastest[static_cast<std::size_t>(u.link)] =
          std::max(fastest[static_cast<std::size_t>(u.link)], s.rate(static_cast<int>(f)));
    }
  }
  for (std::size_t l = 0; l < capacity.size(); ++l) {
    EXPECT_LE(load[l], capacity[l] * (1 + kTolerance)) << "link " << l;
  }
  for (std::size_t f = 0; f < uses.size(); ++f) {
    const double rate = s.rate(static_cast<int>(f));
    EXPECT_LE(rate, limit[f] * (1 + kTolerance)) << "flow " << f;
    bool held = rate >= limit[f] * (1 - kTolerance);
    for (const auto& u : uses[f]) {
      const auto l = static_cast<std::size_t>(u.link);
      held = held ||
             (load[l] >= capacity[l] * (1 - kTolerance) && rate >= fastest[l] * (1 - kTolerance));
    }
    EXPECT_TRUE(held) << "flow " << f << " at " << rate << " could rise";
  }
}

// A group large enough to be filled one bottleneck at a time (100 links, 300 flows of two to
// five links, some with acknowledgement-like light weights, some limited): the rates are
// max-min fair, and the same whatever order the flows came in.
TEST(MaxMin, LargeGroupsAreMaxMinFairToo) {
  constexpr int kLinks = 100, kFlows = 300;
  std::vector<double> capacity, limit;
  std::vector<std::vector<MaxMinSolver::Use>> uses;
  std::uint64_t x = 12345;
  const auto next = [&x](int n) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<int>((x >> 33) % static_cast<std::uint64_t>(n));
  };
  for (int l = 0; l < kLinks; ++l) capacity.push_back(100 + 10 * next(10));
  for (int f = 0; f < kFlows; ++f) {
    std::vector<MaxMinSolver::Use> u;
    const int hops = 2 + next(4);
    for (int h = 0; h < hops; ++h) {
      const int link = next(kLinks);
      bool taken = false;
      for (const auto& e : u) taken = taken || e.link == link;
      if (!taken) u.push_back({link, h == hops - 1 && f % 3 == 0 ? 0.05 : 1.0});
    }
    uses.push_back(u);
    limit.push_back(f % 7 == 0 ? 5.0 + next(20) : MaxMinSolver::kUnlimited);
  }
  MaxMinSolver forward, backward;
  for (double c : capacity) {
    forward.add_link(c);
    backward.add_link(c);
  }
  for (int f = 0; f < kFlows; ++f) forward.add_weighted_flow(uses[f], limit[f]);
  std::vector<int> id(kFlows);
  for (int f = kFlows - 1; f >= 0; --f) id[f] = backward.add_weighted_flow(uses[f], limit[f]);
  forward.solve();
  backward.solve();
  expect_max_min_fair(forward, uses, capacity, limit);
  for (int f = 0; f < kFlows; ++f) {
    EXPECT_NEAR(backward.rate(id[f]), forward.rate(f), 1e-9 * forward.rate(f)) << f;
  }
}

// Flows coming and going over many solves (2 to 4 links each, some with acknowledgement-like
// light weights, some limited): after every solve the rates are max-min fair and equal to those
// a new solver gives the live flows added at once.
TEST(MaxMin, IncrementalSolvesMatchSolvingEverythingAgain) {
  constexpr int kLinks = 30, kRounds = 300;
  std::uint64_t x = 777;
  const auto next = [&x](int n) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<int>((x >> 33) % static_cast<std::uint64_t>(n));
  };
  std::vector<double> capacity;
  MaxMinSolver s;
  for (int l = 0; l < kLinks; ++l) capacity.push_back(50 + 25 * next(4));
  for (double c : capacity) s.add_link(c);
  struct Live {
    int id;
    std::vector<MaxMinSolver::Use> uses;
    double limit;
  };
  std::vector<Live> live;
  int reopened = 0;  // solves that recomputed fewer flows than were live
  for (int round = 0; round < kRounds; ++round) {
    for (int k = next(4); k > 0 && !live.empty(); --k) {
      const auto gone = live.begin() + next(static_cast<int>(live.size()));
      s.remove_flow(gone->id);
      live.erase(gone);
    }
    for (int k = next(5); k > 0; --k) {
      Live f{-1, {}, next(6) == 0 ? 5.0 + next(30) : MaxMinSolver::kUnlimited};
      const int hops = 2 + next(3);
      for (int h = 0; h < hops; ++h) {
        const int link = next(kLinks);
        bool taken = false;
        for (const auto& e : f.uses) taken = taken || e.link == link;
        if (!taken) f.uses.push_back({link, h == hops - 1 && next(3) == 0 ? 0.05 : 1.0});
      }
      f.id = s.add_weighted_flow(f.uses, f.limit);
      live.push_back(f);
    }
    reopened += s.solve().size() < live.size() ? 1 : 0;
    MaxMinSolver fresh;
    for (double c : capacity) fresh.add_link(c);
    std::vector<std::vector<MaxMinSolver::Use>> uses;
    std::vector<double> limits;
    for (const Live& f : live) {
      fresh.add_weighted_flow(f.uses, f.limit);
      uses.push_back(f.uses);
      limits.push_back(f.limit);
    }
    fresh.solve();
    expect_max_min_fair(fresh, uses, capacity, limits);
    for (std::size_t i = 0; i < live.size(); ++i) {
      ASSERT_NEAR(s.rate(live[i].id), fresh.rate(static_cast<int>(i)),
                  1e-9 * fresh.rate(static_cast<int>(i)))
          << "round " << round << ", flow " << live[i].id;
    }
  }
  EXPECT_GT(reopened, kRounds / 2);  // the solves were incremental
}

TEST(MaxMin, BadInputIsRefusedWithTheReason) {
  MaxMinSolver s;
  EXPECT_THROW(s.add_link(0), std::invalid_argument);
  const int link = s.add_link(10);
  EXPECT_THROW(s.add_flow({link + 1}), std::invalid_argument);
  EXPECT_THROW(s.add_flow({link, link}), std::invalid_argument);
  EXPECT_THROW(s.add_flow({}), std::invalid_argument);  // unbounded
  EXPECT_THROW(s.add_flow({link}, 0), std::invalid_argument);
  EXPECT_THROW(s.remove_flow(3), std::invalid_argument);
  const int local = s.add_flow({}, 5);  // a flow limited only by itself (a copy in one chip)
  s.solve();
  EXPECT_DOUBLE_EQ(s.rate(local), 5);
}

}  // namespace
}  // namespace podsim::flow
