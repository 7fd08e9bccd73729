// A single server that moves bytes at a fixed bandwidth, one transfer at a time, followed by a
// fixed latency: the timing of a simple memory or a port shared by several initiators.
// Captures: serialization (a transfer occupies the server for bytes / bandwidth, never beside
// another) and pipelining (latency overlaps the next transfer). A transfer takes the earliest
// idle stretch long enough for it from its arrival on: under loosely timed modeling initiators
// reach the server in call order, not in the order of their local times, and one that runs
// ahead of the kernel (a TPC core, a QMAN fetching its next buffer) must not push the transfers
// of others, arriving earlier in simulated time, behind its own. The server remembers its last
// kIntervals busy stretches; time before them counts as busy.
// Ignores: banks, queues with priorities.
#pragma once

#include <array>
#include <cstdint>
#include <stdexcept>

#include "core/units.h"

namespace podsim::core {

class BandwidthServer {
 public:
  struct Grant {
    TimePs start;  // the transfer begins to occupy the server
    TimePs end;    // the server is free again
    TimePs done;   // the transfer is complete for its initiator: end + latency
  };
  static constexpr int kIntervals = 16;

  // Throws std::invalid_argument if bandwidth is not positive or latency is negative.
  BandwidthServer(Bandwidth bandwidth, Duration latency)
      : bandwidth_(bandwidth), latency_(latency) {
    if (!(bandwidth.bits_per_second > 0)) {
      throw std::invalid_argument("BandwidthServer: bandwidth must be positive");
    }
    if (latency.ps < 0)
      throw std::invalid_argument("BandwidthServer: latency must not be negative");
  }

  // A transfer of `bytes` that reaches the server at `arrival`.
  Grant schedule(TimePs arrival, std::uint64_t bytes) {
    return occupy(arrival, static_cast<TimePs>(bandwidth_.time_for(bytes).ps));
  }
  // A transfer that holds the server for `occupancy` (one whose rate differs from the server's,
  // such as a memory's writes).
  Grant occupy(TimePs arrival, TimePs occupancy) {
    const TimePs start =
        arrival >= busy_until_ ? append(arrival, occupancy) : backfill(arrival, occupancy);
    busy_ps_ += occupancy;
    return Grant{start, start + occupancy, start + occupancy + static_cast<TimePs>(latency_.ps)};
  }

  // When the last transfer scheduled so far ends.
  TimePs busy_until() const { return busy_until_; }
  // Total time spent transferring, for utilization.
  TimePs busy_ps() const { return busy_ps_; }
  Bandwidth bandwidth() const { return bandwidth_; }
  Duration latency() const { return latency_; }

 private:
  struct Interval {
    TimePs start, end;
  };
  Interval& at(int i) { return ring_[static_cast<std::size_t>((head_ + i) % kIntervals)]; }

  // After everything scheduled: the usual case, and the only one for in-order initiators.
  TimePs append(TimePs start, TimePs occupancy) {
    if (occupancy == 0) return start;  // takes no time of the server
    busy_until_ = start + occupancy;
    if (count_ > 0 && at(count_ - 1).end == start) {
      at(count_ - 1).end = busy_until_;
    } else {
      insert(count_, Interval{start, busy_until_});
    }
    return start;
  }

  // Before the last transfer: the first idle stretch from the arrival that holds it.
  TimePs backfill(TimePs arrival, TimePs occupancy) {
    TimePs t = arrival > floor_ ? arrival : floor_;
    int i = count_;
    while (i > 0 && at(i - 1).end > t) --i;  // the first interval ending after t
    for (; i < count_; ++i) {
      if (at(i).start >= t + occupancy) break;  // it fits in the gap before interval i
      if (at(i).end > t) t = at(i).end;
    }
    if (i == count_) return append(t, occupancy);
    if (occupancy == 0) return t;
    const int placed = insert(i, Interval{t, t + occupancy});
    if (placed >= 0 && placed + 1 < count_ && at(placed).end == at(placed + 1).start) merge(placed);
    if (placed > 0 && at(placed - 1).end == at(placed).start) merge(placed - 1);
    return t;
  }

  // Inserts before position i and returns where the interval went; when the ring is full the
  // oldest interval becomes history (its end the floor), and -1 says the new one did too.
  int insert(int i, Interval interval) {
    if (count_ == kIntervals) {
      floor_ = at(0).end;
      head_ = (head_ + 1) % kIntervals;
      --count_;
      if (--i < 0) return -1;
    }
    for (int j = count_; j > i; --j) at(j) = at(j - 1);
    at(i) = interval;
    ++count_;
    return i;
  }
  // Joins interval i with the one after it.
  void merge(int i) {
    at(i).end = at(i + 1).end;
    for (int j = i + 1; j + 1 < count_; ++j) at(j) = at(j + 1);
    --count_;
  }

  Bandwidth bandwidth_;
  Duration latency_;
  std::array<Interval, kIntervals> ring_{};
  int head_ = 0, count_ = 0;
  TimePs floor_ = 0;
  TimePs busy_until_ = 0;
  TimePs busy_ps_ = 0;
};

}  // namespace podsim::core
