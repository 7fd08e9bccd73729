#include "hw/roce/segmentation.h"

#include <algorithm>

namespace podsim::roce {

using fabric::Opcode;

namespace {

enum class Position { kFirst, kMiddle, kLast, kOnly };

Position position(std::uint32_t index, std::uint32_t count) {
  if (count == 1) return Position::kOnly;
  if (index == 0) return Position::kFirst;
  return index + 1 == count ? Position::kLast : Position::kMiddle;
}

Opcode send_opcode(Position p, bool imm) {
  switch (p) {
    case Position::kFirst:
      return Opcode::kSendFirst;
    case Position::kMiddle:
      return Opcode::kSendMiddle;
    case Position::kLast:
      return imm ? Opcode::kSendLastImm : Opcode::kSendLast;
    case Position::kOnly:
      return imm ? Opcode::kSendOnlyImm : Opcode::kSendOnly;
  }
  return Opcode::kSendOnly;
}

Opcode write_opcode(Position p, bool imm) {
  switch (p) {
    case Position::kFirst:
      return Opcode::kWriteFirst;
    case Position::kMiddle:
      return Opcode::kWriteMiddle;
    case Position::kLast:
      return imm ? Opcode::kWriteLastImm : Opcode::kWriteLast;
    case Position::kOnly:
      return imm ? Opcode::kWriteOnlyImm : Opcode::kWriteOnly;
  }
  return Opcode::kWriteOnly;
}

Opcode response_opcode(Position p) {
  switch (p) {
    case Position::kFirst:
      return Opcode::kReadResponseFirst;
    case Position::kMiddle:
      return Opcode::kReadResponseMiddle;
    case Position::kLast:
      return Opcode::kReadResponseLast;
    case Position::kOnly:
      return Opcode::kReadResponseOnly;
  }
  return Opcode::kReadResponseOnly;
}

std::uint32_t payload_of(std::uint64_t length, std::uint32_t mtu, std::uint32_t index) {
  const std::uint64_t offset = std::uint64_t{index} * mtu;
  return static_cast<std::uint32_t>(std::min<std::uint64_t>(mtu, length - offset));
}

}  // namespace

Segment request_segment(SendOpcode op, std::uint64_t length, std::uint32_t mtu,
                        std::uint32_t index) {
  Segment s;
  s.offset = std::uint64_t{index} * mtu;
  if (op == SendOpcode::kRead) {
    s.opcode = Opcode::kReadRequest;
    s.reth = true;
    s.last = true;
    s.read_length = length - s.offset;
    return s;
  }
  const std::uint32_t count = packet_count(length, mtu);
  const Position p = position(index, count);
  const bool imm = has_immediate(op) && (p == Position::kLast || p == Position::kOnly);
  s.opcode = is_write(op) ? write_opcode(p, imm) : send_opcode(p, imm);
  s.reth = is_write(op) && (p == Position::kFirst || p == Position::kOnly);
  s.immediate = imm;
  s.last = p == Position::kLast || p == Position::kOnly;
  s.payload = payload_of(length, mtu, index);
  return s;
}

Segment read_response_segment(std::uint64_t length, std::uint32_t mtu, std::uint32_t index) {
  Segment s;
  const Position p = position(index, packet_count(length, mtu));
  s.opcode = response_opcode(p);
  s.aeth = p != Position::kMiddle;
  s.last = p == Position::kLast || p == Position::kOnly;
  s.offset = std::uint64_t{index} * mtu;
  s.payload = payload_of(length, mtu, index);
  return s;
}

OpcodeClass classify(Opcode op) {
  switch (op) {
    case Opcode::kSendFirst:
    case Opcode::kSendMiddle:
    case Opcode::kSendLast:
    case Opcode::kSendLastImm:
    case Opcode::kSendOnly:
    case Opcode::kSendOnlyImm:
      return OpcodeClass::kSend;
    case Opcode::kWriteFirst:
    case Opcode::kWriteMiddle:
    case Opcode::kWriteLast:
    case Opcode::kWriteLastImm:
    case Opcode::kWriteOnly:
    case Opcode::kWriteOnlyImm:
      return OpcodeClass::kWrite;
    case Opcode::kReadRequest:
      return OpcodeClass::kReadRequest;
    case Opcode::kReadResponseFirst:
    case Opcode::kReadResponseMiddle:
    case Opcode::kReadResponseLast:
    case Opcode::kReadResponseOnly:
      return OpcodeClass::kReadResponse;
    case Opcode::kAcknowledge:
      return OpcodeClass::kAck;
    case Opcode::kCnp:
      return OpcodeClass::kCnp;
  }
  return OpcodeClass::kAck;
}

bool starts_message(Opcode op) {
  switch (op) {
    case Opcode::kSendFirst:
    case Opcode::kSendOnly:
    case Opcode::kSendOnlyImm:
    case Opcode::kWriteFirst:
    case Opcode::kWriteOnly:
    case Opcode::kWriteOnlyImm:
    case Opcode::kReadRequest:
    case Opcode::kReadResponseFirst:
    case Opcode::kReadResponseOnly:
      return true;
    default:
      return false;
  }
}

bool ends_message(Opcode op) {
  switch (op) {
    case Opcode::kSendLast:
    case Opcode::kSendLastImm:
    case Opcode::kSendOnly:
    case Opcode::kSendOnlyImm:
    case Opcode::kWriteLast:
    case Opcode::kWriteLastImm:
    case Opcode::kWriteOnly:
    case Opcode::kWriteOnlyImm:
    case Opcode::kReadRequest:
    case Opcode::kReadResponseLast:
    case Opcode::kReadResponseOnly:
      return true;
    default:
      return false;
  }
}

bool carries_immediate(Opcode op) {
  return op == Opcode::kSendLastImm || op == Opcode::kSendOnlyImm || op == Opcode::kWriteLastImm ||
         op == Opcode::kWriteOnlyImm;
}

}  // namespace podsim::roce
