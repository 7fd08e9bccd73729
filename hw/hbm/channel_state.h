// The state of one pseudo-channel's banks, bank groups and data bus, and the DRAM timing rules
// that say when a command may issue. Both schedulers (the FR-FCFS controller for request-level
// traffic and the bulk engine for whole transactions) ask these rules, so each rule is written
// once, here.
// Captures: open rows, tRCD, tRP, tRAS, tRC, RL, WL, tCCD_S/L, tRRD_S/L, tFAW, tWTR_S/L, tRTW,
// tRTP, tWR, data-bus occupancy (BL/2 cycles per burst) and all-bank refresh (tREFI, tRFC).
// Ignores: the command buses' one-command-per-cycle limit (HBM has separate row and column
// buses; the FR-FCFS controller issues at most one of each per cycle, the bulk engine does not
// check), power-down, per-bank refresh and the 2-cycle ACT command.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "hw/hbm/hbm_config.h"

namespace podsim::hbm {

using Cycle = std::int64_t;
constexpr Cycle kLongAgo = -(Cycle{1} << 40);

class PseudoChannelState {
 public:
  explicit PseudoChannelState(const HbmConfig& config);

  // Earliest cycle, not before `t`, at which the command may issue to `bank` (bank group x
  // banks_per_group + bank). activate needs the bank closed, column its row open, refresh every
  // bank closed; the callers ensure that.
  Cycle earliest_activate(int bank, Cycle t) const;
  Cycle earliest_precharge(int bank, Cycle t) const;
  Cycle earliest_column(int bank, bool write, Cycle t) const;
  Cycle earliest_refresh(Cycle t) const;

  void activate(int bank, std::uint32_t row, Cycle t);
  void precharge(int bank, Cycle t);
  // Returns the cycle after the burst's last beat.
  Cycle column(int bank, bool write, Cycle t);
  void refresh(Cycle t);

  static constexpr std::int64_t kClosed = -1;
  std::int64_t open_row(int bank) const { return banks_[static_cast<std::size_t>(bank)].open_row; }
  bool any_open() const;
  int bank_count() const { return static_cast<int>(banks_.size()); }
  int bank_group_of(int bank) const { return bank / banks_per_group_; }
  int bank_index(int bank_group, int bank) const { return bank_group * banks_per_group_ + bank; }

  Cycle refresh_due() const { return refresh_due_; }
  void set_refresh_due(Cycle due) { refresh_due_ = due; }
  Cycle last_column() const { return last_col_; }
  Cycle bus_free() const { return bus_free_; }
  const HbmTiming& timing() const { return t_; }
  int burst_cycles() const { return burst_; }

 private:
  struct Bank {
    std::int64_t open_row = kClosed;
    Cycle act_ready = kLongAgo;  // tRC after ACT, tRP after PRE, tRFC after REF
    Cycle pre_ready = kLongAgo;  // tRAS after ACT, tRTP after RD, tWR after write data
    Cycle col_ready = kLongAgo;  // tRCD after ACT
  };
  struct BankGroup {
    Cycle last_act = kLongAgo;
    Cycle last_col = kLongAgo;
    Cycle last_write_end = kLongAgo;
  };

  HbmTiming t_;
  int burst_;  // data-bus cycles of one burst: BL / 2
  int banks_per_group_;
  std::vector<Bank> banks_;
  std::vector<BankGroup> groups_;
  Cycle last_act_ = kLongAgo, last_col_ = kLongAgo, last_read_ = kLongAgo;
  Cycle last_write_end_ = kLongAgo, bus_free_ = kLongAgo;
  std::array<Cycle, 4> recent_acts_{kLongAgo, kLongAgo, kLongAgo, kLongAgo};  // ring, for tFAW
  std::size_t oldest_act_ = 0;
  Cycle refresh_due_;
};

}  // namespace podsim::hbm
