// The shared event queue: callbacks run at their exact times, in scheduling order among equal
// times, interleaved correctly with ordinary SystemC processes.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <random>
#include <vector>

#include "hw/core/event_queue.h"
#include "hw/core/kernel.h"

namespace podsim::core {
namespace {

struct Recorder : Timed {
  std::vector<std::pair<TimePs, std::uint32_t>> calls;
  std::function<void(std::uint32_t)> also;
  void fire(std::uint32_t tag) override {
    calls.push_back({now_ps(), tag});
    if (also) also(tag);
  }
};

// Schedules from inside a process, as models do.
struct Driver : sc_core::sc_module {
  std::function<void()> body;
  explicit Driver(sc_core::sc_module_name name, std::function<void()> b)
      : sc_module(name), body(std::move(b)) {
    SC_THREAD(run);
  }
  SC_HAS_PROCESS(Driver);
  void run() { body(); }
};

TEST(EventQueue, RunsCallbacksAtTheirTimesInOrder) {
  Recorder r;
  auto& q = event_queue();
  Driver d("driver", [&] {
    q.schedule(5000, r, 1);
    q.schedule(1000, r, 2);
    q.schedule(5000, r, 3);  // same time as tag 1: runs after it
    q.schedule(3000, r, 4);
  });
  sc_core::sc_start();
  EXPECT_EQ(r.calls, (std::vector<std::pair<TimePs, std::uint32_t>>{
                         {1000, 2}, {3000, 4}, {5000, 1}, {5000, 3}}));
  EXPECT_EQ(q.fired(), 4u);
  EXPECT_EQ(q.pending(), 0u);
}

TEST(EventQueue, CallbacksCanScheduleNowAndLater) {
  Recorder r;
  auto& q = event_queue();
  r.also = [&](std::uint32_t tag) {
    if (tag == 1) q.schedule(now_ps(), r, 2);        // same activation
    if (tag == 2) q.schedule(now_ps() + 700, r, 3);  // a later one
  };
  Driver d("driver", [&] { q.schedule(100, r, 1); });
  sc_core::sc_start();
  EXPECT_EQ(r.calls, (std::vector<std::pair<TimePs, std::uint32_t>>{{100, 1}, {100, 2}, {800, 3}}));
}

TEST(EventQueue, AnEarlierScheduleWakesBeforeAPendingLaterOne) {
  Recorder r;
  auto& q = event_queue();
  Driver d("driver", [&] {
    q.schedule(9000, r, 1);
    sc_core::wait(sc_core::sc_time(1, sc_core::SC_NS));
    q.schedule(2000, r, 2);  // earlier than the armed 9000
  });
  sc_core::sc_start();
  EXPECT_EQ(r.calls, (std::vector<std::pair<TimePs, std::uint32_t>>{{2000, 2}, {9000, 1}}));
}

TEST(EventQueue, PastTimesRunNow) {
  Recorder r;
  auto& q = event_queue();
  Driver d("driver", [&] {
    sc_core::wait(sc_core::sc_time(4, sc_core::SC_NS));
    q.schedule(10, r, 7);
  });
  sc_core::sc_start();
  ASSERT_EQ(r.calls.size(), 1u);
  EXPECT_EQ(r.calls[0].first, 4000u);
}

// Many callbacks scheduling more at random delays (zero included, so the look-ahead window takes
// insertions) run exactly in (time, scheduling order), as a reference ordering predicts.
TEST(EventQueue, ManyInterleavedCallbacksRunInTimeThenSchedulingOrder) {
  auto& q = event_queue();
  std::mt19937_64 rng(3);
  std::vector<std::pair<TimePs, std::uint64_t>> scheduled, ran;
  std::uint64_t next_id = 0;
  struct Chain : Timed {
    std::function<void(std::uint32_t)> on_fire;
    void fire(std::uint32_t tag) override { on_fire(tag); }
  } chain;
  std::vector<std::uint64_t> id_of_tag;
  auto launch = [&](TimePs at) {
    const auto tag = static_cast<std::uint32_t>(id_of_tag.size());
    id_of_tag.push_back(next_id);
    scheduled.push_back({std::max(at, now_ps()), next_id++});
    q.schedule(at, chain, tag);
  };
  chain.on_fire = [&](std::uint32_t tag) {
    ran.push_back({now_ps(), id_of_tag[tag]});
    if (id_of_tag.size() < 20000) {
      for (int k = 0; k < 2; ++k) {
        const std::uint64_t r = rng() % 10;
        launch(now_ps() + (r < 2 ? 0 : r < 8 ? rng() % 2000 : rng() % 1000000));
      }
    }
  };
  Driver d("driver", [&] {
    for (int i = 0; i < 50; ++i) launch(rng() % 10000);
  });
  sc_core::sc_start();
  std::sort(scheduled.begin(), scheduled.end());
  ASSERT_EQ(ran.size(), scheduled.size());
  EXPECT_TRUE(ran == scheduled);
  EXPECT_EQ(q.pending(), 0u);
}

// Regression: a far-future callback at the back of the look-ahead window once let every nearer
// callback pile into the window (each insertion slower than the last). The window now gives its
// last entry back to the queue behind it; callbacks of one time, given back or not, still run
// in scheduling order.
TEST(EventQueue, AFarCallbackDoesNotDisturbTheOrderOfNearOnes) {
  Recorder r;
  auto& q = event_queue();
  r.also = [&](std::uint32_t tag) {
    if (tag == 1) {
      for (std::uint32_t i = 0; i < 100; ++i) q.schedule(now_ps() + 10 * (i % 3), r, 100 + i);
    }
  };
  Driver d("driver", [&] {
    q.schedule(1'000'000'000, r, 2);  // far in the future
    q.schedule(5, r, 1);
  });
  sc_core::sc_start();
  ASSERT_EQ(r.calls.size(), 102u);
  EXPECT_EQ(r.calls.front(), (std::pair<TimePs, std::uint32_t>{5, 1}));
  EXPECT_EQ(r.calls.back(), (std::pair<TimePs, std::uint32_t>{1'000'000'000, 2}));
  for (std::size_t i = 2; i + 1 < r.calls.size(); ++i) {
    const auto& [t0, a] = r.calls[i - 1];
    const auto& [t1, b] = r.calls[i];
    EXPECT_TRUE(t0 < t1 || (t0 == t1 && a < b)) << "call " << i;
  }
}

// Each callback's target is asked to prefetch stages 1 to 4, in that order, before it fires
// (when enough callbacks are pending for the look-ahead to reach it), with the state it named.
TEST(EventQueue, PrefetchStagesComeInOrderBeforeFiring) {
  struct Staged : Timed {
    std::vector<std::vector<int>> stages = std::vector<std::vector<int>>(64);
    std::vector<bool> fired = std::vector<bool>(64);
    void prefetch(std::uint32_t tag, const void* hot, int stage) const override {
      EXPECT_FALSE(fired[tag]) << "stage " << stage << " after firing " << tag;
      EXPECT_EQ(hot, &stages[tag]) << "stage " << stage << " of " << tag;
      const_cast<Staged*>(this)->stages[tag].push_back(stage);
    }
    void fire(std::uint32_t tag) override { fired[tag] = true; }
  } staged;
  auto& q = event_queue();
  Driver d("driver", [&] {
    for (std::uint32_t i = 0; i < 64; ++i) q.schedule(1000 + 10 * i, staged, i, &staged.stages[i]);
  });
  sc_core::sc_start();
  for (std::uint32_t i = 0; i < 64; ++i) EXPECT_TRUE(staged.fired[i]);
  // Every callback that was far enough back in the queue when the first ones fired saw every
  // stage once (the first few were already too close for stage 1).
  ASSERT_EQ(Timed::kPrefetchStages, 4);
  for (std::uint32_t i = 12; i < 64; ++i) {
    EXPECT_EQ(staged.stages[i], (std::vector<int>{1, 2, 3, 4})) << "callback " << i;
  }
}

}  // namespace
}  // namespace podsim::core
