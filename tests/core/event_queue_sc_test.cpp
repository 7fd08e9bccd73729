// The shared event queue: callbacks run at their exact times, in scheduling order among equal
// times, interleaved correctly with ordinary SystemC processes.
#include "hw/core/event_queue.h"

#include <gtest/gtest.h>

#include <functional>
#include <vector>

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
    if (tag == 1) q.schedule(now_ps(), r, 2);         // same activation
    if (tag == 2) q.schedule(now_ps() + 700, r, 3);   // a later one
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

}  // namespace
}  // namespace podsim::core
