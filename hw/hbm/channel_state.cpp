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
      refresh_due_(config.timing.refi) {
  for (std::size_t i = 0; i < banks_.size(); ++i) {
    banks_[i].group = static_cast<int>(i) / banks_per_group_;
  }
}

Cycle PseudoChannelState::earliest_refresh(Cycle t) const {
  Cycle r = t;
  for (const Bank& b : banks_) r = std::max(r, b.act_ready);  // tRP after PRE, tRC after ACT
  return r;
}

// After the first round each command's bank has its row open since an earlier command of the
// run (tRCD met) and the turnaround rules were met by that earlier, same-direction command, so
// only tCCD_S, tCCD_L and the bus remain: command k waits for max(c[k-1] + step, c[k-period] +
// tCCD_L), step = max(tCCD_S, BL/2). Commands are at least `step` apart, so c[k-1] - c[k-period]
// >= (period - 1) step, and when period x step >= tCCD_L the second term never wins: every
// command follows the previous one by `step`. Only the last command to each bank leaves state
// that a later rule reads (the rest is overwritten or max-ed by it), so only those go through
// column().
Cycle PseudoChannelState::column_rotation(const int* banks, int period, std::uint64_t count,
                                          bool write) {
  const Cycle step = rotation_step();
  const auto p = static_cast<std::uint64_t>(period);
  const std::uint64_t skipped = count > p ? count - p : 0;
  Cycle t = last_col_ + static_cast<Cycle>(skipped + 1) * step;
  Cycle end = bus_free_;
  int slot = static_cast<int>(skipped % p);
  for (std::uint64_t j = skipped; j < count; ++j, t += step) {
    end = column(banks[slot], write, t);
    slot = slot + 1 == period ? 0 : slot + 1;
  }
  return end;
}

void PseudoChannelState::refresh(Cycle t) {
  for (Bank& b : banks_) b.act_ready = std::max(b.act_ready, t + t_.rfc);  // tRFC
}

bool PseudoChannelState::any_open() const {
  return std::any_of(banks_.begin(), banks_.end(),
                     [](const Bank& b) { return b.open_row != kClosed; });
}

}  // namespace podsim::hbm
