// Glue between podsim's plain time types and the SystemC kernel (whose resolution stays at the
// default 1 ps, so sc_time::value() is picoseconds).
#pragma once

#include <systemc>

#include "hw/core/units.h"

namespace podsim::core {

inline TimePs now_ps() { return sc_core::sc_time_stamp().value(); }

inline sc_core::sc_time to_sc_time(Duration d) {
  return sc_core::sc_time::from_value(static_cast<sc_dt::uint64>(d.ps));
}

inline Duration to_duration(const sc_core::sc_time& t) {
  return Duration{static_cast<std::int64_t>(t.value())};
}

}  // namespace podsim::core
