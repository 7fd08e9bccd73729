#include "hw/roce/completion_queue.h"

#include "core/kernel.h"

namespace podsim::roce {

std::optional<Completion> CompletionQueue::poll() {
  if (entries_.empty()) return std::nullopt;
  Completion c = entries_.front();
  entries_.pop_front();
  return c;
}

void CompletionQueue::push(const Completion& completion) {
  ++delivered_;
  if (callback_) return callback_(completion);
  entries_.push_back(completion);
  // A delta notification: several completions in one delta wake a waiter once, and a waiter
  // that is itself mid-activation is not skipped.
  core::notify_now(event_);
}

}  // namespace podsim::roce
