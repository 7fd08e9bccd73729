#include "hw/hbm/controller.h"

#include <algorithm>

namespace podsim::hbm {

Controller::Controller(const HbmConfig& config) : config_(config.controller), state_(config) {
  reads_.reserve(static_cast<std::size_t>(config_.read_queue));
  writes_.reserve(static_cast<std::size_t>(config_.write_queue));
}

bool Controller::can_accept(bool write) const {
  return write ? writes_.size() < static_cast<std::size_t>(config_.write_queue)
               : reads_.size() < static_cast<std::size_t>(config_.read_queue);
}

bool Controller::enqueue(const Request& request, Cycle now) {
  if (!can_accept(request.write)) return false;
  (request.write ? writes_ : reads_).push_back(Entry{request, now + config_.frontend_cycles});
  return true;
}

Controller::Completion Controller::step(Cycle now) {
  if (step_refresh(now)) return {};
  update_drain_mode();
  std::vector<Entry>& queue = draining_ ? writes_ : reads_;
  const Completion done = issue_column(queue, now);
  issue_row_command(queue, now);
  return done;
}

// A due refresh stops new commands; open banks are precharged as soon as their rules allow, then
// the refresh issues ([H2] does the same: refresh first, as soon as possible).
bool Controller::step_refresh(Cycle now) {
  if (!refresh_pending_ && now >= state_.refresh_due()) refresh_pending_ = true;
  if (!refresh_pending_) return false;
  if (state_.any_open()) {
    for (int bank = 0; bank < state_.bank_count(); ++bank) {
      if (state_.open_row(bank) != PseudoChannelState::kClosed &&
          state_.earliest_precharge(bank, now) <= now) {
        state_.precharge(bank, now);
        break;
      }
    }
  } else if (state_.earliest_refresh(now) <= now) {
    state_.refresh(now);
    state_.set_refresh_due(state_.refresh_due() + state_.timing().refi);
    refresh_pending_ = false;
    ++stats_.refreshes;
  }
  return true;
}

// Writes wait in their queue until it reaches the high watermark (or nothing else is left to
// do), then drain down to the low watermark, so the bus turns around once per batch.
void Controller::update_drain_mode() {
  const auto writes = static_cast<int>(writes_.size());
  if (!draining_) {
    draining_ = writes >= config_.write_high_watermark || (reads_.empty() && writes > 0);
  } else {
    draining_ = writes > 0 && !(writes <= config_.write_low_watermark && !reads_.empty());
  }
}

// First ready: the oldest request whose row is open and whose column command may issue now.
Controller::Completion Controller::issue_column(std::vector<Entry>& queue, Cycle now) {
  for (auto it = queue.begin(); it != queue.end(); ++it) {
    if (it->visible > now) continue;
    const Request& r = it->request;
    const int bank = bank_of(r.location);
    if (state_.open_row(bank) != r.location.row) continue;
    if (state_.earliest_column(bank, r.write, now) > now) continue;
    const Cycle end = state_.column(bank, r.write, now);
    stats_.busy_cycles += static_cast<std::uint64_t>(state_.burst_cycles());
    ++(r.write ? stats_.writes : stats_.reads);
    ++(it->precharged ? stats_.row_conflicts : it->activated ? stats_.row_misses : stats_.row_hits);
    const Completion c{!r.write, r.id, end};
    queue.erase(it);
    return c;
  }
  return {};
}

// Otherwise the oldest request that needs a row command gets it, if its rules allow it now.
void Controller::issue_row_command(std::vector<Entry>& queue, Cycle now) {
  for (Entry& e : queue) {
    if (e.visible > now) continue;
    const int bank = bank_of(e.request.location);
    const std::int64_t open = state_.open_row(bank);
    if (open == e.request.location.row) continue;
    if (open == PseudoChannelState::kClosed) {
      if (state_.earliest_activate(bank, now) > now) continue;
      state_.activate(bank, e.request.location.row, now);
      e.activated = true;
      return;
    }
    if (row_still_wanted(queue, bank, now)) continue;
    if (state_.earliest_precharge(bank, now) > now) continue;
    state_.precharge(bank, now);
    e.precharged = true;
    return;
  }
}

bool Controller::row_still_wanted(const std::vector<Entry>& queue, int bank, Cycle now) const {
  const std::int64_t open = state_.open_row(bank);
  return std::any_of(queue.begin(), queue.end(), [&](const Entry& e) {
    return e.visible <= now && bank_of(e.request.location) == bank &&
           e.request.location.row == open;
  });
}

}  // namespace podsim::hbm
