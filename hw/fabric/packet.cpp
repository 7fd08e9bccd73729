#include "hw/fabric/packet.h"

#include <algorithm>

#include "hw/fabric/wire_format.h"

namespace podsim::fabric {

namespace {
constexpr std::uint32_t kMinFrame = 64;            // Ethernet minimum, FCS included
constexpr std::uint32_t kPfcPayload = 2 + 2 + 16;  // opcode, enable vector, 8 timers
constexpr std::uint32_t kReth = 16, kAeth = 4, kImmDt = 4, kCnpReserved = 16;
}  // namespace

std::uint32_t Packet::frame_bytes() const {
  using W = WireFormat;
  std::uint32_t bytes = W::kMacHeader + (vlan ? W::kVlanTag : 0) + W::kFcs;
  if (kind == FrameKind::kPfcPause) {
    bytes += kPfcPayload;
  } else {
    bytes += (ipv6 ? W::kIpv6Header : W::kIpv4Header) + W::kUdpHeader + W::kBth + W::kIcrc;
    bytes += (has_reth ? kReth : 0) + (has_aeth ? kAeth : 0) + (has_immediate ? kImmDt : 0);
    bytes += opcode == Opcode::kCnp ? kCnpReserved : 0;
    bytes += payload_bytes;
  }
  return std::max(bytes, kMinFrame);
}

std::uint32_t Packet::wire_bytes() const {
  return frame_bytes() + WireFormat::kPreambleSfd + WireFormat::kInterFrameGap;
}

PacketPool& packet_pool() {
  static PacketPool pool(4096);
  return pool;
}

}  // namespace podsim::fabric
