// The shared event queue: callbacks run at their exact times, in scheduling order among equal
// times, interleaved correctly with ordinary SystemC processes.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <initializer_list>
#include <memory>
#include <random>
#include <stdexcept>
#include <tlm>
#include <vector>

#include "core/event_queue.h"
#include "core/kernel.h"

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

// Keyed callbacks (a link's arrivals) run before the plain ones of their time, in key order,
// whenever they were scheduled.
TEST(EventQueue, KeyedCallbacksRunFirstInKeyOrder) {
  Recorder r;
  auto& q = event_queue();
  const std::uint64_t keys = q.take_keys(3);
  Driver d("driver", [&] {
    q.schedule(5000, r, 1);
    q.schedule_keyed(5000, r, 2, keys + 2);
    sc_core::wait(sc_core::sc_time(1, sc_core::SC_NS));
    q.schedule_keyed(5000, r, 3, keys + 0);
    q.schedule(5000, r, 4);
    q.schedule_keyed(3000, r, 5, keys + 1);
  });
  sc_core::sc_start();
  EXPECT_EQ(r.calls, (std::vector<std::pair<TimePs, std::uint32_t>>{
                         {3000, 5}, {5000, 3}, {5000, 2}, {5000, 1}, {5000, 4}}));
}

TEST(EventQueue, TakesDistinctKeys) {
  auto& q = event_queue();
  const std::uint64_t a = q.take_keys(2), b = q.take_keys(5);
  EXPECT_EQ(b, a + 2);
  EXPECT_THROW(q.take_keys(EventQueue::kKeys), std::length_error);
}

// With a limit, running ahead stops there: a window of sc_start() up to the limit runs only the
// callbacks up to it, and the rest once the limit is lifted.
TEST(EventQueue, RunsNothingAfterItsLimit) {
  tlm::tlm_global_quantum::instance().set(sc_core::sc_max_time());
  Recorder r;
  auto& q = event_queue();
  Driver d("driver", [&] {
    for (const TimePs t : {1000, 2000, 3000}) q.schedule(t, r, static_cast<std::uint32_t>(t));
  });
  q.limit_to(2000);
  sc_core::sc_start(sc_core::sc_time(2, sc_core::SC_NS));
  EXPECT_EQ(r.calls.size(), 2u);
  q.limit_to(~TimePs{0});
  sc_core::sc_start();
  EXPECT_EQ(r.calls.size(), 3u);
}

// Schedules a callback of `r` at each time, tagged with its time.
void schedule_tagged_by_time(EventQueue& q, Recorder& r, std::initializer_list<TimePs> times) {
  for (const TimePs t : times) q.schedule(t, r, static_cast<std::uint32_t>(t));
}

// Lets the queue run ahead of the kernel as far as the kernel allows (run_to_completion's way).
void allow_running_ahead() { tlm::tlm_global_quantum::instance().set(sc_core::sc_max_time()); }

