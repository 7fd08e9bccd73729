#include "hw/hbm/address_map.h"

#include <fmt/format.h>

#include <sstream>
#include <stdexcept>
#include <string>

namespace podsim::hbm {

namespace {

int log2_exact(std::uint64_t n) {
  if (n == 0 || (n & (n - 1)) != 0) return -1;
  int s = 0;
  while ((std::uint64_t{1} << s) != n) ++s;
  return s;
}

bool is_channel_field(const std::string& name) {
  return name == "pseudo_channel" || name == "channel" || name == "stack";
}

}  // namespace

AddressDecoder::AddressDecoder(const HbmGeometry& geometry, const AddressMapConfig& map)
    : burst_bytes_(geometry.burst_bytes()),
      burst_shift_(log2_exact(geometry.burst_bytes())),
      capacity_(geometry.capacity()),
      channels_per_stack_(geometry.channels_per_stack),
      pseudo_channels_(geometry.pseudo_channels) {
  if (burst_shift_ < 0) {
    throw std::invalid_argument(
        fmt::format("hbm: burst of {} bytes is not a power of two", burst_bytes_));
  }
  parse_layout(geometry, map);
  chunk_steps_.resize(chunk_bursts_);
  for (std::uint64_t i = 0; i < chunk_bursts_; ++i) {
    const Location l = decode(i * burst_bytes_);
    chunk_steps_[i] = ChunkStep{static_cast<std::uint8_t>(l.bank_group),
                                static_cast<std::uint8_t>(l.bank), l.column};
  }
  std::uint64_t below = 1;
  while (chunk_digits_ < digits_.size() && below < chunk_bursts_) {
    below *= digits_[chunk_digits_++].count;
  }
  rotation_period_ = find_rotation_period();
}

int AddressDecoder::find_rotation_period() const {
  const auto same_bank = [](const ChunkStep& a, const ChunkStep& b) {
    return a.bank_group == b.bank_group && a.bank == b.bank;
  };
  std::uint64_t period = 1;
  while (period < chunk_bursts_ && !same_bank(chunk_steps_[period], chunk_steps_[0])) ++period;
  for (std::uint64_t i = 0; i < chunk_bursts_; ++i) {
    if (!same_bank(chunk_steps_[i], chunk_steps_[i % period])) return 0;
    for (std::uint64_t j = 0; j < i && i < period; ++j) {
      if (chunk_steps_[j].bank_group == chunk_steps_[i].bank_group) return 0;
    }
  }
  return static_cast<int>(period);
}

void AddressDecoder::parse_layout(const HbmGeometry& geometry, const AddressMapConfig& map) {
  std::vector<std::string> names;
  std::stringstream list(map.layout);
  for (std::string name; std::getline(list, name, ',');) names.push_back(name);
  const auto count_of = [&](const std::string& name) {
    int n = 0;
    for (const auto& x : names) n += x == name;
    return n;
  };
  for (const char* required :
       {"bank_group", "bank", "pseudo_channel", "channel", "stack", "row", "column"}) {
    const int n = count_of(required);
    if (n == 0 || (n > 1 && std::string(required) != "column") || n > 2) {
      throw std::invalid_argument(
          fmt::format("hbm address_map.layout '{}': '{}' must appear {}", map.layout, required,
                      std::string(required) == "column" ? "once or twice" : "exactly once"));
    }
  }
  if (names.size() != 6 + static_cast<std::size_t>(count_of("column"))) {
    throw std::invalid_argument(fmt::format(
        "hbm address_map.layout '{}': unknown field (bank_group, bank, column, pseudo_channel, "
        "channel, stack, row)",
        map.layout));
  }
  // Everything below the first channel-type field stays on one pseudo-channel: the chunk.
  std::size_t below = 0;
  while (!is_channel_field(names[below])) ++below;
  std::uint64_t others_below = 1;
  bool column_below = false;
  for (std::size_t i = 0; i < below; ++i) {
    if (names[i] == "row") {
      throw std::invalid_argument(fmt::format(
          "hbm address_map.layout '{}': row must lie above the channel fields", map.layout));
    }
    if (names[i] == "bank_group") others_below *= static_cast<std::uint64_t>(geometry.bank_groups);
    if (names[i] == "bank") others_below *= static_cast<std::uint64_t>(geometry.banks_per_group);
    if (names[i] == "column") column_below = true;
  }
  const std::uint64_t columns = geometry.columns();
  const std::uint64_t interleave_bursts = map.interleave.bytes / burst_bytes_;
  const bool fits =
      map.interleave.bytes % burst_bytes_ == 0 && interleave_bursts % others_below == 0;
  std::uint64_t column_low = fits ? interleave_bursts / others_below : 0;
  if (!column_below) column_low = 1;
  const bool column_split = count_of("column") == 2;
  const bool ok =
      fits && column_low >= 1 && columns % column_low == 0 && log2_exact(column_low) >= 0 &&
      (column_below || interleave_bursts == others_below) &&
      (column_split || !column_below || column_low == columns) && !(column_split && !column_below);
  if (!ok) {
    throw std::invalid_argument(fmt::format(
        "hbm address_map.interleave {} does not fit layout '{}' ({} B bursts, {} per row)",
        core::to_string(map.interleave), map.layout, burst_bytes_, columns));
  }
  chunk_bursts_ = interleave_bursts;
  bool first_column = true;
  for (const auto& name : names) {
    Digit d{};
    d.scale = 1;
    if (name == "bank_group")
      d = {Field::kBankGroup, static_cast<std::uint64_t>(geometry.bank_groups), 1, 0};
    if (name == "bank")
      d = {Field::kBank, static_cast<std::uint64_t>(geometry.banks_per_group), 1, 0};
    if (name == "pseudo_channel")
      d = {Field::kPseudoChannel, static_cast<std::uint64_t>(geometry.pseudo_channels), 1, 0};
    if (name == "channel")
      d = {Field::kChannel, static_cast<std::uint64_t>(geometry.channels_per_stack), 1, 0};
    if (name == "stack") d = {Field::kStack, static_cast<std::uint64_t>(geometry.stacks), 1, 0};
    if (name == "row") d = {Field::kRow, static_cast<std::uint64_t>(geometry.rows), 1, 0};
    if (name == "column") {
      d = first_column && column_split ? Digit{Field::kColumn, column_low, 1, 0}
          : column_split               ? Digit{Field::kColumn, columns / column_low, column_low, 0}
                                       : Digit{Field::kColumn, columns, 1, 0};
      first_column = false;
    }
    d.shift = log2_exact(d.count);
    if (d.count > 1) digits_.push_back(d);
  }
}

void AddressDecoder::add(Location& l, Field field, std::int64_t value) {
  switch (field) {
    case Field::kBankGroup:
      l.bank_group += static_cast<int>(value);
      break;
    case Field::kBank:
      l.bank += static_cast<int>(value);
      break;
    case Field::kColumn:
      l.column += static_cast<std::uint32_t>(value);
      break;
    case Field::kPseudoChannel:
      l.pseudo_channel += static_cast<int>(value);
      break;
    case Field::kChannel:
      l.channel += static_cast<int>(value);
      break;
    case Field::kStack:
      l.stack += static_cast<int>(value);
      break;
    case Field::kRow:
      l.row += static_cast<std::uint32_t>(value);
      break;
  }
}

std::uint64_t AddressDecoder::get(const Location& l, Field field) {
  switch (field) {
    case Field::kBankGroup:
      return static_cast<std::uint64_t>(l.bank_group);
    case Field::kBank:
      return static_cast<std::uint64_t>(l.bank);
    case Field::kColumn:
      return l.column;
    case Field::kPseudoChannel:
      return static_cast<std::uint64_t>(l.pseudo_channel);
    case Field::kChannel:
      return static_cast<std::uint64_t>(l.channel);
    case Field::kStack:
      return static_cast<std::uint64_t>(l.stack);
    case Field::kRow:
      return l.row;
  }
  return 0;
}

Location AddressDecoder::decode(std::uint64_t address) const {
  Location l;
  std::uint64_t v = address >> burst_shift_;
  for (const Digit& d : digits_) {
    std::uint64_t digit;
    if (d.shift >= 0) {
      digit = v & (d.count - 1);
      v >>= d.shift;
    } else {
      digit = v % d.count;
      v /= d.count;
    }
    add(l, d.field, static_cast<std::int64_t>(digit * d.scale));
  }
  finish(l);
  return l;
}

void AddressDecoder::finish(Location& l) const {
  l.channel_index = l.stack * channels_per_stack_ + l.channel;
  l.unit = l.channel_index * pseudo_channels_ + l.pseudo_channel;
}

// An odometer over the digits above the chunk: the lowest that is not at its last value steps
// up, the ones below it return to zero.
void AddressDecoder::advance_chunk(Location& l) const {
  for (std::size_t i = chunk_digits_; i < digits_.size(); ++i) {
    const Digit& d = digits_[i];
    const std::uint64_t value = d.scale == 1 ? get(l, d.field) : get(l, d.field) / d.scale;
    const std::uint64_t digit = d.shift >= 0 ? value & (d.count - 1) : value % d.count;
    if (digit + 1 < d.count) {
      add(l, d.field, static_cast<std::int64_t>(d.scale));
      break;
    }
    add(l, d.field, -static_cast<std::int64_t>(digit * d.scale));
  }
  finish(l);
}

std::uint64_t AddressDecoder::encode(const Location& l) const {
  std::uint64_t v = 0;
  for (auto it = digits_.rbegin(); it != digits_.rend(); ++it) {
    const std::uint64_t digit = (get(l, it->field) / it->scale) % it->count;
    v = v * it->count + digit;
  }
  return v << burst_shift_;
}

}  // namespace podsim::hbm
