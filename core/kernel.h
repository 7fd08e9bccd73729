// Glue between podsim's plain time types and the SystemC kernel (whose resolution stays at the
// default 1 ps, so sc_time::value() is picoseconds).
#pragma once

#include <systemc>

#include "core/units.h"

namespace podsim::core {

namespace detail {
// The event queue's time while it runs callbacks (ahead of the kernel's, under temporal
// decoupling); zero when no callback runs. Written only by EventQueue.
inline TimePs queue_now_ps = 0;
// Set when a callback notifies a kernel event, so the queue looks again at how far it may run
// ahead.
inline bool kernel_touched = false;
}  // namespace detail

// The current simulated time: a callback's own when the event queue runs ahead of the kernel.
inline TimePs now_ps() {
  return detail::queue_now_ps != 0 ? detail::queue_now_ps : sc_core::sc_time_stamp().value();
}

inline sc_core::sc_time to_sc_time(Duration d) {
  return sc_core::sc_time::from_value(static_cast<sc_dt::uint64>(d.ps));
}

inline Duration to_duration(const sc_core::sc_time& t) {
  return Duration{static_cast<std::int64_t>(t.value())};
}

// Notifies `event` at now_ps(): one delta cycle later, as notify(SC_ZERO_TIME) does. From a
// callback running ahead of the kernel, the event queue holds the notification until the kernel
// reaches the callback's time and then issues it the same way, in the same order: processes woken
// together then run in the same order either way (timed notifications of one time would leave
// it to the kernel's heap, which running ahead fills differently). Callbacks must reach the
// kernel only this way, with an event that lives until the kernel has reached their time (a
// held notification, unlike a kernel one, does not go with its event).
void notify_now(sc_core::sc_event& event);

// Suspends the calling thread until `at` (now, if past). Threads waking at one time run in an
// order fixed by when they went to sleep (they are woken through the event queue), not by the
// kernel's heap.
void sleep_until(TimePs at);
// Suspends the calling thread for `d`, as sleep_until does.
inline void sleep(Duration d) { sleep_until(now_ps() + static_cast<TimePs>(d.ps)); }

}  // namespace podsim::core
