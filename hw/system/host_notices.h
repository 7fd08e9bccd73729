// What the hosts of a system tell one another: software that spans chips (the collectives
// library: a rank has finished, so the collective or its next phase may go on) posts a notice
// from one chip's host, and it takes effect at every host a fixed delay later, in the same order
// everywhere. Nothing that spans chips happens at once, which is what lets a run be split among
// processes (sims/parallel): a notice sent in one window of simulated time takes effect after it
// ends, like a frame on a cut cable.
// Captures: the delay and a fixed order among notices due at one time (by chip, then by each
// chip's sequence number modulo 64), the same whether they were posted here or handed over from
// another process, as long as no chip has more than 64 due at one time (software here posts one
// per rank and collective). Ignores: the host network's bandwidth and contention (a notice is a few
// bytes).
#pragma once

#include <cstdint>
#include <functional>
#include <systemc>
#include <unordered_map>
#include <vector>

#include "core/event_queue.h"
#include "core/units.h"

namespace podsim::system {

struct Notice {
  std::uint64_t channel = 0;  // what it is about: HostNotices::open's number
  std::int32_t chip = 0;      // whose host sent it
  std::uint32_t value = 0;    // what it says, for the channel to read
  core::TimePs sent_ps = 0, due_ps = 0;
  std::uint64_t key = 0;  // its place among the notices due at due_ps
};

// The handlers run in a method of the kernel at the notice's time, not in the event queue's
// callback: they start host programs and collectives, which the queue must not run ahead of.
class HostNotices : public sc_core::sc_module, private core::Timed {
 public:
  using Handler = std::function<void(const Notice&)>;

  HostNotices(sc_core::sc_module_name name, core::EventQueue& queue, int chips);
  HostNotices(const HostNotices&) = delete;
  HostNotices& operator=(const HostNotices&) = delete;

  // A channel whose notices go to `handler`; numbered in the order opened, so every process that
  // runs the same software numbers them alike.
  std::uint64_t open(Handler handler);
  // No notice may come on it any more.
  void close(std::uint64_t channel);
  // From `chip`'s host now: `value` on `channel`, taking effect everywhere `delay_ps` later.
  void post(std::uint64_t channel, int chip, std::uint32_t value, core::TimePs delay_ps);

  // A parallel run's: where each notice posted here also goes (to the other processes).
  void forward_to(std::function<void(const Notice&)> outbox) { outbox_ = std::move(outbox); }
  // A notice posted in another process, due after now.
  void deliver(const Notice& notice);
  std::uint64_t posted() const { return posted_; }

 private:
  // A chip's notices due at one time keep distinct places as long as it has at most this many.
  static constexpr std::uint64_t kKeysPerChip = 64;
  SC_HAS_PROCESS(HostNotices);
  void fire(std::uint32_t tag) override;
  void schedule(const Notice& notice);
  void handle_due();

  core::EventQueue& queue_;
  std::uint64_t first_key_;
  std::vector<std::uint64_t> sent_by_chip_;
  std::unordered_map<std::uint64_t, Handler> channels_;
  std::uint64_t next_channel_ = 0;
  std::vector<Notice> waiting_;  // by tag
  std::vector<std::uint32_t> free_;
  std::vector<Notice> due_;  // fired, for handle_due, in order
  sc_core::sc_event due_event_;
  std::function<void(const Notice&)> outbox_;
  std::uint64_t posted_ = 0;
};

}  // namespace podsim::system
