#include "hw/chip/spec/packet_codec.h"

#include <fmt/format.h>

#include <stdexcept>

#include "podsim/spec/gaudi1.h"

namespace podsim::chip::spec {
namespace {

constexpr std::size_t kWordBytes = 4;
// Fixed parts are a few words; a local array keeps decoding free of allocations.
constexpr std::size_t kMaxFixedWords = 16;

constexpr std::uint64_t width_mask(unsigned width) {
  return width >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << width) - 1;
}

const std::array<const PacketSpec*, tables::kOpcodeLimit>& by_opcode() {
  static const auto table = [] {
    std::array<const PacketSpec*, tables::kOpcodeLimit> t{};
    for (const PacketSpec& p : tables::kPackets) {
      // The decoder reads fixed parts into a local array and tails as 64-bit values.
      if (p.size / kWordBytes > kMaxFixedWords) throw std::logic_error("packet too large");
      if (p.tail_field >= 0 && p.tail_unit != 8) throw std::logic_error("tail unit is not 8");
      t[p.opcode] = &p;
    }
    return t;
  }();
  return table;
}

std::uint32_t read_le32(const std::uint8_t* p) {
  return std::uint32_t{p[0]} | std::uint32_t{p[1]} << 8 | std::uint32_t{p[2]} << 16 |
         std::uint32_t{p[3]} << 24;
}
void append_le32(std::vector<std::uint8_t>& out, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
}

const PacketSpec& require(const PacketSpec* spec, const std::string& what) {
  if (!spec) throw std::invalid_argument("undefined Gaudi1 packet " + what);
  return *spec;
}

}  // namespace

const PacketSpec* find_packet(std::uint8_t opcode) {
  return opcode < tables::kOpcodeLimit ? by_opcode()[opcode] : nullptr;
}

const PacketSpec* find_packet(std::string_view name) {
  for (const PacketSpec& p : tables::kPackets) {
    if (name == p.name) return &p;
  }
  return nullptr;
}

Packet::Packet(const PacketSpec& spec) : spec_(&spec) { values_[kOpcodeField] = spec.opcode; }
Packet::Packet(std::uint8_t opcode)
    : Packet(require(find_packet(opcode), fmt::format("opcode {:#x}", opcode))) {}
Packet::Packet(std::string_view name)
    : Packet(require(find_packet(name), fmt::format("'{}'", name))) {}

std::size_t Packet::index_of(std::string_view field) const {
  for (std::size_t i = 0; i < spec_->field_count; ++i) {
    if (field == spec_->fields[i].name) return i;
  }
  throw std::invalid_argument(fmt::format("packet {} has no field '{}'", spec_->name, field));
}

Packet& Packet::set(std::string_view field, std::uint64_t value) {
  return set(index_of(field), value);
}

Packet& Packet::set(std::size_t index, std::uint64_t value) {
  if (index >= spec_->field_count) {
    throw std::invalid_argument(fmt::format("packet {} has no field #{}", spec_->name, index));
  }
  const FieldSpec& f = spec_->fields[index];
  if (index == kOpcodeField && value != spec_->opcode) {
    throw std::invalid_argument(
        fmt::format("the opcode of {} is {:#x}", spec_->name, spec_->opcode));
  }
  if ((value & ~width_mask(f.width)) != 0) {
    throw std::invalid_argument(
        fmt::format("{}.{} = {:#x} does not fit in {} bits", spec_->name, f.name, value, f.width));
  }
  values_[index] = value;
  return *this;
}

Packet& Packet::barriers(bool eng, bool reg, bool msg) {
  values_[kEngBarrierField] = eng;
  values_[kRegBarrierField] = reg;
  values_[kMsgBarrierField] = msg;
  return *this;
}

Packet& Packet::set_tail(std::vector<std::uint64_t> values) {
  if (spec_->tail_field < 0) {
    throw std::invalid_argument(fmt::format("packet {} has no tail", spec_->name));
  }
  set(static_cast<std::size_t>(spec_->tail_field), values.size());
  tail_ = std::move(values);
  return *this;
}

bool Packet::operator==(const Packet& other) const {
  return spec_ == other.spec_ && values_ == other.values_ && tail_ == other.tail_;
}

std::string DecodeError::message() const {
  if (kind == Kind::kUndefinedOpcode) {
    return fmt::format("offset {}: undefined packet opcode {:#x}", offset, opcode);
  }
  return fmt::format("offset {}: truncated packet: {} bytes needed, {} left", offset, needed,
                     available);
}

