// The HBM address map: an offset into the memory to stack, channel, pseudo-channel, bank group,
// bank, row and column (burst within the row), following AddressMapConfig's layout.
// Captures: any order of the fields, non-power-of-two counts (six stacks), a configurable
// interleave granularity across pseudo-channels, and the inverse map (for tests and generators).
// Ignores: address hashing (XOR of row bits into bank bits) that real controllers add.
#pragma once

#include <cstdint>
#include <vector>

#include "hw/hbm/hbm_config.h"

namespace podsim::hbm {

struct Location {
  int stack = 0, channel = 0, pseudo_channel = 0, bank_group = 0, bank = 0;
  std::uint32_t row = 0;
  std::uint32_t column = 0;  // burst index within the row
  int unit = 0;              // pseudo-channel index over the whole memory
  int channel_index = 0;     // channel index over the whole memory
  friend bool operator==(const Location& a, const Location& b) {
    return a.stack == b.stack && a.channel == b.channel && a.pseudo_channel == b.pseudo_channel &&
           a.bank_group == b.bank_group && a.bank == b.bank && a.row == b.row &&
           a.column == b.column;
  }
};

class AddressDecoder {
 public:
  // Throws std::invalid_argument naming the layout or interleave when they do not fit the
  // geometry.
  AddressDecoder(const HbmGeometry& geometry, const AddressMapConfig& map);

  Location decode(std::uint64_t address) const;
  // The address of the first byte of the burst at `location` (unit and channel_index ignored).
  std::uint64_t encode(const Location& location) const;

  std::uint64_t capacity() const { return capacity_; }
  std::uint64_t burst_bytes() const { return burst_bytes_; }
  int burst_shift() const { return burst_shift_; }  // log2(burst_bytes())
  // Bytes of one interleave chunk: consecutive bursts on one pseudo-channel and one row.
  std::uint64_t chunk_bytes() const { return chunk_bursts_ * burst_bytes_; }
  std::uint64_t chunk_bursts() const { return chunk_bursts_; }

  // Burst `i` of a chunk relative to the chunk's first burst: what it adds to bank group, bank
  // and column (the chunk's first burst has zeros in every field below the chunk boundary).
  struct ChunkStep {
    std::uint8_t bank_group, bank;
    std::uint32_t column;
  };
  const ChunkStep& chunk_step(std::uint64_t i) const { return chunk_steps_[i]; }
  // P when a chunk's bursts rotate over P banks in P distinct bank groups (burst i goes to the
  // bank of burst i mod P, from any starting burst), else 0. The default map gives the number
  // of bank groups: the bulk engine then places bursts after the first round in closed form.
  int rotation_period() const { return rotation_period_; }
  static constexpr int kMaxRotation = 16;  // bank groups a pseudo-channel may have

  // `location` (a chunk's first burst) becomes the next chunk's, as decode(address + chunk_bytes)
  // would give it, without dividing the address again.
  void advance_chunk(Location& location) const;

 private:
  enum class Field : std::uint8_t {
    kBankGroup,
    kBank,
    kColumn,
    kPseudoChannel,
    kChannel,
    kStack,
    kRow
  };
  struct Digit {
    Field field;
    std::uint64_t count;
    std::uint64_t scale;  // weight within the field (the high part of a split column)
    int shift;            // log2(count) when count is a power of two, else -1
  };
  void parse_layout(const HbmGeometry& geometry, const AddressMapConfig& map);
  int find_rotation_period() const;
  void finish(Location& location) const;
  static void add(Location& location, Field field, std::int64_t value);
  static std::uint64_t get(const Location& location, Field field);

  std::vector<Digit> digits_;  // lowest first
  std::uint64_t burst_bytes_;
  int burst_shift_;
  std::uint64_t chunk_bursts_ = 1;
  std::uint64_t capacity_;
  int channels_per_stack_, pseudo_channels_;
  std::vector<ChunkStep> chunk_steps_;
  std::size_t chunk_digits_ = 0;  // digits_ below the chunk boundary
  int rotation_period_ = 0;
};

}  // namespace podsim::hbm
