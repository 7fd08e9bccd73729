// Copies between the chips' memory and their hosts' over each box's PCIe tree, as a rate model
// for training's host-staged strategies: a copy crosses its chip's link and the uplink of the
// socket's switch that the socket's other chips share, each link one direction at a time in the
// order copies are booked, and takes the slower link's occupancy (the PCIe overhead arithmetic
// of pcie_timing.h: TLPs, DLLPs, credits, tags) plus both links' latency. Behind gateways
// (host.gateway, an IPU-M2000's), the shared link is instead the gateway's RoCE host links,
// at their line rate less RoCE v2's framing per packet of the path MTU, with the gateway's
// latency; and every gateway of a box also crosses its host's own NIC ports (host.network's
// ports and speed, a POD64 server's one or two 100GbE ports [S14]), which they share.
// Captures: a socket's (or gateway's) chips contending for its shared link, a host's gateways
// sharing its NIC ports (as a fluid: copies overlap on them, none ending before the ports have
// carried every byte booked before it), the chip's own link,
// the two directions apart (full duplex), the device's DMA writing the host (device to host) or
// reading it (host to device). Ignores: the switch's own latency and buffers, host memory's
// bandwidth (a socket's DRAM outruns its uplinks), copies interleaving at TLP grain (a copy
// holds a link from its start to its end, as large copies that fill it do); behind gateways,
// the host's PCIe (taken to keep up with its NICs), the switch between gateways and host, and
// RoCE's congestion control.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "core/units.h"
#include "hw/pcie/pcie_timing.h"
#include "hw/system/system_config.h"

namespace podsim::system {

class PcieStaging {
 public:
  // Throws std::invalid_argument when a link of the system is not a valid PCIe link.
  explicit PcieStaging(const SystemConfig& system);

  // Books a copy of `bytes` between chip `chip` and its box's host, issued at `now`; returns
  // when it ends. Throws std::out_of_range for a chip the system does not have.
  core::TimePs book(int chip, std::uint64_t bytes, pcie::Direction direction, core::TimePs now);
  // "PCIe staging over each box's tree", or through gateways and their host links, for reports.
  const std::string& description() const { return description_; }

 private:
  using Free = std::array<std::vector<core::TimePs>, 2>;  // by direction, by link
  core::TimePs occupancy(const pcie::LinkTiming& link, std::uint64_t bytes,
                         pcie::Direction direction) const;

  // How long the shared link (a socket's uplink, or a gateway's host links) is busy with a copy.
  core::TimePs shared_occupancy(std::uint64_t bytes, pcie::Direction direction) const;
  static core::TimePs at_rate(std::uint64_t bytes, double ps_per_byte);

  pcie::LinkTiming chip_link_, uplink_;
  core::TimePs host_latency_ = 0;
  int chips_ = 0, chips_per_shared_ = 1, chips_per_host_ = 1;
  bool gateway_ = false;
  double gateway_ps_per_payload_byte_ = 0, host_nic_ps_per_payload_byte_ = 0;
  core::TimePs shared_latency_ = 0;
  Free chip_free_, shared_free_, host_nic_free_;  // the host NICs' only behind gateways
  std::string description_;
};

}  // namespace podsim::system
