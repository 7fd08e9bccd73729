// Gaudi1 command-buffer packets as typed values: decoding a command-buffer byte stream (what a
// QMAN's command processor reads) and encoding packets (for tests, the collectives and later
// the driver). Every packet's layout comes from hw/chip/spec/gaudi1.yaml through the generated
// tables, so the codec holds no bit positions of its own.
// Captures: opcode, header barriers, every field, WREG_BULK's tail; undefined opcodes and
// truncated packets are reported with their byte offset, without exceptions.
// Ignores: what a packet does (the QMAN model's business) and "must be" rules of single bits
// (e.g. LIN_DMA's lin = 1), which the decoder passes on as they are.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/register_run.h"
#include "hw/chip/spec/packet_spec.h"
#include "podsim/spec/gaudi1_packets.inc"

namespace podsim::chip::spec {

// Every packet lists the common header first, at these indices.
inline constexpr std::size_t kOpcodeField = 0;
inline constexpr std::size_t kEngBarrierField = 1;
inline constexpr std::size_t kRegBarrierField = 2;
inline constexpr std::size_t kMsgBarrierField = 3;

// nullptr when the spec defines no such packet.
const PacketSpec* find_packet(std::uint8_t opcode);
const PacketSpec* find_packet(std::string_view name);

class Packet {
 public:
  // Throws std::invalid_argument for a packet the spec does not define.
  explicit Packet(std::uint8_t opcode);
  explicit Packet(std::string_view name);
  explicit Packet(const PacketSpec& spec);

  const PacketSpec& spec() const { return *spec_; }
  std::uint8_t opcode() const { return spec_->opcode; }
  std::string_view name() const { return spec_->name; }

  // Throws std::invalid_argument for a field the packet does not have.
  std::uint64_t get(std::string_view field) const { return values_[index_of(field)]; }
  std::uint64_t get(std::size_t index) const { return values_[index]; }
  // Throws std::invalid_argument for an unknown field or a value wider than the field; the
  // opcode is fixed by the packet kind.
  Packet& set(std::string_view field, std::uint64_t value);
  Packet& set(std::size_t index, std::uint64_t value);

  bool eng_barrier() const { return values_[kEngBarrierField] != 0; }
  bool reg_barrier() const { return values_[kRegBarrierField] != 0; }
  bool msg_barrier() const { return values_[kMsgBarrierField] != 0; }
  Packet& barriers(bool eng, bool reg, bool msg);

  // WREG_BULK's values; setting them also sets the counting field.
  const std::vector<std::uint64_t>& tail() const { return tail_; }
  Packet& set_tail(std::vector<std::uint64_t> values);

  std::size_t size_bytes() const { return spec_->size + tail_.size() * spec_->tail_unit; }
  std::size_t index_of(std::string_view field) const;  // throws std::invalid_argument

  bool operator==(const Packet& other) const;
  bool operator!=(const Packet& other) const { return !(*this == other); }

 private:
  friend class PacketCodec;
  const PacketSpec* spec_;
  std::array<std::uint64_t, tables::kMaxPacketFields> values_{};
  std::vector<std::uint64_t> tail_;
};

struct DecodeError {
  enum class Kind { kUndefinedOpcode, kTruncated };
  Kind kind = Kind::kTruncated;
  std::size_t offset = 0;     // of the packet's first byte in the buffer
  std::uint8_t opcode = 0;    // as read, when there were enough bytes to read it
  std::size_t needed = 0;     // kTruncated: bytes the packet needs
  std::size_t available = 0;  // kTruncated: bytes left from `offset`
  std::string message() const;
};

struct DecodedPacket {
  std::size_t offset;  // of the packet's first byte
  Packet packet;
};

struct DecodeResult {
  std::vector<DecodedPacket> packets;  // those before the first error
  std::optional<DecodeError> error;
  bool ok() const { return !error.has_value(); }
};

// Packets are laid out back to back, each a whole number of 32-bit little-endian words.
class PacketCodec {
 public:
  // The packet at `offset`; on success sets `out` and `consumed` (its size in bytes).
  std::optional<DecodeError> decode_one(const std::uint8_t* data, std::size_t size,
                                        std::size_t offset, Packet& out,
                                        std::size_t& consumed) const;
  // A whole command buffer, stopping at the first undefined or truncated packet.
  DecodeResult decode(const std::uint8_t* data, std::size_t size) const;
  DecodeResult decode(const std::vector<std::uint8_t>& bytes) const {
    return decode(bytes.data(), bytes.size());
  }

  // Appends the packet's bytes. Throws std::invalid_argument when a tail's length and its
  // counting field disagree.
  void encode(const Packet& packet, std::vector<std::uint8_t>& out) const;
  std::vector<std::uint8_t> encode(const std::vector<Packet>& packets) const;
  // Appends the packets that write a register image into the QMAN's engine: WREG_BULK for a run
  // of an even count (it writes pairs), WREG_32 for each register of the others.
  void encode_registers(const std::vector<core::RegisterRun>& runs,
                        std::vector<std::uint8_t>& out) const;
};

}  // namespace podsim::chip::spec
