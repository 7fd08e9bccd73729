#include "hw/tpc/isa.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace podsim::tpc {
namespace {

constexpr int kSlotBitsTotal = kSlotCount * kSlotBits;

std::uint64_t read_bits(const std::uint8_t* bytes, int lsb, int bits) {
  std::uint64_t value = 0;
  for (int i = 0; i < bits; ++i) {
    const int bit = lsb + i;
    value |= static_cast<std::uint64_t>((bytes[bit / 8] >> (bit % 8)) & 1) << i;
  }
  return value;
}

void write_bits(std::uint8_t* bytes, int lsb, int bits, std::uint64_t value) {
  for (int i = 0; i < bits; ++i) {
    const int bit = lsb + i;
    if ((value >> i) & 1)
      bytes[bit / 8] = static_cast<std::uint8_t>(bytes[bit / 8] | 1 << (bit % 8));
  }
}

// The field an operand role is encoded in, or nullptr.
const std::uint8_t* role_field(const Instruction& in, Role role) {
  switch (role) {
    case Role::kD:
      return &in.dst;
    case Role::kA:
      return &in.a;
    case Role::kB:
      return &in.b;
    case Role::kC:
      return &in.c;
    case Role::kNone:
      return nullptr;
  }
  return nullptr;
}

// What is wrong with the operands' fields, or an empty string.
std::string check_operand(const Instruction& in, const OperandSpec& spec, const char* name) {
  const std::uint8_t* field = role_field(in, spec.role);
  const int value = field ? *field : 0;
  const auto past = [&](const char* file, int count) {
    return value >= count
               ? fmt::format("{}: {}{} does not exist ({} registers)", name, file, value, count)
               : std::string();
  };
  switch (spec.kind) {
    case OperandKind::kV:
      return past("v", kVRegisters);
    case OperandKind::kS:
      return past("s", kSRegisters);
    case OperandKind::kI:
      return past("i", kIRegisters);
    case OperandKind::kVp:
      return past("vp", kVpRegisters);
    case OperandKind::kSp:
      return past("sp", kSpRegisters);
    case OperandKind::kVsi:
      if (in.b_kind == BKind::kRegister) return past("v", kVRegisters);
      if (in.b_kind == BKind::kScalar) return past("s", kSRegisters);
      return value ? fmt::format("{}: operand b is the immediate but its field is {}", name, value)
                   : std::string();
    case OperandKind::kSi:
    case OperandKind::kUi:
      if (in.b_kind == BKind::kRegister) return past("s", kSRegisters);
      if (in.b_kind == BKind::kImmediate && value == 0) return {};
      return fmt::format("{}: operand b must be a scalar or the immediate", name);
    case OperandKind::kTensor:
      return value >= 16 ? fmt::format("{}: tensor {} (tensors are 0..15)", name, value)
                         : std::string();
    case OperandKind::kLane:
      return value >= 4 ? fmt::format("{}: lane group {} (0..3)", name, value) : std::string();
    case OperandKind::kDims:
      return in.modifier == 0 ? fmt::format("{}: an empty dimension mask", name) : std::string();
    case OperandKind::kDim:
      return in.modifier >= 5 ? fmt::format("{}: dimension {} (0..4)", name, in.modifier)
                              : std::string();
    case OperandKind::kLabel:
      return {};
  }
  return {};
}

bool uses_immediate(const Instruction& in) {
  if (in.nop) return false;
  if (in.b_kind == BKind::kImmediate) return true;
  const OpInfo& op = info(in.op);
  for (int i = 0; i < op.operand_count; ++i)
    if (op.operands[static_cast<std::size_t>(i)].kind == OperandKind::kLabel) return true;
  return false;
}

bool writes_read_only_predicate(const Instruction& in) {
  const OpInfo& op = info(in.op);
  for (int i = 0; i < op.operand_count; ++i) {
    const OperandSpec& o = op.operands[static_cast<std::size_t>(i)];
    if (o.role == Role::kD && (o.kind == OperandKind::kVp || o.kind == OperandKind::kSp))
      return in.dst == 0;
  }
  return false;
}

// A cvt's source type in the modifier must name a type and a conversion the VPU has.
std::string check_conversion(const Instruction& in, const char* name) {
  if (in.modifier >= kDtypeCount) return fmt::format("{}: source type code {}", name, in.modifier);
  const auto src = static_cast<Dtype>(in.modifier);
  if (info(in.op).slot == Slot::kSpu) {
    return takes(in.op, src) ? std::string()
                             : fmt::format("{}: source type {}", name, info(src).name);
  }
  const int src_bytes = info(src).bytes, dst_bytes = info(in.dtype).bytes;
  if (src_bytes < dst_bytes) {
    return in.c >= dst_bytes / src_bytes ? fmt::format("{}: lane group {} of a widening by {}",
                                                       name, in.c, dst_bytes / src_bytes)
                                         : std::string();
  }
  if (in.c != 0) return fmt::format("{}: a lane group on a conversion that does not widen", name);
  if (src_bytes == dst_bytes) {
    return in.b ? fmt::format("{}: operand b on a same-width conversion", name) : std::string();
  }
  if (src_bytes == 2 * dst_bytes) return {};
  return fmt::format("{}: narrowing {} to {} takes two steps", name, info(src).name,
                     info(in.dtype).name);
}

std::string check_modifier(const Instruction& in, const char* name) {
  const OpInfo& op = info(in.op);
  switch (op.suffix) {
    case Suffix::kCond:
      return in.modifier >= kCondCount ? fmt::format("{}: comparison {}", name, in.modifier)
                                       : std::string();
    case Suffix::kCvt:
      return in.modifier > 1 ? fmt::format("{}: modifier {} (0 or 1: convert)", name, in.modifier)
                             : std::string();
    case Suffix::kSrcType:
      return check_conversion(in, name);
    case Suffix::kStep:
      return in.modifier == 0 ? fmt::format("{}: a loop step of 0", name) : std::string();
    case Suffix::kNone:
      break;
  }
  for (int i = 0; i < op.operand_count; ++i) {
    const OperandKind k = op.operands[static_cast<std::size_t>(i)].kind;
    if (k == OperandKind::kDims || k == OperandKind::kDim) return {};
  }
  return in.modifier ? fmt::format("{}: modifier {} on an operation without one", name, in.modifier)
                     : std::string();
}

// Fields the operation has no operand for must be zero, so that every binary has one text.
std::string check_unused_fields(const Instruction& in, const char* name) {
  const OpInfo& op = info(in.op);
  bool has[5] = {};
  for (int i = 0; i < op.operand_count; ++i) {
    has[static_cast<int>(op.operands[static_cast<std::size_t>(i)].role)] = true;
  }
  const std::pair<Role, const char*> roles[] = {
      {Role::kD, "dst"}, {Role::kA, "src_a"}, {Role::kB, "src_b"}, {Role::kC, "src_c"}};
  for (const auto& [role, field] : roles) {
    if (!has[static_cast<int>(role)] && *role_field(in, role) != 0) {
      return fmt::format("{}: field {} is {} but unused", name, field, *role_field(in, role));
    }
  }
  if (!has[static_cast<int>(Role::kB)] && in.b_kind != BKind::kRegister) {
    return fmt::format("{}: operand b's kind is set but there is no operand b", name);
  }
  if (op.dtypes == 0 && in.dtype != Dtype::kF32) {
    return fmt::format("{}: a type on an operation without one", name);
  }
  return {};
}

std::string check_instruction(const Instruction& in, Slot slot) {
  const OpInfo& op = info(in.op);
  const char* name = op.name;
  if (op.dtypes != 0 && !takes(in.op, in.dtype)) {
    return fmt::format("{} does not take type {}", name, info(in.dtype).name);
  }
  if (in.pred >= 16) return fmt::format("{}: predicate {}", name, in.pred);
  if (in.pred_vector && slot != Slot::kLoad && slot != Slot::kVpu) {
    return fmt::format("{}: the {} slot takes no vector predicate", name, slot_name(slot));
  }
  if (writes_read_only_predicate(in)) return fmt::format("{}: sp0 and vp0 cannot be written", name);
  for (std::string message : {check_unused_fields(in, name), check_modifier(in, name)}) {
    if (!message.empty()) return message;
  }
  for (int i = 0; i < op.operand_count; ++i) {
    std::string message = check_operand(in, op.operands[static_cast<std::size_t>(i)], name);
    if (!message.empty()) return message;
  }
  return {};
}

}  // namespace

