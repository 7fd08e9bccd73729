#include "core/event_queue.h"

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <tlm>

#include "core/kernel.h"

namespace podsim::core {

EventQueue::EventQueue(sc_core::sc_module_name name) : sc_module(name) {
  SC_METHOD(run);
  sensitive << wake_;
  dont_initialize();
}

void EventQueue::schedule(TimePs at, Timed& target, std::uint32_t tag, const void* hot) {
  enqueue(at, next_order_++, target, tag, hot);
}

void EventQueue::schedule_keyed(TimePs at, Timed& target, std::uint32_t tag, std::uint64_t key,
                                const void* hot) {
  enqueue(at, key, target, tag, hot);
}

std::uint64_t EventQueue::take_keys(std::uint64_t n) {
  if (next_key_ + n > kKeys) throw std::length_error("podsim_event_queue: out of keys");
  next_key_ += n;
  return next_key_ - n;
}

void EventQueue::enqueue(TimePs at, std::uint64_t order, Timed& target, std::uint32_t tag,
                         const void* hot) {
  const TimePs now = now_ps();
  at = std::max(at, now);
  insert({at, (order << kTagBits) | tag, &target, hot});
  peak_pending_ = std::max(peak_pending_, pending());
  // Inside run() the loop picks the entry up; otherwise wake the process in time for it.
  if (!running_ && at < armed_ps_) {
    armed_ps_ = at;
    wake_.notify(to_sc_time(Duration{static_cast<std::int64_t>(at - now)}));
  }
}

// Into the window when it sorts before the window's last entry (which then goes back to later_
// if the window is over full), or when nothing waits in later_ and the window is not full;
// otherwise into later_. Either way every window entry stays before every entry of later_.
void EventQueue::insert(const Entry& e) {
  if (window_.empty() || !before(e, window_.back())) {
    if (later_.empty() && window_.size() < kWindow) {
      window_.push_back(e);
    } else {
      later_.push(e);
    }
    return;
  }
  window_.push_back(e);
  std::size_t i = window_.size() - 1;
  for (; i > 0 && before(e, window_[i - 1]); --i) window_[i] = window_[i - 1];
  window_[i] = e;
  if (window_.size() > kWindow) {
    later_.push(window_.back());
    window_.pop_back();
  }
}

// The earliest entry, refilling the window.
EventQueue::Entry EventQueue::take_front() {
  const Entry front = window_.front();
  window_.pop_front();
  while (window_.size() < kWindow && !later_.empty()) window_.push_back(later_.pop());
  return front;
}

void EventQueue::prefetch_ahead() const {
  const std::size_t n = window_.size();
  if (n > kStageAt[0]) {
    const Entry& e = window_[kStageAt[0]];
    __builtin_prefetch(e.target);
    if (e.hot) __builtin_prefetch(e.hot);
  }
  for (int stage = 1; stage <= Timed::kPrefetchStages; ++stage) {
    if (n > kStageAt[stage]) {
      const Entry& e = window_[kStageAt[stage]];
      e.target->prefetch(e.tag(), e.hot, stage);
    }
  }
}

bool EventQueue::quiet() const {
  const auto stale = [](const Entry& e) { return e.target->stale(e.tag()); };
  for (std::size_t i = 0; i < window_.size(); ++i) {
    if (!stale(window_[i])) return false;
  }
  if (!held_.empty() || !later_.all_of(stale)) return false;
  if (!sc_core::sc_pending_activity()) return true;
  return armed_ps_ != ~TimePs{0} &&
         sc_core::sc_time_to_pending_activity().value() >= armed_ps_ - now_ps();
}

void EventQueue::notify_when_due(sc_core::sc_event& event) {
  held_at_ = now_ps();
  held_.push_back(&event);
}

void EventQueue::run() {
  const TimePs now = now_ps();
  armed_ps_ = ~TimePs{0};
  for (sc_core::sc_event* event : held_) event->notify(sc_core::SC_ZERO_TIME);
  held_.clear();
  running_ = true;
  ++activations_;
  detail::kernel_touched = true;
  TimePs horizon = now, last = now;
  while (!window_.empty()) {
    const TimePs at = window_.front().at;
    if (at > now) {
      if (detail::kernel_touched) horizon = run_ahead_horizon(now);
      if (at >= horizon || at > limit_ps_) break;
    }
    const Entry e = take_front();
    detail::queue_now_ps = last = at;
    prefetch_ahead();
    ++fired_;
    e.target->fire(e.tag());
  }
  detail::queue_now_ps = 0;
  running_ = false;
  arm(now, last);
}

// Strictly before the kernel's next activity, so everything the kernel does at a time comes
// after the callbacks before it and in the same order as without running ahead; and within the
// TLM global quantum, which bounds how far a run that sc_start(duration) limits can overshoot.
TimePs EventQueue::run_ahead_horizon(TimePs now) {
  detail::kernel_touched = false;
  if (!held_.empty()) return held_at_;
  const TimePs quantum = tlm::tlm_global_quantum::instance().get().value();
  if (quantum == 0) return now;
  const TimePs to_kernel = sc_core::sc_time_to_pending_activity().value();
  return now + std::min(quantum, to_kernel);
}

// At the next callback; or, with none left after running ahead, at the last one's time, so that
// the kernel's clock ends where the simulation did.
void EventQueue::arm(TimePs now, TimePs last) {
  TimePs at = window_.empty() ? last : window_.front().at;
  if (!held_.empty()) at = std::min(at, held_at_);
  if (at <= now) return;
  armed_ps_ = at;
  wake_.notify(to_sc_time(Duration{static_cast<std::int64_t>(at - now)}));
}

void run_to_completion(bool lock_step) {
  auto& quantum = tlm::tlm_global_quantum::instance();
  const sc_core::sc_time before = quantum.get();
  quantum.set(lock_step ? sc_core::SC_ZERO_TIME : sc_core::sc_max_time());
  sc_core::sc_start();
  quantum.set(before);
}

void notify_now(sc_core::sc_event& event) {
  detail::kernel_touched = true;
  if (now_ps() == sc_core::sc_time_stamp().value()) {
    event.notify(sc_core::SC_ZERO_TIME);
  } else {
    event_queue().notify_when_due(event);
  }
}

namespace {

// Wakes sleeping threads: one kernel event per sleeper, reused once it has woken its thread.
class Sleepers : public Timed {
 public:
  std::uint32_t take() {
    if (free_.empty()) {
      events_.push_back(std::make_unique<sc_core::sc_event>());
      return static_cast<std::uint32_t>(events_.size() - 1);
    }
    const std::uint32_t slot = free_.back();
    free_.pop_back();
    return slot;
  }
  sc_core::sc_event& event(std::uint32_t slot) { return *events_[slot]; }
  void give_back(std::uint32_t slot) { free_.push_back(slot); }
  void fire(std::uint32_t slot) override { notify_now(*events_[slot]); }

 private:
  std::vector<std::unique_ptr<sc_core::sc_event>> events_;
  std::vector<std::uint32_t> free_;
};

}  // namespace

void sleep_until(TimePs at) {
  static Sleepers* sleepers = new Sleepers();
  const std::uint32_t slot = sleepers->take();
  event_queue().schedule(at, *sleepers, slot);
  sc_core::wait(sleepers->event(slot));
  sleepers->give_back(slot);
}

EventQueue& event_queue() {
  static EventQueue* queue = new EventQueue("podsim_event_queue");
  return *queue;
}

}  // namespace podsim::core
