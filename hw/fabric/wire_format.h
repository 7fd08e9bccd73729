// Bytes that RoCE v2 over Ethernet adds to every packet on the wire, and the goodput that leaves.
// Captures the per-frame overhead of RoCE v2 over Ethernet [N1]: preamble+SFD 8, IFG 12, MAC 14,
// optional VLAN 4, IPv4 20 (or IPv6 40), UDP 8, BTH 12, ICRC 4, FCS 4. Ignores the extra
// headers of particular packets (RETH on a WRITE's first packet, AETH on ACKs): the network
// model accounts for those per packet.
#pragma once

#include <cstdint>

namespace podsim::fabric {

struct WireFormat {
  bool ipv6 = false;
  bool vlan = false;

  static constexpr std::uint32_t kPreambleSfd = 8, kInterFrameGap = 12, kMacHeader = 14,
                                 kVlanTag = 4, kIpv4Header = 20, kIpv6Header = 40, kUdpHeader = 8,
                                 kBth = 12, kIcrc = 4, kFcs = 4;

  // Bytes on the wire around each packet's payload (82 for IPv4 without VLAN).
  constexpr std::uint32_t overhead_bytes() const {
    return kPreambleSfd + kInterFrameGap + kMacHeader + (vlan ? kVlanTag : 0) +
           (ipv6 ? kIpv6Header : kIpv4Header) + kUdpHeader + kBth + kIcrc + kFcs;
  }
  // Payload share of the line rate with full-MTU packets (4096/4178 = 0.9804 at MTU 4096).
  constexpr double goodput_fraction(std::uint32_t mtu) const {
    return static_cast<double>(mtu) / static_cast<double>(mtu + overhead_bytes());
  }
};

}  // namespace podsim::fabric