const char* slot_name(Slot slot) {
  static const char* const names[] = {"load", "spu", "vpu", "store"};
  return names[static_cast<int>(slot)];
}

std::optional<Dtype> find_dtype(std::string_view name) {
  for (int i = 0; i < kDtypeCount; ++i)
    if (name == kDtypes[i].name) return static_cast<Dtype>(i);
  return std::nullopt;
}

std::optional<Cond> find_cond(std::string_view name) {
  for (int i = 0; i < kCondCount; ++i)
    if (name == kCondNames[i]) return static_cast<Cond>(i);
  return std::nullopt;
}

std::optional<Op> find_op(Slot slot, int opcode) {
  for (int i = 0; i < kOpCount; ++i)
    if (kOps[i].slot == slot && kOps[i].opcode == opcode) return static_cast<Op>(i);
  return std::nullopt;
}

std::vector<Op> find_ops(std::string_view name) {
  std::vector<Op> out;
  for (int i = 0; i < kOpCount; ++i)
    if (name == kOps[i].name) out.push_back(static_cast<Op>(i));
  return out;
}

int register_count(OperandKind kind) {
  switch (kind) {
    case OperandKind::kV:
      return kVRegisters;
    case OperandKind::kS:
      return kSRegisters;
    case OperandKind::kI:
      return kIRegisters;
    case OperandKind::kVp:
      return kVpRegisters;
    case OperandKind::kSp:
      return kSpRegisters;
    default:
      return 0;
  }
}

