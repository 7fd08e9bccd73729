// A completion queue: where the NIC reports finished work requests, as ibv_cq does.
// Captures: in-order delivery per QP, polling, an event for SC_THREAD users and a callback for
// SC_METHOD users (who cannot wait on an event inside one activation).
// Ignores: CQ depth and overrun (the queue grows), moderation and arming (every completion
// notifies), and completion channels.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <systemc>

#include "hw/roce/verbs.h"

namespace podsim::roce {

class CompletionQueue {
 public:
  using Callback = std::function<void(const Completion&)>;

  CompletionQueue() = default;
  CompletionQueue(const CompletionQueue&) = delete;
  CompletionQueue& operator=(const CompletionQueue&) = delete;

  // The oldest completion not yet polled, if any.
  std::optional<Completion> poll();
  std::size_t size() const { return entries_.size(); }
  // Completions delivered so far (polled or not, callback or queue).
  std::uint64_t delivered() const { return delivered_; }
  // Notified (one delta cycle later) whenever a completion is queued.
  const sc_core::sc_event& event() const { return event_; }

  // With a callback set, completions go to it as they happen and are neither queued (a callback
  // user never polls, and a queue nobody drains would only grow) nor notified (a notification
  // would stop the event queue from running ahead of the kernel, for no waiter).
  void set_callback(Callback callback) { callback_ = std::move(callback); }

  // Called by the NIC.
  void push(const Completion& completion);

 private:
  std::deque<Completion> entries_;
  std::uint64_t delivered_ = 0;
  sc_core::sc_event event_;
  Callback callback_;
};

}  // namespace podsim::roce
