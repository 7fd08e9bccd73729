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

#include <algorithm>
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

  // The rest of a run of same-direction column commands that has issued one command to each of
  // `period` banks (banks[0..period), distinct bank groups, rows open) and goes on rotating over
  // them: `count` further commands, the j-th to banks[j % period]. Valid when
  // rotation_closed_form(period); returns what column() returns for the last one.
  Cycle column_rotation(const int* banks, int period, std::uint64_t count, bool write);
  bool rotation_closed_form(int period) const { return period * rotation_step() >= t_.ccd_l; }

  static constexpr std::int64_t kClosed = -1;
  std::int64_t open_row(int bank) const { return banks_[static_cast<std::size_t>(bank)].open_row; }
  bool any_open() const;
  int bank_count() const { return static_cast<int>(banks_.size()); }
  int bank_group_of(int bank) const { return banks_[static_cast<std::size_t>(bank)].group; }
  int bank_index(int bank_group, int bank) const { return bank_group * banks_per_group_ + bank; }

  Cycle refresh_due() const { return refresh_due_; }
  void set_refresh_due(Cycle due) { refresh_due_ = due; }
  Cycle last_column() const { return last_col_; }
  Cycle bus_free() const { return bus_free_; }
  const HbmTiming& timing() const { return t_; }
  int burst_cycles() const { return burst_; }

 private:
  Cycle rotation_step() const { return std::max<Cycle>(t_.ccd_s, burst_); }

  struct Bank {
    int group = 0;  // its bank group, kept to avoid a division per command
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

// The per-command rules are defined here so that both schedulers inline them.

inline Cycle PseudoChannelState::earliest_activate(int bank, Cycle t) const {
  const Bank& b = banks_[static_cast<std::size_t>(bank)];
  const BankGroup& g = groups_[static_cast<std::size_t>(bank_group_of(bank))];
  // Two-argument maxima: branch-free, unlike a loop over an initializer list.
  const Cycle bank_rules = std::max(t, b.act_ready);                               // tRC, tRP, tRFC
  const Cycle rrd = std::max(last_act_ + t_.rrd_s, g.last_act + t_.rrd_l);         // tRRD_S, tRRD_L
  return std::max(std::max(bank_rules, rrd), recent_acts_[oldest_act_] + t_.faw);  // tFAW
}

inline Cycle PseudoChannelState::earliest_precharge(int bank, Cycle t) const {
  return std::max(t, banks_[static_cast<std::size_t>(bank)].pre_ready);  // tRAS, tRTP, tWR
}

inline Cycle PseudoChannelState::earliest_column(int bank, bool write, Cycle t) const {
  const Bank& b = banks_[static_cast<std::size_t>(bank)];
  const BankGroup& g = groups_[static_cast<std::size_t>(bank_group_of(bank))];
  const Cycle ccd = std::max(g.last_col + t_.ccd_l, last_col_ + t_.ccd_s);  // tCCD_L, tCCD_S
  const Cycle bus = bus_free_ - (write ? t_.wl : t_.rl);  // data bus: one burst at a time
  const Cycle turnaround = write ? last_read_ + t_.rtw    // tRTW: read to write
                                 : std::max(g.last_write_end + t_.wtr_l,                // tWTR_L
                                            last_write_end_ + t_.wtr_s);                // tWTR_S
  return std::max(std::max(std::max(t, b.col_ready), std::max(ccd, bus)), turnaround);  // tRCD
}

inline void PseudoChannelState::activate(int bank, std::uint32_t row, Cycle t) {
  Bank& b = banks_[static_cast<std::size_t>(bank)];
  b.open_row = row;
  b.col_ready = t + t_.rcd;
  b.pre_ready = std::max(b.pre_ready, t + t_.ras);
  b.act_ready = std::max(b.act_ready, t + t_.rc);
  groups_[static_cast<std::size_t>(bank_group_of(bank))].last_act = t;
  last_act_ = t;
  recent_acts_[oldest_act_] = t;
  oldest_act_ = (oldest_act_ + 1) % recent_acts_.size();
}

inline void PseudoChannelState::precharge(int bank, Cycle t) {
  Bank& b = banks_[static_cast<std::size_t>(bank)];
  b.open_row = kClosed;
  b.act_ready = std::max(b.act_ready, t + t_.rp);
}

inline Cycle PseudoChannelState::column(int bank, bool write, Cycle t) {
  Bank& b = banks_[static_cast<std::size_t>(bank)];
  BankGroup& g = groups_[static_cast<std::size_t>(bank_group_of(bank))];
  g.last_col = t;
  last_col_ = t;
  if (write) {
    bus_free_ = t + t_.wl + burst_;
    b.pre_ready = std::max(b.pre_ready, bus_free_ + t_.wr);  // tWR after the data
    g.last_write_end = bus_free_;
    last_write_end_ = bus_free_;
  } else {
    bus_free_ = t + t_.rl + burst_;
    b.pre_ready = std::max(b.pre_ready, t + t_.rtp);  // tRTP
    last_read_ = t;
  }
  return bus_free_;
}

}  // namespace podsim::hbm
