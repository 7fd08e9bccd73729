// podsim's TPC instruction set: the table generated from hw/tpc/isa.yaml (operations, their
// slots, opcodes, operand forms, types and latencies; docs/tpc/isa.md), the decoded form of a
// slot instruction and a bundle, their binary encoding, and the kernel binary a core fetches.
// Captures: every field of the encoding, the checks a core makes before running a bundle
// (undefined opcodes, types an operation does not take, registers past a file, reserved bits).
// Ignores: what the operations compute (executor.h) and how long they take (pipeline_timer.h).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace podsim::tpc {

enum class Slot : std::uint8_t { kLoad, kSpu, kVpu, kStore };
inline constexpr int kSlotCount = 4;
const char* slot_name(Slot slot);

struct BitField {
  int lsb, bits;
  constexpr std::uint64_t mask() const { return (std::uint64_t{1} << bits) - 1; }
  constexpr std::uint64_t get(std::uint64_t word) const { return (word >> lsb) & mask(); }
  constexpr std::uint64_t put(std::uint64_t word, std::uint64_t value) const {
    return (word & ~(mask() << lsb)) | ((value & mask()) << lsb);
  }
};

enum class DtypeKind : std::uint8_t { kFloat, kSigned, kUnsigned };
struct DtypeInfo {
  const char* name;
  std::uint8_t bytes;
  DtypeKind kind;
};

// What an operand is, in the assembly form of an operation (isa.yaml, "operands").
enum class OperandKind : std::uint8_t {
  kV,
  kS,
  kI,
  kVp,
  kSp,      // a register of that file
  kVsi,     // b: a vector, a scalar broadcast, or the immediate
  kSi,      // b: a scalar or the immediate, of the operation's type
  kUi,      // b: a scalar or the immediate, an integer (address, lane number)
  kTensor,  // b: a tensor number, a literal
  kLane,    // c: a lane group, a literal
  kLabel,   // the bundle's immediate: a bundle index
  kDims,    // modifier: a mask of dimensions
  kDim,     // modifier: one dimension
};
enum class Role : std::uint8_t { kNone, kD, kA, kB, kC };
struct OperandSpec {
  Role role = Role::kNone;
  OperandKind kind = OperandKind::kV;
  bool optional = false;
};
enum class Suffix : std::uint8_t { kNone, kCond, kCvt, kSrcType, kStep };
enum class MemoryClass : std::uint8_t {
  kNone,
  kGlobalLoad,
  kGlobalStore,
  kLocalLoad,
  kLocalStore,
  kFence
};
enum class Control : std::uint8_t { kNone, kLoop, kJump, kHalt };
// The b_kind field: what operand b is.
enum class BKind : std::uint8_t { kRegister = 0, kScalar = 1, kImmediate = 2 };

struct OpInfo {
  const char* name;
  Slot slot;
  std::uint8_t opcode;
  std::array<OperandSpec, 4> operands;
  std::uint8_t operand_count;
  Suffix suffix;
  std::uint16_t dtypes;        // bit per Dtype code; 0: the operation takes no type
  std::uint16_t rtl_dtypes;    // the types the RTL vector ALU implements
  std::uint8_t latency;        // latency class (LatencyClass) of the result
  std::uint8_t float_latency;  // the class for float types
  std::uint8_t increment;      // the class of operand b's auto-increment; 255: none
  MemoryClass memory;
  Control control;
  bool reads_d;
};
struct AccuracyInfo {
  const char* name;
  int max_ulp;
};

}  // namespace podsim::tpc

#include "podsim/tpc/isa_table.inc"

