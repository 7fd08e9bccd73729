#include "hw/system/pcie_staging.h"

#include <algorithm>
#include <stdexcept>

namespace podsim::system {

PcieStaging::PcieStaging(const SystemConfig& system)
    : chip_link_(system.chip.pcie.link),
      uplink_(system.host.uplink),
      host_latency_(static_cast<core::TimePs>(system.host.memory.latency.ps)),
      chips_(system.chips()),
      chips_per_socket_(system.box.chips / system.host.sockets_used(system.box.chips)) {
  const int sockets = system.boxes * system.host.sockets_used(system.box.chips);
  for (auto& free : chip_free_) free.assign(static_cast<std::size_t>(chips_), 0);
  for (auto& free : uplink_free_) free.assign(static_cast<std::size_t>(sockets), 0);
}

// How long `link` is busy with the copy: its writes into host memory, or the completions of its
// reads of it.
core::TimePs PcieStaging::occupancy(const pcie::LinkTiming& link, std::uint64_t bytes,
                                    pcie::Direction direction) const {
  return direction == pcie::Direction::kDeviceToHost
             ? link.write_occupancy(bytes)
             : link.completion_occupancy(bytes, host_latency_);
}

core::TimePs PcieStaging::book(int chip, std::uint64_t bytes, pcie::Direction direction,
                               core::TimePs now) {
  if (chip < 0 || chip >= chips_) throw std::out_of_range("PCIe staging: no such chip");
  const auto d = static_cast<std::size_t>(direction);
  core::TimePs& own = chip_free_[d][static_cast<std::size_t>(chip)];
  core::TimePs& shared = uplink_free_[d][static_cast<std::size_t>(chip / chips_per_socket_)];
  if (bytes == 0) return now;
  const core::TimePs start = std::max({now, own, shared});
  own = start + occupancy(chip_link_, bytes, direction);
  shared = start + occupancy(uplink_, bytes, direction);
  return std::max(own, shared) + chip_link_.latency() + uplink_.latency();
}

}  // namespace podsim::system
