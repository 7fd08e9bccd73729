// When a chip's collective engines finish the reductions and copies handed to them, as a rate
// model (the coarse chips of `--chips coarse`): a job is cut into slices as the command
// compiler cuts it (one per engine, none smaller than what an engine keeps in flight), each
// slice waits for its engine and then takes a fixed latency plus its bytes at the engine's rate.
// Captures: engines working in parallel, each in order; the compiler's slicing. Ignores: memory
// contention between the engines and the NIC (the engines the collectives use are those the
// memory feeds at their rate beside the NIC at line rate: chip::Chip::collective_engines),
// descriptor fetches and queue managers.
#pragma once

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "core/units.h"

namespace podsim::collectives {

class EngineTimer {
 public:
  // `engines` engines, each moving `bytes_per_second` (of results), a slice costing `latency_ps`
  // more; slices no smaller than `min_slice` bytes (0: a job is never cut). Throws
  // std::invalid_argument on no engines or a rate that is not positive.
  EngineTimer(int engines, double bytes_per_second, core::TimePs latency_ps,
              std::uint64_t min_slice)
      : ps_per_byte_(bytes_per_second > 0 ? 1e12 / bytes_per_second : 0),
        latency_ps_(latency_ps),
        min_slice_(min_slice),
        free_at_(static_cast<std::size_t>(std::max(engines, 0)), 0) {
    if (engines < 1 || bytes_per_second <= 0) {
      throw std::invalid_argument("an engine timer needs engines and a positive rate");
    }
  }

  int engines() const { return static_cast<int>(free_at_.size()); }
  // The slices a job of `bytes` is cut into.
  int slices(std::uint64_t bytes) const {
    if (min_slice_ == 0) return 1;
    return static_cast<int>(std::clamp<std::uint64_t>(bytes / min_slice_, 1, free_at_.size()));
  }
  // Books a job of `bytes` issued at `now` by stream `stream` (an uncut job goes to engine
  // stream mod engines, as the compiler places it); returns when its last slice ends.
  core::TimePs book(core::TimePs now, std::uint64_t bytes, int stream) {
    const int n = slices(bytes);
    core::TimePs end = now;
    for (int i = 0; i < n; ++i) {
      const std::uint64_t share = bytes / n + (static_cast<std::uint64_t>(i) < bytes % n ? 1 : 0);
      const auto engine = static_cast<std::size_t>(n == 1 ? stream % engines() : i);
      core::TimePs& free = free_at_[engine];
      free = std::max(free, now) + latency_ps_ +
             static_cast<core::TimePs>(static_cast<double>(share) * ps_per_byte_ + 0.5);
      end = std::max(end, free);
    }
    return end;
  }

 private:
  double ps_per_byte_;
  core::TimePs latency_ps_;
  std::uint64_t min_slice_;
  std::vector<core::TimePs> free_at_;
};

}  // namespace podsim::collectives
