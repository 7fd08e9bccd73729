#include "hw/system/host_notices.h"

#include <fmt/format.h>

#include <stdexcept>
#include <utility>

#include "core/kernel.h"

namespace podsim::system {

HostNotices::HostNotices(sc_core::sc_module_name name, core::EventQueue& queue, int chips)
    : sc_module(name),
      queue_(queue),
      first_key_(queue.take_keys(static_cast<std::uint64_t>(chips) * kKeysPerChip)),
      sent_by_chip_(static_cast<std::size_t>(chips), 0) {
  SC_METHOD(handle_due);
  sensitive << due_event_;
  dont_initialize();
}

std::uint64_t HostNotices::open(Handler handler) {
  channels_.emplace(next_channel_, std::move(handler));
  return next_channel_++;
}

void HostNotices::close(std::uint64_t channel) { channels_.erase(channel); }

void HostNotices::post(std::uint64_t channel, int chip, std::uint32_t value,
                       core::TimePs delay_ps) {
  if (delay_ps == 0) throw std::logic_error("a host notice takes time to arrive");
  auto& sent = sent_by_chip_.at(static_cast<std::size_t>(chip));
  Notice n;
  n.channel = channel;
  n.chip = chip;
  n.value = value;
  n.sent_ps = core::now_ps();
  n.due_ps = n.sent_ps + delay_ps;
  n.key = first_key_ + static_cast<std::uint64_t>(chip) * kKeysPerChip + sent++ % kKeysPerChip;
  ++posted_;
  schedule(n);
  if (outbox_) outbox_(n);
}

void HostNotices::deliver(const Notice& notice) {
  if (notice.due_ps <= core::now_ps() || notice.chip < 0 ||
      static_cast<std::size_t>(notice.chip) >= sent_by_chip_.size()) {
    throw std::runtime_error(
        fmt::format("a host notice from another process is malformed or late (chip {}, due {} "
                    "ps, now {} ps)",
                    notice.chip, notice.due_ps, core::now_ps()));
  }
  schedule(notice);
}

void HostNotices::schedule(const Notice& notice) {
  std::uint32_t tag = 0;
  if (free_.empty()) {
    tag = static_cast<std::uint32_t>(waiting_.size());
    waiting_.push_back(notice);
  } else {
    tag = free_.back();
    free_.pop_back();
    waiting_[tag] = notice;
  }
  queue_.schedule_keyed(notice.due_ps, *this, tag, notice.key);
}

void HostNotices::fire(std::uint32_t tag) {
  due_.push_back(waiting_[tag]);
  free_.push_back(tag);
  if (due_.size() == 1) core::notify_now(due_event_);
}

void HostNotices::handle_due() {
  // Taken first: a handler that throws leaves no notice behind to stop the next ones.
  const std::vector<Notice> due = std::exchange(due_, {});
  for (const Notice& n : due) {
    const auto it = channels_.find(n.channel);
    if (it == channels_.end()) {
      throw std::logic_error(
          fmt::format("a host notice on channel {}, which is closed", n.channel));
    }
    // The handler may open or close channels.
    const Handler handler = it->second;
    handler(n);
  }
}

}  // namespace podsim::system