namespace podsim::tpc {

inline const OpInfo& info(Op op) { return kOps[static_cast<int>(op)]; }
inline const DtypeInfo& info(Dtype t) { return kDtypes[static_cast<int>(t)]; }
inline int lanes(Dtype t) { return 256 / info(t).bytes; }
inline bool is_float(Dtype t) { return info(t).kind == DtypeKind::kFloat; }
inline bool takes(Op op, Dtype t) { return (info(op).dtypes >> static_cast<int>(t)) & 1; }
// Bundles until the result of `op` on type `t` is visible, on a core of generation `g`
// (isa.yaml's latency classes, from tpc_llvm's tables).
inline int latency(Op op, Dtype t, Generation g) {
  const OpInfo& o = info(op);
  const int cls = is_float(t) && o.dtypes != 0 ? o.float_latency : o.latency;
  return kLatencies[static_cast<int>(g)][cls];
}
// Auto-incrementing local-memory accesses advance their address register b by this many bytes,
// visible after increment_latency().
inline constexpr std::uint32_t kAutoIncrement = 256;
inline bool increments_b(Op op) { return info(op).increment != 255; }
inline int increment_latency(Op op, Generation g) {
  return kLatencies[static_cast<int>(g)][info(op).increment];
}
// The longest latency of any class on any generation: what a result waits at most.
int max_latency();
inline const char* to_string(Generation g) { return kGenerationNames[static_cast<int>(g)]; }
std::optional<Generation> find_generation(std::string_view name);
std::optional<Dtype> find_dtype(std::string_view name);
std::optional<Cond> find_cond(std::string_view name);
std::optional<Op> find_op(Slot slot, int opcode);
// Every operation of that name (one per slot it exists in).
std::vector<Op> find_ops(std::string_view name);
// The register count of a register operand's file (v, s, i, vp, sp); 0 for other kinds.
int register_count(OperandKind kind);

// One slot's instruction, decoded. Fields an operation does not use are zero.
struct Instruction {
  bool nop = true;
  Op op{};
  Dtype dtype = Dtype::kF32;
  std::uint8_t dst = 0, a = 0, b = 0, c = 0;
  std::uint8_t pred = 0;
  bool pred_not = false, pred_vector = false;
  BKind b_kind = BKind::kRegister;
  std::uint8_t modifier = 0;

  friend bool operator==(const Instruction& x, const Instruction& y);
};

struct Bundle {
  std::array<Instruction, kSlotCount> slots{};
  std::uint32_t immediate = 0;
  const Instruction& slot(Slot s) const { return slots[static_cast<int>(s)]; }
  Instruction& slot(Slot s) { return slots[static_cast<int>(s)]; }
  friend bool operator==(const Bundle& x, const Bundle& y) {
    return x.slots == y.slots && x.immediate == y.immediate;
  }
};

using EncodedBundle = std::array<std::uint8_t, kBundleBytes>;

std::uint64_t encode_slot(const Instruction& instruction);
EncodedBundle encode_bundle(const Bundle& bundle);
// Decodes without judging: any opcode that names no operation gives a nop with
// `undefined` set to the opcode, so that check_bundle can report it.
struct DecodedBundle {
  Bundle bundle;
  std::array<int, kSlotCount> undefined{};  // nonzero: the slot held this undefined opcode
  bool reserved_bits = false;
};
DecodedBundle decode_bundle(const std::uint8_t* bytes);
// What is wrong with a bundle as a core would run it, or nullopt: an undefined opcode, a type the
// operation does not take, a register past its file, a write to sp0/vp0, a literal out of range,
// a vector predicate in a slot that has none, reserved bits set.
std::optional<std::string> check_bundle(const DecodedBundle& decoded);

// The kernel binary a core fetches from KERNEL_BASE_ADDRESS: a 32-byte header (magic "TPCK",
// ISA version, header size, bundle count, the generation its bundles were scheduled for, one
// more than its code) followed by the bundles.
inline constexpr std::uint32_t kBinaryMagic = 0x4B435054;  // "TPCK" little-endian
inline constexpr std::size_t kBinaryHeaderBytes = 32;
inline constexpr std::uint32_t kMaxBundles = 1u << 20;
std::vector<std::uint8_t> serialize_binary(const std::vector<Bundle>& bundles,
                                           Generation generation);
// The generation a binary was scheduled for (the header after binary_bundle_count checked it).
Generation binary_generation(const std::uint8_t* header);
// The bundle count from a binary's header; throws std::invalid_argument on a bad magic, version
// or count.
std::uint32_t binary_bundle_count(const std::uint8_t* header);
// Every bundle, decoded and checked; throws std::invalid_argument naming the bundle at fault.
std::vector<Bundle> parse_binary(const std::vector<std::uint8_t>& binary);

}  // namespace podsim::tpc