bool operator==(const Instruction& x, const Instruction& y) {
  if (x.nop || y.nop) return x.nop == y.nop;
  return x.op == y.op && x.dtype == y.dtype && x.dst == y.dst && x.a == y.a && x.b == y.b &&
         x.c == y.c && x.pred == y.pred && x.pred_not == y.pred_not &&
         x.pred_vector == y.pred_vector && x.b_kind == y.b_kind && x.modifier == y.modifier;
}

std::uint64_t encode_slot(const Instruction& in) {
  if (in.nop) return 0;
  std::uint64_t w = 0;
  w = field::kOpcode.put(w, info(in.op).opcode);
  w = field::kDtype.put(w, static_cast<std::uint64_t>(in.dtype));
  w = field::kDst.put(w, in.dst);
  w = field::kSrcA.put(w, in.a);
  w = field::kSrcB.put(w, in.b);
  w = field::kSrcC.put(w, in.c);
  w = field::kPred.put(w, in.pred);
  w = field::kPredNot.put(w, in.pred_not);
  w = field::kPredVector.put(w, in.pred_vector);
  w = field::kBKind.put(w, static_cast<std::uint64_t>(in.b_kind));
  w = field::kModifier.put(w, in.modifier);
  return w;
}

EncodedBundle encode_bundle(const Bundle& bundle) {
  EncodedBundle bytes{};
  for (int s = 0; s < kSlotCount; ++s) {
    write_bits(bytes.data(), s * kSlotBits, kSlotBits,
               encode_slot(bundle.slots[static_cast<std::size_t>(s)]));
  }
  write_bits(bytes.data(), kImmediateBit, 32, bundle.immediate);
  return bytes;
}

DecodedBundle decode_bundle(const std::uint8_t* bytes) {
  DecodedBundle out;
  for (int s = 0; s < kSlotCount; ++s) {
    const std::uint64_t w = read_bits(bytes, s * kSlotBits, kSlotBits);
    Instruction& in = out.bundle.slots[static_cast<std::size_t>(s)];
    const int opcode = static_cast<int>(field::kOpcode.get(w));
    if (opcode == 0) {
      if (w != 0) out.reserved_bits = true;  // a nop carries nothing
      continue;
    }
    const std::optional<Op> op = find_op(static_cast<Slot>(s), opcode);
    if (!op) {
      out.undefined[static_cast<std::size_t>(s)] = opcode;
      continue;
    }
    in.nop = false;
    in.op = *op;
    in.dtype = static_cast<Dtype>(field::kDtype.get(w));
    in.dst = static_cast<std::uint8_t>(field::kDst.get(w));
    in.a = static_cast<std::uint8_t>(field::kSrcA.get(w));
    in.b = static_cast<std::uint8_t>(field::kSrcB.get(w));
    in.c = static_cast<std::uint8_t>(field::kSrcC.get(w));
    in.pred = static_cast<std::uint8_t>(field::kPred.get(w));
    in.pred_not = field::kPredNot.get(w) != 0;
    in.pred_vector = field::kPredVector.get(w) != 0;
    in.b_kind = static_cast<BKind>(field::kBKind.get(w));
    in.modifier = static_cast<std::uint8_t>(field::kModifier.get(w));
  }
  out.bundle.immediate = static_cast<std::uint32_t>(read_bits(bytes, kImmediateBit, 32));
  out.reserved_bits = out.reserved_bits ||
                      read_bits(bytes, kImmediateBit + 32, kBundleBytes * 8 - kImmediateBit - 32);
  static_assert(kImmediateBit >= kSlotBitsTotal, "the immediate follows the slot words");
  return out;
}

