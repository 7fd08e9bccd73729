// A per-pseudo-channel FR-FCFS memory controller for request-level traffic (one burst per
// request), stepped one clock at a time: the detailed model the bulk engine is checked against,
// and what the calibration against a cycle-accurate DRAM simulator drives.
// Captures: read and write queues, write draining between a high and a low watermark, open-page
// policy, first-ready first-come-first-served (column hits before row commands, oldest first;
// a row is not closed while a queued request still hits it), at most one row and one column
// command per cycle, all-bank refresh every tREFI (banks precharged, then tRFC), and a fixed
// front-end latency. Writes are posted: they complete when queued.
// Ignores: read-after-write forwarding from the write queue, request merging, address hashing.
#pragma once

#include <cstdint>
#include <vector>

#include "hw/hbm/address_map.h"
#include "hw/hbm/channel_state.h"
#include "hw/hbm/hbm_config.h"

namespace podsim::hbm {

struct Request {
  std::uint64_t id = 0;
  Location location;
  bool write = false;
};

struct ControllerStats {
  std::uint64_t reads = 0, writes = 0;
  std::uint64_t row_hits = 0, row_misses = 0, row_conflicts = 0;
  std::uint64_t refreshes = 0;
  std::uint64_t busy_cycles = 0;  // data bus
};

class Controller {
 public:
  explicit Controller(const HbmConfig& config);

  bool can_accept(bool write) const;
  // Queues a request arriving at `now`; it becomes schedulable after the front-end latency.
  // Returns false (and queues nothing) when its queue is full.
  bool enqueue(const Request& request, Cycle now);

  // One clock: at most one row command (ACT, PRE or REF) and one column command. Each read whose
  // data completes is reported as done(id, cycle after its last beat).
  template <class Done>
  void tick(Cycle now, Done&& done) {
    Completion c = step(now);
    if (c.valid) done(c.id, c.cycle);
  }

  const ControllerStats& stats() const { return stats_; }
  const PseudoChannelState& state() const { return state_; }
  bool draining_writes() const { return draining_; }
  std::size_t queued_reads() const { return reads_.size(); }
  std::size_t queued_writes() const { return writes_.size(); }

 private:
  struct Entry {
    Request request;
    Cycle visible;  // arrival + front-end latency
    bool activated = false, precharged = false;
  };
  struct Completion {
    bool valid = false;
    std::uint64_t id = 0;
    Cycle cycle = 0;
  };
  Completion step(Cycle now);
  bool step_refresh(Cycle now);
  void update_drain_mode();
  Completion issue_column(std::vector<Entry>& queue, Cycle now);
  void issue_row_command(std::vector<Entry>& queue, Cycle now);
  bool row_still_wanted(const std::vector<Entry>& queue, int bank, Cycle now) const;
  int bank_of(const Location& l) const { return state_.bank_index(l.bank_group, l.bank); }

  ControllerConfig config_;
  PseudoChannelState state_;
  std::vector<Entry> reads_, writes_;
  bool draining_ = false;
  bool refresh_pending_ = false;
  ControllerStats stats_;
};

}  // namespace podsim::hbm
