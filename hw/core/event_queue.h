// One SystemC process that runs many lightweight timed callbacks, for the per-packet hot path.
// A kernel event per packet and link costs a few cache misses each (event, process, kernel
// heap node) once a system has tens of thousands of links; here a callback is 24 bytes in one
// contiguous heap, and a single SC_METHOD wakes at the earliest due time and runs every callback
// due then, in (time, order of scheduling) order, so runs stay deterministic.
// Captures: timed callbacks at picosecond resolution, interleaved with ordinary SystemC
// processes at the same simulated times. Ignores: cancellation (a target that reschedules keeps
// its own notion of which call is current and ignores stale ones) and delta-cycle ordering
// among callbacks due at the same time (they run in scheduling order within one activation).
#pragma once

#include <cstdint>
#include <vector>

#include <systemc>

#include "hw/core/units.h"

namespace podsim::core {

class Timed {
 public:
  virtual ~Timed() = default;
  // Called at the scheduled time with the tag given to EventQueue::schedule.
  virtual void fire(std::uint32_t tag) = 0;
};

class EventQueue : public sc_core::sc_module {
 public:
  explicit EventQueue(sc_core::sc_module_name name);

  // Runs target->fire(tag) at `at` (not before now). Tags must fit in 24 bits. `hot` names the
  // state the callback touches first: it is prefetched while the callback before it runs, which
  // hides one cache miss per callback in systems too large for the cache.
  void schedule(TimePs at, Timed& target, std::uint32_t tag, const void* hot = nullptr);
  std::size_t pending() const { return heap_.size(); }
  std::uint64_t fired() const { return fired_; }

 private:
  SC_HAS_PROCESS(EventQueue);
  // The scheduling order (unique, so it breaks ties) shares a word with the tag; its
  // 40 bits last 10^12 schedules, days of CPU at the measured rates.
  struct Entry {
    TimePs at;
    std::uint64_t order_tag;  // order << 24 | tag
    Timed* target;
    const void* hot;
  };
  static constexpr int kTagBits = 24;
  static bool before(const Entry& a, const Entry& b) {
    return a.at != b.at ? a.at < b.at : a.order_tag < b.order_tag;
  }
  // A 4-ary heap: half the depth of a binary one, and a node's children share a cache line or
  // two, which matters when tens of thousands of callbacks are pending.
  void push(const Entry& e);
  Entry pop();
  void run();
  void arm(TimePs now);

  std::vector<Entry> heap_;
  std::uint64_t next_order_ = 0, fired_ = 0;
  TimePs armed_ps_ = ~TimePs{0};  // when wake_ is due; all-ones when not armed
  bool running_ = false;
  sc_core::sc_event wake_;
};

// The queue of this process's simulation, made on first use (during elaboration).
EventQueue& event_queue();

}  // namespace podsim::core