std::optional<std::string> check_bundle(const DecodedBundle& decoded) {
  bool immediate_used = false;
  for (int s = 0; s < kSlotCount; ++s) {
    const auto slot = static_cast<Slot>(s);
    if (decoded.undefined[static_cast<std::size_t>(s)] != 0) {
      return fmt::format("undefined opcode {} in the {} slot",
                         decoded.undefined[static_cast<std::size_t>(s)], slot_name(slot));
    }
    const Instruction& in = decoded.bundle.slot(slot);
    if (in.nop) continue;
    if (static_cast<int>(in.dtype) >= kDtypeCount) {
      return fmt::format("{}: type code {}", info(in.op).name, static_cast<int>(in.dtype));
    }
    if (static_cast<int>(in.b_kind) > 2) return fmt::format("{}: b_kind 3", info(in.op).name);
    std::string message = check_instruction(in, slot);
    if (!message.empty()) return message;
    immediate_used = immediate_used || uses_immediate(in);
  }
  if (decoded.reserved_bits) return std::string("reserved bits are set");
  if (!immediate_used && decoded.bundle.immediate != 0) {
    return std::string("an immediate no slot uses");
  }
  return std::nullopt;
}

int max_latency() {
  int most = 0;
  for (const auto& g : kLatencies)
    for (const std::uint8_t cycles : g) most = std::max(most, static_cast<int>(cycles));
  return most;
}

std::optional<Generation> find_generation(std::string_view name) {
  for (int g = 0; g < kGenerationCount; ++g)
    if (name == kGenerationNames[g]) return static_cast<Generation>(g);
  return std::nullopt;
}

std::vector<std::uint8_t> serialize_binary(const std::vector<Bundle>& bundles,
                                           Generation generation) {
  if (bundles.size() > kMaxBundles) throw std::invalid_argument("too many bundles");
  std::vector<std::uint8_t> out(kBinaryHeaderBytes + bundles.size() * kBundleBytes, 0);
  const std::uint32_t header[4] = {kBinaryMagic,
                                   static_cast<std::uint32_t>(kIsaVersion) |
                                       static_cast<std::uint32_t>(kBinaryHeaderBytes) << 16,
                                   static_cast<std::uint32_t>(bundles.size()),
                                   static_cast<std::uint32_t>(generation) + 1};
  std::memcpy(out.data(), header, sizeof(header));
  for (std::size_t i = 0; i < bundles.size(); ++i) {
    const EncodedBundle b = encode_bundle(bundles[i]);
    std::memcpy(out.data() + kBinaryHeaderBytes + i * kBundleBytes, b.data(), b.size());
  }
  return out;
}

std::uint32_t binary_bundle_count(const std::uint8_t* header) {
  std::uint32_t words[3];
  std::memcpy(words, header, sizeof(words));
  if (words[0] != kBinaryMagic) {
    throw std::invalid_argument(fmt::format("not a TPC kernel binary (magic 0x{:08X})", words[0]));
  }
  if ((words[1] & 0xFFFF) != kIsaVersion || (words[1] >> 16) != kBinaryHeaderBytes) {
    throw std::invalid_argument(fmt::format(
        "kernel binary for ISA version {} with a {}-byte header (this core: version {}, {} bytes)",
        words[1] & 0xFFFF, words[1] >> 16, kIsaVersion, kBinaryHeaderBytes));
  }
  if (words[2] == 0 || words[2] > kMaxBundles) {
    throw std::invalid_argument(fmt::format("kernel binary with {} bundles", words[2]));
  }
  std::uint32_t generation = 0;
  std::memcpy(&generation, header + 12, 4);
  if (generation == 0 || generation > static_cast<std::uint32_t>(kGenerationCount)) {
    throw std::invalid_argument(
        fmt::format("kernel binary for no known TPC generation (code {})", generation));
  }
  return words[2];
}

Generation binary_generation(const std::uint8_t* header) {
  std::uint32_t generation = 0;
  std::memcpy(&generation, header + 12, 4);
  return static_cast<Generation>(generation - 1);
}

std::vector<Bundle> parse_binary(const std::vector<std::uint8_t>& binary) {
  if (binary.size() < kBinaryHeaderBytes) throw std::invalid_argument("kernel binary too short");
  const std::uint32_t count = binary_bundle_count(binary.data());
  if (binary.size() < kBinaryHeaderBytes + std::size_t{count} * kBundleBytes) {
    throw std::invalid_argument(
        fmt::format("kernel binary of {} bytes holds fewer than {} bundles", binary.size(), count));
  }
  std::vector<Bundle> bundles;
  bundles.reserve(count);
  for (std::uint32_t i = 0; i < count; ++i) {
    const DecodedBundle d = decode_bundle(binary.data() + kBinaryHeaderBytes + i * kBundleBytes);
    if (auto problem = check_bundle(d)) {
      throw std::invalid_argument(fmt::format("bundle {}: {}", i, *problem));
    }
    bundles.push_back(d.bundle);
  }
  return bundles;
}

}  // namespace podsim::tpc