// Many callbacks scheduling more at random delays (zero included, so the look-ahead window takes
// insertions) run exactly in (time, scheduling order), as a reference ordering predicts.
void check_many_interleaved_callbacks() {
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

TEST(EventQueue, ManyInterleavedCallbacksRunInTimeThenSchedulingOrder) {
  check_many_interleaved_callbacks();
}

TEST(EventQueue, ManyInterleavedCallbacksRunInOrderWhenRunningAhead) {
  allow_running_ahead();
  check_many_interleaved_callbacks();
  EXPECT_LE(event_queue().activations(), 3u);
}

// By default (TLM global quantum zero) the queue enters the kernel at every time it runs.
TEST(EventQueue, InLockStepEachTimeIsAnActivation) {
  Recorder r;
  auto& q = event_queue();
  Driver d("driver", [&] { schedule_tagged_by_time(q, r, {1000, 3000, 5000}); });
  sc_core::sc_start();
  EXPECT_EQ(r.calls.size(), 3u);
  EXPECT_EQ(q.activations(), 3u);
}

TEST(EventQueue, RunsLaterCallbacksInOneActivationWhenTheKernelHasNothingBefore) {
  allow_running_ahead();
  Recorder r;
  auto& q = event_queue();
  Driver d("driver", [&] { schedule_tagged_by_time(q, r, {1000, 3000, 5000}); });
  sc_core::sc_start();
  EXPECT_EQ(r.calls, (std::vector<std::pair<TimePs, std::uint32_t>>{
                         {1000, 1000}, {3000, 3000}, {5000, 5000}}));
  // One activation runs all three; one more brings the kernel's clock to the last of them.
  EXPECT_EQ(q.activations(), 2u);
  EXPECT_EQ(sc_core::sc_time_stamp().value(), 5000u);
}

// A thread due at 3000 stops the run ahead there: the callbacks due at 3000 run first, as the
// queue's method runs before threads at a time, then the thread, then what it scheduled.
TEST(EventQueue, RunningAheadStopsAtTheKernelsNextActivity) {
  allow_running_ahead();
  Recorder r;
  auto& q = event_queue();
  Driver d("driver", [&] {
    schedule_tagged_by_time(q, r, {1000, 3000, 5000});
    sc_core::wait(sc_core::sc_time(3, sc_core::SC_NS));
    r.calls.push_back({now_ps(), 1});
    q.schedule(now_ps(), r, 2);
  });
  sc_core::sc_start();
  EXPECT_EQ(r.calls, (std::vector<std::pair<TimePs, std::uint32_t>>{
                         {1000, 1000}, {3000, 3000}, {3000, 1}, {3000, 2}, {5000, 5000}}));
}

// A callback run ahead that notifies an event (through notify_now) wakes its waiter at the
// callback's time, and the queue does not run past that time before the waiter has run.
TEST(EventQueue, ANotificationFromACallbackRunAheadWakesTheWaiterAtItsTime) {
  allow_running_ahead();
  Recorder r;
  auto& q = event_queue();  // made during elaboration, not at first use in the driver
  sc_core::sc_event done;
  r.also = [&](std::uint32_t tag) {
    if (tag == 4000) notify_now(done);
  };
  TimePs woke_kernel = 0;
  Driver d("driver", [&] {
    schedule_tagged_by_time(q, r, {1000, 4000, 6000});
    sc_core::wait(done);
    woke_kernel = sc_core::sc_time_stamp().value();
    r.calls.push_back({now_ps(), 1});
  });
  sc_core::sc_start();
  EXPECT_EQ(r.calls, (std::vector<std::pair<TimePs, std::uint32_t>>{
                         {1000, 1000}, {4000, 4000}, {4000, 1}, {6000, 6000}}));
  EXPECT_EQ(woke_kernel, 4000u);
}

// The TLM global quantum bounds the lead: with 2 ns, callbacks every nanosecond from 0 to 10 ns
// take an activation per 2 ns.
TEST(EventQueue, TheGlobalQuantumBoundsHowFarTheQueueRunsAhead) {
  tlm::tlm_global_quantum::instance().set(sc_core::sc_time(2, sc_core::SC_NS));
  Recorder r;
  auto& q = event_queue();
  Driver d("driver", [&] {
    for (TimePs t = 0; t <= 10000; t += 1000) q.schedule(t, r, static_cast<std::uint32_t>(t));
  });
  sc_core::sc_start();
  EXPECT_EQ(r.calls.size(), 11u);
  EXPECT_EQ(q.activations(), 6u);  // at 0, 2, 4, 6, 8 and 10 ns
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

// Sixteen threads, thread i running body(i), and the order the tests below shuffle them in.
constexpr int kThreads = 16;
int shuffled(int i) { return 7 * i % kThreads; }

std::vector<std::unique_ptr<Driver>> threads(const char* name, std::function<void(int)> body) {
  std::vector<std::unique_ptr<Driver>> made;
  for (int i = 0; i < kThreads; ++i) {
    made.push_back(
        std::make_unique<Driver>(sc_core::sc_gen_unique_name(name), [body, i] { body(i); }));
  }
  return made;
}

// Threads woken at one time run in the same order whether the queue runs ahead of the kernel or
// not: the kernel's order for one delta cycle's notifications (the reference kernel triggers
// them last first). Running ahead once left it to the kernel's heap of timed notifications, and
// a run's results then depended on the mode.
std::vector<int> wake_order_of_notified_threads() {
  Recorder r;
  auto& q = event_queue();
  std::vector<std::unique_ptr<sc_core::sc_event>> events;
  for (int i = 0; i < kThreads; ++i) events.push_back(std::make_unique<sc_core::sc_event>());
  std::vector<int> order;
  const auto waiters = threads("waiter", [&](int i) {
    sc_core::wait(*events[static_cast<std::size_t>(i)]);
    order.push_back(i);
  });
  r.also = [&](std::uint32_t tag) {  // tag 1000 + t notifies thread shuffled(t)
    notify_now(*events[static_cast<std::size_t>(shuffled(static_cast<int>(tag) - 1000))]);
  };
  Driver d("driver", [&] {
    for (std::uint32_t t = 0; t < kThreads; ++t) q.schedule(5000, r, 1000 + t);
  });
  sc_core::sc_start();
  return order;
}

std::vector<int> shuffled_order_last_first() {
  std::vector<int> order;
  for (int t = kThreads - 1; t >= 0; --t) order.push_back(shuffled(t));
  return order;
}

TEST(EventQueue, ThreadsNotifiedTogetherWakeInAnOrderFixedByTheNotificationsInLockStep) {
  EXPECT_EQ(wake_order_of_notified_threads(), shuffled_order_last_first());
}

TEST(EventQueue, ThreadsNotifiedTogetherWakeInAnOrderFixedByTheNotificationsWhenRunningAhead) {
  allow_running_ahead();
  EXPECT_EQ(wake_order_of_notified_threads(), shuffled_order_last_first());
}

// Threads that sleep until one time wake at that time, in an order fixed by the order they went
// to sleep (the kernel's for one delta cycle: last first), in either mode.
std::vector<std::pair<int, TimePs>> wake_order_of_sleepers() {
  event_queue();  // made during elaboration, as models make it
  std::vector<std::pair<int, TimePs>> order;
  const auto sleepers = threads("sleeper", [&](int i) {
    const TimePs start = static_cast<TimePs>(shuffled(i)) * 10;
    sc_core::wait(sc_core::sc_time::from_value(start));
    sleep(Duration{static_cast<std::int64_t>(10000 - start)});
    order.push_back({i, sc_core::sc_time_stamp().value()});
  });
  sc_core::sc_start();
  return order;
}

std::vector<std::pair<int, TimePs>> last_asleep_first() {
  std::vector<std::pair<int, TimePs>> order(kThreads);
  for (int i = 0; i < kThreads; ++i) {
    order[static_cast<std::size_t>(kThreads - 1 - shuffled(i))] = {i, 10000};
  }
  return order;
}

TEST(EventQueue, SleepersWakeTogetherInAnOrderFixedByWhenTheySleptInLockStep) {
  EXPECT_EQ(wake_order_of_sleepers(), last_asleep_first());
}

TEST(EventQueue, SleepersWakeTogetherInAnOrderFixedByWhenTheySleptWhenRunningAhead) {
  allow_running_ahead();
  EXPECT_EQ(wake_order_of_sleepers(), last_asleep_first());
}

// Quiet: nothing pending but callbacks their targets call stale, and no process due earlier.
struct StaleTimer : Recorder {
  bool gone = true;
  bool stale(std::uint32_t) const override { return gone; }
};

TEST(EventQueue, IsQuietWithOnlyStaleCallbacksPendingAndNoProcessDueFirst) {
  StaleTimer timer;
  Recorder busy;
  auto& q = event_queue();
  std::vector<bool> seen;
  sc_core::sc_event far;
  Driver d("driver", [&] {
    seen.push_back(q.quiet());  // nothing at all
    q.schedule(50'000, timer, 1);
    seen.push_back(q.quiet());  // a stale timer only
    timer.gone = false;
    seen.push_back(q.quiet());  // the timer has work again
    timer.gone = true;
    q.schedule(90'000, busy, 2);
    seen.push_back(q.quiet());  // a live callback behind it
    sc_core::wait(sc_core::sc_time(100, sc_core::SC_NS));
    q.schedule(200'000, timer, 3);
    far.notify(sc_core::sc_time(10, sc_core::SC_NS));
    seen.push_back(q.quiet());  // a process is due before the stale timer
    sc_core::wait(far);
    seen.push_back(q.quiet());
  });
  sc_core::sc_start();
  EXPECT_EQ(seen, (std::vector<bool>{true, true, false, false, false, true}));
  EXPECT_EQ(timer.calls.size(), 2u);  // stale callbacks still run
}

}  // namespace
}  // namespace podsim::core
