// A single server that moves bytes at a fixed bandwidth, one transfer at a time, followed by a
// fixed latency: the timing of a simple memory or a port shared by several initiators.
// Captures: serialization (a transfer starts when both it has arrived and the previous transfer
// has finished) and pipelining (latency overlaps the next transfer). Ignores: banks, queues with
// priorities, and reordering; transfers are served in call order, which under loosely timed
// modeling is the order initiators reach the target, not strictly their local times.
#pragma once

#include <cstdint>
#include <stdexcept>

#include "hw/core/units.h"

namespace podsim::core {

class BandwidthServer {
 public:
  struct Grant {
    TimePs start;  // the transfer begins to occupy the server
    TimePs end;    // the server is free again
    TimePs done;   // the transfer is complete for its initiator: end + latency
  };

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
    const TimePs start = arrival > busy_until_ ? arrival : busy_until_;
    busy_until_ = start + occupancy;
    busy_ps_ += occupancy;
    return Grant{start, busy_until_, busy_until_ + static_cast<TimePs>(latency_.ps)};
  }

  TimePs busy_until() const { return busy_until_; }
  // Total time spent transferring, for utilization.
  TimePs busy_ps() const { return busy_ps_; }
  Bandwidth bandwidth() const { return bandwidth_; }
  Duration latency() const { return latency_; }

 private:
  Bandwidth bandwidth_;
  Duration latency_;
  TimePs busy_until_ = 0;
  TimePs busy_ps_ = 0;
};

}  // namespace podsim::core
