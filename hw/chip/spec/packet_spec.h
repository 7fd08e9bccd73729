// Shapes of the packet descriptions that podsim_specgen generates from the chip's YAML spec
// (generated/podsim/spec/gaudi1_packets.inc) and that the codec walks. Bit positions count
// from bit 0 of the packet's first little-endian 32-bit word.
#pragma once

#include <cstddef>
#include <cstdint>

namespace podsim::chip::spec {

struct FieldSpec {
  const char* name;
  std::uint16_t first_bit;
  std::uint8_t width;
};

struct PacketSpec {
  const char* name;
  std::uint8_t opcode;
  std::uint16_t size;  // bytes of the fixed part
  const FieldSpec* fields;
  std::size_t field_count;  // header fields first: opcode, eng/reg/msg barrier
  int tail_field;           // index of the field counting tail units; -1 without a tail
  std::uint16_t tail_unit;  // bytes per tail unit
};

}  // namespace podsim::chip::spec
