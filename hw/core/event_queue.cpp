#include "hw/core/event_queue.h"

#include <algorithm>

#include "hw/core/kernel.h"

namespace podsim::core {

EventQueue::EventQueue(sc_core::sc_module_name name) : sc_module(name) {
  SC_METHOD(run);
  sensitive << wake_;
  dont_initialize();
}

void EventQueue::schedule(TimePs at, Timed& target, std::uint32_t tag) {
  const TimePs now = now_ps();
  at = std::max(at, now);
  heap_.push_back({at, next_order_++, &target, tag});
  std::push_heap(heap_.begin(), heap_.end(), Later{});
  // Inside run() the loop picks the entry up; otherwise wake the process in time for it.
  if (!running_ && at < armed_ps_) {
    armed_ps_ = at;
    wake_.notify(to_sc_time(Duration{static_cast<std::int64_t>(at - now)}));
  }
}

void EventQueue::run() {
  const TimePs now = now_ps();
  armed_ps_ = ~TimePs{0};
  running_ = true;
  while (!heap_.empty() && heap_.front().at <= now) {
    std::pop_heap(heap_.begin(), heap_.end(), Later{});
    const Entry e = heap_.back();
    heap_.pop_back();
    ++fired_;
    e.target->fire(e.tag);
  }
  running_ = false;
  arm(now);
}

void EventQueue::arm(TimePs now) {
  if (heap_.empty()) return;
  armed_ps_ = heap_.front().at;
  wake_.notify(to_sc_time(Duration{static_cast<std::int64_t>(armed_ps_ - now)}));
}

EventQueue& event_queue() {
  static EventQueue* queue = new EventQueue("podsim_event_queue");
  return *queue;
}

}  // namespace podsim::core
