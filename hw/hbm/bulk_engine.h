// The timing of whole transactions (a DMA descriptor, a packet's payload, a tensor tile) over
// every pseudo-channel of an HBM, without the SystemC kernel: the arithmetic behind hbm::Hbm.
// A transaction is cut at the interleave granularity into chunks; each chunk is a run of
// consecutive bursts in one row of one pseudo-channel (rotating over bank groups in the default
// map) and is scheduled as a unit: its rows are opened (precharge, activate) and its bursts
// placed by the same rules as the FR-FCFS controller's (channel_state.h), without a queue search
// per burst. Transactions are committed in call order; chunks of one transaction on one
// pseudo-channel go in address order.
// Captures: the bank, bank-group, turnaround, bus and refresh rules per burst, row hits, misses
// and conflicts, refresh catch-up across idle time, per-channel statistics.
// Ignores: reordering across transactions (an LT target serves them in call order), write
// batching across transactions (each bulk transaction is one direction already), and read
// data forwarding.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "core/stats.h"
#include "core/units.h"
#include "hw/hbm/address_map.h"
#include "hw/hbm/channel_state.h"
#include "hw/hbm/hbm_config.h"

namespace podsim::hbm {

struct ChannelStats {
  core::Counter reads;   // read bursts
  core::Counter writes;  // write bursts
  core::Counter bytes_read;
  core::Counter bytes_written;
  core::Counter row_hits;       // bursts to an open row
  core::Counter row_misses;     // bursts that activated a closed bank
  core::Counter row_conflicts;  // bursts that closed another row first
  core::Counter refreshes;
  core::Counter busy_ps;  // data bus busy, summed over the channel's pseudo-channels
};

class BulkEngine {
 public:
  // kClosedForm places a chunk's bursts after its first round over the bank groups in closed
  // form (PseudoChannelState::column_rotation) when the address map allows it; kPerBurst
  // evaluates every burst's rules. Both give identical times (tests/hbm/bulk_engine_test.cpp).
  enum class Evaluation { kClosedForm, kPerBurst };

  // Throws std::invalid_argument (naming the key) on a bad configuration.
  explicit BulkEngine(const HbmConfig& config, Evaluation evaluation = Evaluation::kClosedForm);

  // Schedules `length` bytes at `address` (within capacity) arriving at `arrival`; returns the
  // time its last burst's data has moved, plus the front-end latency.
  core::TimePs access(bool write, std::uint64_t address, std::uint64_t length,
                      core::TimePs arrival);

  // Called for every chunk as it is scheduled (the trace's channel tracks); none by default.
  using ChunkObserver = std::function<void(int channel, bool write, std::uint64_t bytes,
                                           core::TimePs start, core::TimePs end)>;
  void observe_chunks(ChunkObserver observer) { observer_ = std::move(observer); }

  const HbmConfig& config() const { return config_; }
  const AddressDecoder& decoder() const { return decoder_; }
  const PseudoChannelState& pseudo_channel(int unit) const {
    return pcs_[static_cast<std::size_t>(unit)];
  }
  ChannelStats& channel_stats(int channel) { return stats_[static_cast<std::size_t>(channel)]; }
  const ChannelStats& channel_stats(int channel) const {
    return stats_[static_cast<std::size_t>(channel)];
  }

 private:
  Cycle run_chunk(const Location& base, std::uint64_t first, std::uint64_t count, bool write,
                  Cycle arrival);
  Cycle run_bursts(PseudoChannelState& pc, const Location& base, std::uint64_t first,
                   std::uint64_t count, bool write, Cycle arrival, int* banks, ChannelStats& stats);
  void refresh_if_due(PseudoChannelState& pc, ChannelStats& stats, Cycle now);
  void close_all(PseudoChannelState& pc, Cycle from);

  HbmConfig config_;
  AddressDecoder decoder_;
  std::vector<PseudoChannelState> pcs_;
  std::vector<ChannelStats> stats_;
  std::int64_t tck_ps_;
  std::uint64_t burst_bytes_;
  int rotation_period_;  // 0: every burst evaluated
  ChunkObserver observer_;
};

// What the banks' rules give a configuration for long streams and one idle access: the figures
// HbmModel::kRate serves every transaction by.
struct StreamTiming {
  core::Bandwidth read;    // a long sequential read stream (refresh included)
  core::Bandwidth write;   // the same for writes
  core::Duration latency;  // one 64-byte read at an idle HBM: front end, ACT, RL, burst
};
// Measured with a BulkEngine on 16 MiB streams of 1 MiB transactions; memoized per configuration
// (a system's chips share one measurement). Thread-compatible only, as the SystemC kernel is.
StreamTiming stream_timing(const HbmConfig& config);

}  // namespace podsim::hbm
