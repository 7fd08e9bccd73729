// How long an IPU takes over a layer, and whether the layer's working set fits its memory.
// Graphcore does not publish the tile's pipeline, so a layer is a roofline over the chip's
// bulk-synchronous supersteps: each superstep computes from tile memory, syncs every tile, then
// exchanges data between tiles. The work is taken as spread evenly over the supersteps and over
// the tiles, so the per-superstep maxima add up to the maxima of the totals.
// Captures: the FP16.16 peak scaled by an efficiency the caller knows (matmuls near it,
// element-wise work far from it), the tiles' memory bandwidth, the IPU-Exchange's bandwidth and
// latency, chip-wide or Sync-Link syncs; In-Processor-Memory against a working set, and the
// time to bring in from Streaming Memory what does not fit.
// Ignores: load imbalance between tiles (the slowest tile sets a superstep's length), compute
// overlapping the exchange, exchanges that leave the chip (IPU-Links: ipu_wiring.h), code size
// growth with the exchange's schedule, and the tiles' memory layout (banks, alignment).
#pragma once

#include <cstdint>

#include "core/units.h"
#include "hw/ipulink/ipu_config.h"

namespace podsim::ipulink {

// Which sync ends each superstep: the chip's own, or one across IPUs over the Sync-Links.
enum class SyncScope { kChip, kSyncLink };

// A layer's work on one IPU; byte counts are totals over every tile and superstep.
struct PhaseWork {
  double flops = 0;
  double memory_bytes = 0;  // read and written in tile memory by the compute phases
  double exchange_bytes = 0;
  int supersteps = 1;
  double efficiency = 1;  // of the FP16.16 peak the layer's compute reaches
  SyncScope sync = SyncScope::kChip;
};

// Which term sets the layer's time (the largest of the four).
enum class Limit { kFlops, kMemory, kExchange, kSync };

struct PhaseTimes {
  core::TimePs compute_ps = 0;   // the larger of the flops and memory terms
  core::TimePs exchange_ps = 0;  // bytes over the exchange, plus its latency per superstep
  core::TimePs sync_ps = 0;      // one sync per superstep
  Limit limit = Limit::kFlops;
  core::TimePs total_ps() const { return compute_ps + exchange_ps + sync_ps; }
};

// Throws std::invalid_argument naming the field when the work is negative, has no superstep or
// its efficiency is outside (0, 1], or when the configuration is invalid.
PhaseTimes bsp_time(const IpuConfig& ipu, const PhaseWork& work);

// What must live in In-Processor-Memory for a layer or a model.
struct WorkingSet {
  double weight_bytes = 0;
  double activation_bytes = 0;
  double optimizer_bytes = 0;  // optimizer state, gradients kept for accumulation
  double code_bytes = 0;       // the tiles' programs and exchange buffers
  double total() const { return weight_bytes + activation_bytes + optimizer_bytes + code_bytes; }
};

struct MemoryFit {
  double required_bytes = 0;
  double available_bytes = 0;
  bool fits = false;
  double excess_bytes = 0;     // what would have to live in Streaming Memory
  core::TimePs stream_ps = 0;  // bringing the excess in once at the Streaming Memory rate
};

// Whether `set` fits one IPU's In-Processor-Memory; the caller decides whether to refuse the run
// or to pay stream_ps per pass. Throws std::invalid_argument on negative byte counts.
MemoryFit memory_fit(const IpuConfig& ipu, const WorkingSet& set);

}  // namespace podsim::ipulink