std::optional<DecodeError> PacketCodec::decode_one(const std::uint8_t* data, std::size_t size,
                                                   std::size_t offset, Packet& out,
                                                   std::size_t& consumed) const {
  const std::size_t left = offset <= size ? size - offset : 0;
  DecodeError truncated{DecodeError::Kind::kTruncated, offset, 0, 8, left};
  // The opcode sits in the header's second word, so 8 bytes are needed to know the packet.
  if (left < 8) return truncated;
  std::array<std::uint32_t, kMaxFixedWords> words{};
  words[0] = read_le32(data + offset);
  words[1] = read_le32(data + offset + kWordBytes);
  const auto opcode = static_cast<std::uint8_t>(podsim_gaudi1_get_bits(
      words.data(), PODSIM_GAUDI1_PKT_HDR_OPCODE_BIT, PODSIM_GAUDI1_PKT_HDR_OPCODE_WIDTH));
  truncated.opcode = opcode;
  const PacketSpec* spec = find_packet(opcode);
  if (!spec) return DecodeError{DecodeError::Kind::kUndefinedOpcode, offset, opcode, 0, left};
  truncated.needed = spec->size;
  if (left < spec->size) return truncated;
  for (std::size_t w = 2; w < spec->size / kWordBytes; ++w) {
    words[w] = read_le32(data + offset + w * kWordBytes);
  }
  Packet packet(*spec);
  for (std::size_t i = 0; i < spec->field_count; ++i) {
    packet.values_[i] =
        podsim_gaudi1_get_bits(words.data(), spec->fields[i].first_bit, spec->fields[i].width);
  }
  std::size_t total = spec->size;
  if (spec->tail_field >= 0) {
    const std::uint64_t units = packet.values_[static_cast<std::size_t>(spec->tail_field)];
    truncated.needed = spec->size + units * spec->tail_unit;
    if (left < truncated.needed) return truncated;
    packet.tail_.resize(units);
    for (std::size_t u = 0; u < units; ++u) {
      const std::uint8_t* at = data + offset + spec->size + u * spec->tail_unit;
      packet.tail_[u] = std::uint64_t{read_le32(at)} | std::uint64_t{read_le32(at + 4)} << 32;
    }
    total = truncated.needed;
  }
  out = std::move(packet);
  consumed = total;
  return std::nullopt;
}

DecodeResult PacketCodec::decode(const std::uint8_t* data, std::size_t size) const {
  DecodeResult result;
  std::size_t offset = 0;
  while (offset < size) {
    Packet packet(*tables::kPackets);
    std::size_t consumed = 0;
    result.error = decode_one(data, size, offset, packet, consumed);
    if (result.error) break;
    result.packets.push_back({offset, std::move(packet)});
    offset += consumed;
  }
  return result;
}

void PacketCodec::encode(const Packet& packet, std::vector<std::uint8_t>& out) const {
  const PacketSpec& spec = packet.spec();
  if (spec.tail_field >= 0 &&
      packet.get(static_cast<std::size_t>(spec.tail_field)) != packet.tail().size()) {
    throw std::invalid_argument(fmt::format(
        "{}.{} = {} but the tail holds {} values", spec.name, spec.fields[spec.tail_field].name,
        packet.get(static_cast<std::size_t>(spec.tail_field)), packet.tail().size()));
  }
  std::array<std::uint32_t, kMaxFixedWords> words{};
  for (std::size_t i = 0; i < spec.field_count; ++i) {
    podsim_gaudi1_put_bits(words.data(), spec.fields[i].first_bit, spec.fields[i].width,
                           packet.get(i));
  }
  for (std::size_t w = 0; w < spec.size / kWordBytes; ++w) append_le32(out, words[w]);
  for (const std::uint64_t v : packet.tail()) {
    append_le32(out, static_cast<std::uint32_t>(v));
    append_le32(out, static_cast<std::uint32_t>(v >> 32));
  }
}

std::vector<std::uint8_t> PacketCodec::encode(const std::vector<Packet>& packets) const {
  std::vector<std::uint8_t> out;
  for (const Packet& p : packets) encode(p, out);
  return out;
}

void PacketCodec::encode_registers(const std::vector<core::RegisterRun>& runs,
                                   std::vector<std::uint8_t>& out) const {
  for (const core::RegisterRun& r : runs) {
    if (r.values.size() % 2 == 0) {
      std::vector<std::uint64_t> pairs;
      for (std::size_t i = 0; i < r.values.size(); i += 2) {
        pairs.push_back(static_cast<std::uint64_t>(r.values[i + 1]) << 32 | r.values[i]);
      }
      Packet bulk("WREG_BULK");
      bulk.set("reg_offset", r.offset).set_tail(std::move(pairs));
      encode(bulk, out);
      continue;
    }
    for (std::size_t i = 0; i < r.values.size(); ++i) {
      Packet one("WREG_32");
      one.set("reg_offset", r.offset + 4 * static_cast<std::uint32_t>(i)).set("value", r.values[i]);
      encode(one, out);
    }
  }
}

}  // namespace podsim::chip::spec
