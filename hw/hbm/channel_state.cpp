#include "hw/hbm/channel_state.h"

#include <algorithm>

namespace podsim::hbm {

// Sources of the rules: [H1] JESD235 defines each parameter and its scope (bank, bank group,
// pseudo-channel); [H2] DRAMsim3's src/timing.cc combines them the same way (read_to_write,
// write_to_read_l/s, write_to_precharge); [H3] Ramulator2's HBM2 counts them per pseudo-channel.

PseudoChannelState::PseudoChannelState(const HbmConfig& config)
    : t_(config.timing),
      burst_(config.geometry.burst_length / 2),
      banks_per_group_(config.geometry.banks_per_group),
      banks_(static_cast<std::size_t>(config.geometry.banks())),
      groups_(static_cast<std::size_t>(config.geometry.bank_groups)),
      refresh_due_(config.timing.refi) {}

Cycle PseudoChannelState::earliest_activate(int bank, Cycle t) const {
  const Bank& b = banks_[static_cast<std::size_t>(bank)];
  const BankGroup& g = groups_[static_cast<std::size_t>(bank_group_of(bank))];
  return std::max({t,
                   b.act_ready,                           // tRC, tRP, tRFC
                   last_act_ + t_.rrd_s,                  // tRRD_S: any bank group
                   g.last_act + t_.rrd_l,                 // tRRD_L: same bank group
                   recent_acts_[oldest_act_] + t_.faw});  // tFAW: a fifth ACT waits
}

Cycle PseudoChannelState::earliest_precharge(int bank, Cycle t) const {
  return std::max(t, banks_[static_cast<std::size_t>(bank)].pre_ready);  // tRAS, tRTP, tWR
}

Cycle PseudoChannelState::earliest_column(int bank, bool write, Cycle t) const {
  const Bank& b = banks_[static_cast<std::size_t>(bank)];
  const BankGroup& g = groups_[static_cast<std::size_t>(bank_group_of(bank))];
  Cycle c = std::max({t,
                      b.col_ready,                            // tRCD
                      g.last_col + t_.ccd_l,                  // tCCD_L: same bank group
                      last_col_ + t_.ccd_s,                   // tCCD_S: any bank group
                      bus_free_ - (write ? t_.wl : t_.rl)});  // data bus: one burst at a time
  if (write) return std::max(c, last_read_ + t_.rtw);         // tRTW: read to write turnaround
  return std::max({c, g.last_write_end + t_.wtr_l,            // tWTR_L: same bank group
                   last_write_end_ + t_.wtr_s});              // tWTR_S: any bank group
}

Cycle PseudoChannelState::earliest_refresh(Cycle t) const {
  Cycle r = t;
  for (const Bank& b : banks_) r = std::max(r, b.act_ready);  // tRP after PRE, tRC after ACT
  return r;
}

void PseudoChannelState::activate(int bank, std::uint32_t row, Cycle t) {
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

void PseudoChannelState::precharge(int bank, Cycle t) {
  Bank& b = banks_[static_cast<std::size_t>(bank)];
  b.open_row = kClosed;
  b.act_ready = std::max(b.act_ready, t + t_.rp);
}

Cycle PseudoChannelState::column(int bank, bool write, Cycle t) {
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

void PseudoChannelState::refresh(Cycle t) {
  for (Bank& b : banks_) b.act_ready = std::max(b.act_ready, t + t_.rfc);  // tRFC
}

bool PseudoChannelState::any_open() const {
  return std::any_of(banks_.begin(), banks_.end(),
                     [](const Bank& b) { return b.open_row != kClosed; });
}

}  // namespace podsim::hbm
