// Upper bounds a system's wiring puts on communication, derived from its configuration alone:
// per-chip scale-up and scale-out bandwidth at line rate and after RoCE v2 framing, the box's
// scale-out total, and the in-box all-reduce algorithm-bandwidth ceiling. Captures link
// arithmetic only ([D] on [S10]'s link figures); ignores congestion, protocol ACK traffic,
// memory bandwidth and engine limits, which the simulation itself accounts for.
#pragma once

#include "core/units.h"
#include "hw/system/system_config.h"

namespace podsim::system {

struct SystemCeilings {
  int chips = 0;
  int chips_per_box = 0;
  int boxes = 0;
  int scale_up_ports_per_chip = 0;
  int scale_out_ports_per_chip = 0;
  int unused_ports_per_chip = 0;
  int scale_out_ports = 0;        // in the whole system
  double roce_efficiency = 0;     // payload share of the line rate at the configured MTU
  core::Bandwidth scale_up_line;  // per chip, one direction
  core::Bandwidth scale_up_goodput;
  core::Bandwidth scale_out_line;  // per chip, one direction
  core::Bandwidth scale_out_goodput;
  core::Bandwidth box_scale_out_line;  // per box, one direction
  // In-box all-reduce algorithm bandwidth bound: every byte of S crosses each chip's scale-up
  // ports 2(n-1)/n times, so algbw <= scale-up goodput x n / (2(n-1)).
  core::Bandwidth all_reduce_algbw_ceiling;
};

SystemCeilings compute_ceilings(const SystemConfig& system);

}  // namespace podsim::system
