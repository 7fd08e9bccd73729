// The pacing rule of one DMA engine, as plain arithmetic: burst k issues at
//   max(issue of burst k-1 + its bytes / engine bandwidth, completion of burst k-N)
// where N is the number of bursts the engine keeps in flight, and a burst's write goes out only
// once its reads have returned. A single engine thus streams at the lower of its own bandwidth
// and what the memory path gives, and pays memory latency once per job rather than per burst
// (as long as N bursts cover bandwidth x latency).
// Captures: the issue times, the N slots (a slot is busy from a burst's issue to its write's
// completion), the counts of reads and writes in flight. Ignores: separate read and write
// limits (one window covers both) and per-request overheads.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "core/units.h"

namespace podsim::dma {

class IssueWindow {
 public:
  // Throws std::invalid_argument unless outstanding >= 1 and the rate is positive.
  IssueWindow(int outstanding, core::Bandwidth rate);

  // A new job whose first burst may issue at `at`: every slot free.
  void start(core::TimePs at);
  // The slot the next burst takes.
  int next_slot() const { return static_cast<int>(next_); }
  // When the next burst may issue; nullopt while its slot's burst is still reading (its write,
  // and so its completion time, is not known yet).
  std::optional<core::TimePs> earliest() const;
  // The next burst issues at `at` (not before earliest()) with `bytes`; returns its slot.
  int issue(core::TimePs at, std::uint64_t bytes);
  // The burst in `slot` issued its write, which completes at `done`.
  void written(int slot, core::TimePs done);

  int reading() const { return reading_; }
  int writing(core::TimePs now) const;
  // When the latest write issued so far completes (the job's start before any).
  core::TimePs last_done() const { return last_done_; }

 private:
  struct Slot {
    bool reading = false;
    core::TimePs done = 0;
  };
  std::vector<Slot> slots_;
  core::Bandwidth rate_;
  std::size_t next_ = 0;
  core::TimePs next_issue_ = 0, last_done_ = 0;
  int reading_ = 0;
};

}  // namespace podsim::dma
