// Random but valid TPC instructions, bundles and programs, for the round-trip and fuzz tests:
// every field within what its operand form allows, at most one immediate per bundle, jump and
// loop targets inside the program.
#pragma once

#include <optional>
#include <random>
#include <vector>

#include "hw/tpc/isa.h"

namespace podsim::tpc::testing {

inline int pick(std::mt19937& rng, int n) {
  return static_cast<int>(rng() % static_cast<unsigned>(n));
}

inline Dtype pick_type(std::mt19937& rng, std::uint16_t mask) {
  std::vector<int> codes;
  for (int t = 0; t < kDtypeCount; ++t)
    if ((mask >> t) & 1) codes.push_back(t);
  return static_cast<Dtype>(
      codes[static_cast<std::size_t>(pick(rng, static_cast<int>(codes.size())))]);
}

// A conversion's source type for destination `to` that the VPU has (same width, widening, or
// narrowing by two).
inline Dtype pick_source(std::mt19937& rng, Op op, Dtype to) {
  std::vector<Dtype> ok;
  for (int t = 0; t < kDtypeCount; ++t) {
    const auto from = static_cast<Dtype>(t);
    if (info(op).slot == Slot::kSpu) {
      if (takes(op, from)) ok.push_back(from);
      continue;
    }
    const int fb = info(from).bytes, tb = info(to).bytes;
    if (fb <= tb || fb == 2 * tb) ok.push_back(from);
  }
  return ok[static_cast<std::size_t>(pick(rng, static_cast<int>(ok.size())))];
}

// One instruction of `op`; `pc` and `count` bound a label; `immediate_free` says whether it may
// take the bundle's immediate (returned through `immediate`, which it sets when it does).
inline Instruction random_instruction(std::mt19937& rng, Op op, std::uint32_t pc,
                                      std::uint32_t count, bool immediate_free,
                                      std::optional<std::uint32_t>& immediate) {
  Instruction in;
  in.nop = false;
  in.op = op;
  const OpInfo& o = info(op);
  if (o.dtypes) in.dtype = pick_type(rng, o.dtypes);
  switch (o.suffix) {
    case Suffix::kCond:
      in.modifier = static_cast<std::uint8_t>(pick(rng, kCondCount));
      break;
    case Suffix::kCvt:
      in.modifier = static_cast<std::uint8_t>(pick(rng, 2));
      break;
    case Suffix::kSrcType:
      in.modifier = static_cast<std::uint8_t>(pick_source(rng, op, in.dtype));
      break;
    case Suffix::kStep: {
      int step = 0;
      while (step == 0) step = pick(rng, 32) - 16;
      in.modifier = static_cast<std::uint8_t>(step & 31);
      break;
    }
    case Suffix::kNone:
      break;
  }
  for (int i = 0; i < o.operand_count; ++i) {
    const OperandSpec& s = o.operands[static_cast<std::size_t>(i)];
    std::uint8_t* field = s.role == Role::kD   ? &in.dst
                          : s.role == Role::kA ? &in.a
                          : s.role == Role::kB ? &in.b
                                               : &in.c;
    switch (s.kind) {
      case OperandKind::kV:
      case OperandKind::kS:
      case OperandKind::kI:
        *field = static_cast<std::uint8_t>(pick(rng, register_count(s.kind)));
        break;
      case OperandKind::kVp:
      case OperandKind::kSp:
        *field = static_cast<std::uint8_t>(s.role == Role::kD ? 1 + pick(rng, 15) : pick(rng, 16));
        break;
      case OperandKind::kVsi:
      case OperandKind::kSi:
      case OperandKind::kUi: {
        const int kinds = s.kind == OperandKind::kVsi ? 3 : 2;
        int k = pick(rng, immediate_free ? kinds : kinds - 1);
        if (s.kind != OperandKind::kVsi && k == 1) k = 2;
        in.b_kind = static_cast<BKind>(k);
        if (in.b_kind == BKind::kImmediate) {
          immediate = static_cast<std::uint32_t>(rng());
        } else {
          const bool vector = s.kind == OperandKind::kVsi && in.b_kind == BKind::kRegister;
          *field = static_cast<std::uint8_t>(pick(rng, vector ? kVRegisters : kSRegisters));
        }
        break;
      }
      case OperandKind::kTensor:
        *field = static_cast<std::uint8_t>(pick(rng, 16));
        break;
      case OperandKind::kLane:
        break;  // set with the conversion below
      case OperandKind::kLabel:
        immediate =
            o.control == Control::kLoop
                ? pc + 2 + static_cast<std::uint32_t>(pick(rng, static_cast<int>(count - pc - 1)))
                : static_cast<std::uint32_t>(pick(rng, static_cast<int>(count)));
        break;
      case OperandKind::kDims:
        in.modifier = static_cast<std::uint8_t>(1 + pick(rng, 31));
        break;
      case OperandKind::kDim:
        in.modifier = static_cast<std::uint8_t>(pick(rng, 5));
        break;
    }
  }
  if (op == Op::kVpuCvt) {
    const int from = info(static_cast<Dtype>(in.modifier)).bytes, to = info(in.dtype).bytes;
    in.b = from == 2 * to ? static_cast<std::uint8_t>(pick(rng, kVRegisters)) : 0;
    in.c = from < to ? static_cast<std::uint8_t>(pick(rng, to / from)) : 0;
  }
  in.pred = static_cast<std::uint8_t>(pick(rng, 16));
  in.pred_not = pick(rng, 2);
  in.pred_vector = (o.slot == Slot::kLoad || o.slot == Slot::kVpu) && pick(rng, 2);
  return in;
}

inline std::vector<Op> ops_of(Slot slot) {
  std::vector<Op> out;
  for (int i = 0; i < kOpCount; ++i)
    if (kOps[i].slot == slot) out.push_back(static_cast<Op>(i));
  return out;
}

inline bool uses_label(Op op) {
  const OpInfo& o = info(op);
  for (int i = 0; i < o.operand_count; ++i)
    if (o.operands[static_cast<std::size_t>(i)].kind == OperandKind::kLabel) return true;
  return false;
}

// A bundle at `pc` of a program of `count` bundles (a loop needs pc + 2 <= count).
inline Bundle random_bundle(std::mt19937& rng, std::uint32_t pc, std::uint32_t count) {
  Bundle b;
  std::optional<std::uint32_t> immediate;
  for (int s = 0; s < kSlotCount; ++s) {
    if (pick(rng, 3) == 0) continue;
    const std::vector<Op> ops = ops_of(static_cast<Slot>(s));
    Op op = ops[static_cast<std::size_t>(pick(rng, static_cast<int>(ops.size())))];
    if (uses_label(op) && (immediate || (info(op).control == Control::kLoop && pc + 2 > count)))
      continue;
    std::optional<std::uint32_t> mine;
    b.slots[static_cast<std::size_t>(s)] = random_instruction(rng, op, pc, count, !immediate, mine);
    if (mine) immediate = mine;
  }
  b.immediate = immediate.value_or(0);
  return b;
}

inline std::vector<Bundle> random_program(std::mt19937& rng, std::uint32_t count) {
  std::vector<Bundle> out;
  for (std::uint32_t pc = 0; pc < count; ++pc) out.push_back(random_bundle(rng, pc, count));
  return out;
}

}  // namespace podsim::tpc::testing
