// How a message becomes packets: MTU-sized segments and the BTH opcode and extension headers of
// each (IBTA vol. 1 9.2, 9.3 and table 38).
// Captures: FIRST/MIDDLE/LAST/ONLY opcodes and their _IMMEDIATE variants, RETH on the first or
// only packet of a WRITE and on READ requests, ImmDt on the last or only packet, AETH on the
// first, last and only READ responses, and READ requests for the rest of a message (as go-back-N
// sends after part of the response arrived).
// Ignores: atomics, invalidate variants, and padding (payloads count whole bytes).
#pragma once

#include <cstdint>

#include "hw/fabric/packet.h"
#include "hw/roce/verbs.h"

namespace podsim::roce {

// Packets a message of `length` bytes needs (at least one).
constexpr std::uint32_t packet_count(std::uint64_t length, std::uint32_t mtu) {
  return length == 0 ? 1 : static_cast<std::uint32_t>((length + mtu - 1) / mtu);
}

struct Segment {
  fabric::Opcode opcode = fabric::Opcode::kSendOnly;
  bool reth = false;
  bool immediate = false;
  bool aeth = false;
  bool last = false;         // the message's last packet (READ request: always)
  std::uint64_t offset = 0;  // of this packet's bytes in the message
  std::uint32_t payload = 0;
  std::uint64_t read_length = 0;  // READ request: bytes asked for (the RETH DMA length)
};

// Packet `index` of a SEND or WRITE message; for a READ, the request that asks for the message
// from packet `index` on.
Segment request_segment(SendOpcode op, std::uint64_t length, std::uint32_t mtu,
                        std::uint32_t index);
// Response packet `index` of a READ of `length` bytes.
Segment read_response_segment(std::uint64_t length, std::uint32_t mtu, std::uint32_t index);

// What the receiver of a packet must do with it, by opcode.
enum class OpcodeClass : std::uint8_t { kSend, kWrite, kReadRequest, kReadResponse, kAck, kCnp };
OpcodeClass classify(fabric::Opcode op);
bool starts_message(fabric::Opcode op);  // FIRST or ONLY
bool ends_message(fabric::Opcode op);    // LAST or ONLY (with or without immediate)
bool carries_immediate(fabric::Opcode op);

}  // namespace podsim::roce
