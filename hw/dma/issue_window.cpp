#include "hw/dma/issue_window.h"

#include <algorithm>
#include <stdexcept>

namespace podsim::dma {

IssueWindow::IssueWindow(int outstanding, core::Bandwidth rate) : rate_(rate) {
  if (outstanding < 1) throw std::invalid_argument("IssueWindow: outstanding must be at least 1");
  if (!(rate.bits_per_second > 0))
    throw std::invalid_argument("IssueWindow: rate must be positive");
  slots_.resize(static_cast<std::size_t>(outstanding));
}

void IssueWindow::start(core::TimePs at) {
  std::fill(slots_.begin(), slots_.end(), Slot{});
  next_ = 0;
  next_issue_ = last_done_ = at;
  reading_ = 0;
}

std::optional<core::TimePs> IssueWindow::earliest() const {
  const Slot& slot = slots_[next_];
  if (slot.reading) return std::nullopt;
  return std::max(next_issue_, slot.done);
}

int IssueWindow::issue(core::TimePs at, std::uint64_t bytes) {
  const auto slot = static_cast<int>(next_);
  slots_[next_].reading = true;
  ++reading_;
  next_issue_ = at + static_cast<core::TimePs>(rate_.time_for(bytes).ps);
  next_ = (next_ + 1) % slots_.size();
  return slot;
}

void IssueWindow::written(int slot, core::TimePs done) {
  Slot& s = slots_.at(static_cast<std::size_t>(slot));
  if (!s.reading) throw std::logic_error("IssueWindow::written: the slot has no burst reading");
  s.reading = false;
  s.done = done;
  --reading_;
  last_done_ = std::max(last_done_, done);
}

int IssueWindow::writing(core::TimePs now) const {
  return static_cast<int>(std::count_if(
      slots_.begin(), slots_.end(), [now](const Slot& s) { return !s.reading && s.done > now; }));
}

}  // namespace podsim::dma
