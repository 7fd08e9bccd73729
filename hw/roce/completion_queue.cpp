#include "hw/roce/completion_queue.h"

namespace podsim::roce {

std::optional<Completion> CompletionQueue::poll() {
  if (entries_.empty()) return std::nullopt;
  Completion c = entries_.front();
  entries_.pop_front();
  return c;
}

void CompletionQueue::push(const Completion& completion) {
  ++delivered_;
  // A delta notification: several completions in one delta wake a waiter once, and a waiter
  // that is itself mid-activation is not skipped.
  event_.notify(sc_core::SC_ZERO_TIME);
  if (callback_) {
    callback_(completion);
  } else {
    entries_.push_back(completion);
  }
}

}  // namespace podsim::roce
