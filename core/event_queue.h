// One SystemC process that runs many lightweight timed callbacks, for the per-packet hot path.
// A kernel event per packet and link costs a few cache misses each (event, process, kernel
// heap node) once a system has tens of thousands of links; here a callback is 32 bytes in a
// radix queue whose accesses are all sequential, and a single SC_METHOD wakes at the earliest
// due time and runs every callback due then, in (time, order of scheduling) order (a link's
// arrivals first, by key: schedule_keyed), so runs stay deterministic.
//
// Large systems do not fit in the cache, and a callback's state sits behind a chain of pointers
// (link, port, queue head, packet), each a miss that waits for the one before. The queue keeps
// its next callbacks in a small sorted window and asks each target, a few callbacks ahead of
// firing it, to prefetch its state one level of the chain per stage; the misses of many
// upcoming callbacks then overlap instead of following one another.
//
// Each activation is a pass through the SystemC kernel (a timed notification, its heap, the
// process switch), so the queue may also run callbacks of later times in the same activation
// (temporal decoupling): those before the kernel's next activity and within the TLM global
// quantum (zero by default, which keeps it in lock step). now_ps() then returns the callback's
// time, and a callback that notifies a kernel event does so through notify_now(), which holds
// the notification until the kernel reaches the callback's time (the queue stops there). Since
// nothing in the kernel falls due before a callback run ahead, the kernel sees every effect at its
// time and in the same order as in lock step: running ahead changes how often the kernel is
// entered, never a result.
//
// Captures: timed callbacks at picosecond resolution, interleaved with ordinary SystemC
// processes at the same simulated times. Ignores: cancellation (a target that reschedules keeps
// its own notion of which call is current and ignores stale ones) and delta-cycle ordering
// among callbacks due at the same time (they run in scheduling order within one activation).
#pragma once

#include <cstdint>
#include <systemc>
#include <vector>

#include "core/radix_queue.h"
#include "core/ring.h"
#include "core/units.h"

namespace podsim::core {

class Timed {
 public:
  virtual ~Timed() = default;
  // Called at the scheduled time with the tag given to EventQueue::schedule.
  virtual void fire(std::uint32_t tag) = 0;
  static constexpr int kPrefetchStages = 4;
  // Called for stages 1 to kPrefetchStages, in order, a few callbacks before fire(tag): prefetch
  // what fire() will read, following one more level of pointers each stage (stage 1 may read
  // `hot`, the state named at scheduling, and the line holding this object's vtable pointer:
  // both were prefetched before it). A hint only: it must not change anything, and may be
  // skipped or come for a callback that turns out stale.
  virtual void prefetch(std::uint32_t /*tag*/, const void* /*hot*/, int /*stage*/) const {}
  // True when firing now would change nothing that times the simulation: a timer whose work has
  // gone (a retransmission deadline of a QP with nothing in flight). Lets a caller tell a quiet
  // system from a busy one (training/collective_replay.h).
  virtual bool stale(std::uint32_t /*tag*/) const { return false; }
};

class EventQueue : public sc_core::sc_module {
 public:
  explicit EventQueue(sc_core::sc_module_name name);

  // Runs target->fire(tag) at `at` (not before now). Tags must fit in 24 bits. `hot` names the
  // state the callback touches first; it is prefetched ahead of the target's own stages.
  void schedule(TimePs at, Timed& target, std::uint32_t tag, const void* hot = nullptr);
  // The same with a fixed place among the callbacks due at `at`: before every schedule()d one,
  // and in the order of `key` (below kKeys, unique among those due at one time, never due now).
  // A link's frame arrivals use it, so that their order does not depend on when they were
  // scheduled: one process, or several that hand frames over between windows (sims/parallel),
  // run them alike.
  void schedule_keyed(TimePs at, Timed& target, std::uint32_t tag, std::uint64_t key,
                      const void* hot = nullptr);
  static constexpr std::uint64_t kKeys = std::uint64_t{1} << 32;
  // `n` keys of its own for the caller, the same in every process that elaborates alike.
  std::uint64_t take_keys(std::uint64_t n);
  // Runs no callback after `last` until told otherwise (all-ones: no limit), so that a run that
  // sc_start()s up to a time does not run ahead beyond it.
  void limit_to(TimePs last) { limit_ps_ = last; }
  std::size_t pending() const { return later_.size() + window_.size(); }
  std::uint64_t fired() const { return fired_; }
  // Times the process woke to run callbacks: each costs a pass through the SystemC kernel.
  std::uint64_t activations() const { return activations_; }
  std::size_t peak_pending() const { return peak_pending_; }
  // Nothing pending but stale callbacks (Timed::stale), and the kernel's next activity is no
  // earlier than this queue's own wake-up: no process has anything due before then either.
  bool quiet() const;

  // notify_now() from a callback running ahead: notified when the kernel reaches now_ps().
  void notify_when_due(sc_core::sc_event& event);

 private:
  SC_HAS_PROCESS(EventQueue);
  // The scheduling order (unique, so it breaks ties; keyed entries below kKeys) shares a word
  // with the tag; its 40 bits last 10^12 schedules, days of CPU at the measured rates.
  struct Entry {
    TimePs at;
    std::uint64_t order_tag;  // order << 24 | tag
    Timed* target;
    const void* hot;
    std::uint32_t tag() const {
      return static_cast<std::uint32_t>(order_tag & ((1u << kTagBits) - 1));
    }
  };
  static constexpr int kTagBits = 24;
  // How many callbacks the window holds when the queue has them, and where in it each
  // prefetch stage runs (positions from its front): far enough apart that one stage's misses
  // have landed when the next stage reads them.
  static constexpr std::size_t kWindow = 16;
  static constexpr std::size_t kStageAt[Timed::kPrefetchStages + 1] = {14, 11, 8, 5, 2};

  static bool before(const Entry& a, const Entry& b) {
    return a.at != b.at ? a.at < b.at : a.order_tag < b.order_tag;
  }
  struct ByOrder {
    bool operator()(const Entry& a, const Entry& b) const { return a.order_tag < b.order_tag; }
  };
  void insert(const Entry& e);
  Entry take_front();
  void prefetch_ahead() const;
  void run();
  TimePs run_ahead_horizon(TimePs now);
  void arm(TimePs now, TimePs last);

  // The earliest callbacks, sorted, each before every callback in later_, at most kWindow.
  Ring<Entry> window_;
  // Ordered by scheduling order among equal times, so an entry the window gives back sorts
  // before later ones of its time.
  RadixQueue<Entry, ByOrder> later_;
  void enqueue(TimePs at, std::uint64_t order, Timed& target, std::uint32_t tag, const void* hot);

  std::uint64_t next_key_ = 0, next_order_ = kKeys, fired_ = 0, activations_ = 0;
  TimePs limit_ps_ = ~TimePs{0};
  std::size_t peak_pending_ = 0;
  TimePs armed_ps_ = ~TimePs{0};  // when wake_ is due; all-ones when not armed
  bool running_ = false;
  sc_core::sc_event wake_;
  // Notifications held for the kernel, all of one time (the queue stops running ahead there).
  std::vector<sc_core::sc_event*> held_;
  TimePs held_at_ = 0;
};

// The queue of this process's simulation, made on first use (during elaboration).
EventQueue& event_queue();

// sc_start() until nothing is left to do. Unless `lock_step`, the queue may run ahead of the
// kernel up to the kernel's next activity (the TLM global quantum is unbounded meanwhile); the
// results are the same either way, only the kernel passes are fewer.
void run_to_completion(bool lock_step = false);

}  // namespace podsim::core
