#include "hw/system/pcie_staging.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "hw/fabric/wire_format.h"

namespace podsim::system {

PcieStaging::PcieStaging(const SystemConfig& system)
    : chip_link_(system.chip.pcie.link),
      uplink_(system.host.uplink),
      host_latency_(static_cast<core::TimePs>(system.host.memory.latency.ps)),
      chips_(system.chips()) {
  const GatewayConfig& g = system.host.gateway;
  gateway_ = g.chips > 0;
  if (gateway_) {
    chips_per_shared_ = g.chips;
    const double goodput = fabric::WireFormat{}.goodput_fraction(g.mtu);
    gateway_ps_per_payload_byte_ = 8e12 / (goodput * g.ports * g.port_speed.bits_per_second);
    const HostNetworkConfig& nic = system.host.network;
    host_nic_ps_per_payload_byte_ = 8e12 / (goodput * nic.ports * nic.port_speed.bits_per_second);
    chips_per_host_ = system.chips_per_host();
    shared_latency_ = static_cast<core::TimePs>(g.latency.ps);
    description_ = fmt::format(
        "staging through gateways of {} chips, each over {} x {:g} Gb/s RoCE host links, "
        "into each host's {} x {:g} Gb/s NIC ports",
        g.chips, g.ports, g.port_speed.bits_per_second / 1e9, nic.ports,
        nic.port_speed.bits_per_second / 1e9);
  } else {
    description_ = "PCIe staging over each box's tree";
    chips_per_shared_ = system.box.chips / system.host.sockets_used(system.box.chips);
    shared_latency_ = uplink_.latency();
  }
  const int shared = (chips_ + chips_per_shared_ - 1) / chips_per_shared_;
  for (auto& free : chip_free_) free.assign(static_cast<std::size_t>(chips_), 0);
  for (auto& free : shared_free_) free.assign(static_cast<std::size_t>(shared), 0);
  const int hosts = gateway_ ? (chips_ + chips_per_host_ - 1) / chips_per_host_ : 0;
  for (auto& free : host_nic_free_) free.assign(static_cast<std::size_t>(hosts), 0);
}

core::TimePs PcieStaging::at_rate(std::uint64_t bytes, double ps_per_byte) {
  return static_cast<core::TimePs>(std::ceil(static_cast<double>(bytes) * ps_per_byte));
}

// How long `link` is busy with the copy: its writes into host memory, or the completions of its
// reads of it.
core::TimePs PcieStaging::occupancy(const pcie::LinkTiming& link, std::uint64_t bytes,
                                    pcie::Direction direction) const {
  return direction == pcie::Direction::kDeviceToHost
             ? link.write_occupancy(bytes)
             : link.completion_occupancy(bytes, host_latency_);
}

core::TimePs PcieStaging::shared_occupancy(std::uint64_t bytes, pcie::Direction direction) const {
  if (!gateway_) return occupancy(uplink_, bytes, direction);
  return at_rate(bytes, gateway_ps_per_payload_byte_);
}

core::TimePs PcieStaging::book(int chip, std::uint64_t bytes, pcie::Direction direction,
                               core::TimePs now) {
  if (chip < 0 || chip >= chips_) throw std::out_of_range("PCIe staging: no such chip");
  const auto d = static_cast<std::size_t>(direction);
  core::TimePs& own = chip_free_[d][static_cast<std::size_t>(chip)];
  core::TimePs& shared = shared_free_[d][static_cast<std::size_t>(chip / chips_per_shared_)];
  if (bytes == 0) return now;
  if (!gateway_) {
    const core::TimePs start = std::max({now, own, shared});
    own = start + occupancy(chip_link_, bytes, direction);
    shared = start + shared_occupancy(bytes, direction);
    return std::max(own, shared) + chip_link_.latency() + shared_latency_;
  }
  // The host's NIC ports carry several gateways' copies at once: a copy need not wait for them
  // to be free, but none ends before the ports have carried every byte booked on them so far.
  core::TimePs& nic = host_nic_free_[d][static_cast<std::size_t>(chip / chips_per_host_)];
  const core::TimePs start = std::max({now, own, shared});
  own = start + occupancy(chip_link_, bytes, direction);
  shared = start + shared_occupancy(bytes, direction);
  nic = std::max(nic, start) + at_rate(bytes, host_nic_ps_per_payload_byte_);
  return std::max({own, shared, nic}) + chip_link_.latency() + shared_latency_;
}

}  // namespace podsim::system
