#include "hw/core/event_queue.h"

#include <algorithm>

#include "hw/core/kernel.h"

namespace podsim::core {

EventQueue::EventQueue(sc_core::sc_module_name name) : sc_module(name) {
  SC_METHOD(run);
  sensitive << wake_;
  dont_initialize();
}

void EventQueue::schedule(TimePs at, Timed& target, std::uint32_t tag, const void* hot) {
  const TimePs now = now_ps();
  at = std::max(at, now);
  push({at, (next_order_++ << kTagBits) | tag, &target, hot});
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
    const Entry e = pop();
    if (!heap_.empty()) {
      __builtin_prefetch(heap_.front().target);
      if (heap_.front().hot) __builtin_prefetch(heap_.front().hot);
    }
    ++fired_;
    e.target->fire(static_cast<std::uint32_t>(e.order_tag & ((1u << kTagBits) - 1)));
  }
  running_ = false;
  arm(now);
}

void EventQueue::push(const Entry& e) {
  std::size_t i = heap_.size();
  heap_.push_back(e);
  while (i > 0) {
    const std::size_t parent = (i - 1) / 4;
    if (!before(e, heap_[parent])) break;
    heap_[i] = heap_[parent];
    i = parent;
  }
  heap_[i] = e;
}

EventQueue::Entry EventQueue::pop() {
  const Entry top = heap_.front();
  const Entry last = heap_.back();
  heap_.pop_back();
  const std::size_t n = heap_.size();
  std::size_t i = 0;
  while (true) {
    const std::size_t first = 4 * i + 1;
    if (first >= n) break;
    std::size_t best = first;
    const std::size_t end = std::min(first + 4, n);
    for (std::size_t c = first + 1; c < end; ++c) {
      if (before(heap_[c], heap_[best])) best = c;
    }
    if (!before(heap_[best], last)) break;
    heap_[i] = heap_[best];
    i = best;
  }
  if (n > 0) heap_[i] = last;
  return top;
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
