#include "hw/tpc/scheduler.h"

#include <algorithm>
#include <map>

namespace podsim::tpc {
namespace {

// A register as the scheduler tracks it: file (by operand kind) and number.
using Reg = std::pair<int, int>;

Reg reg_of(OperandKind kind, int number) { return {static_cast<int>(kind), number}; }

struct Uses {
  std::vector<Reg> reads, writes;
  int incremented = -1;  // which of writes is an auto-incremented address register (its latency)
};

// The registers an instruction reads and writes, from its operation's operand forms.
Uses uses_of(const Instruction& in) {
  Uses u;
  const OpInfo& op = info(in.op);
  const auto field_of = [&](Role role) -> int {
    switch (role) {
      case Role::kD:
        return in.dst;
      case Role::kA:
        return in.a;
      case Role::kB:
        return in.b;
      case Role::kC:
        return in.c;
      case Role::kNone:
        return 0;
    }
    return 0;
  };
  for (int i = 0; i < op.operand_count; ++i) {
    const OperandSpec& o = op.operands[static_cast<std::size_t>(i)];
    if (o.role == Role::kNone) continue;
    OperandKind kind = o.kind;
    if (kind == OperandKind::kVsi || kind == OperandKind::kSi || kind == OperandKind::kUi) {
      if (in.b_kind == BKind::kImmediate) continue;
      kind = (kind == OperandKind::kVsi && in.b_kind == BKind::kRegister) ? OperandKind::kV
                                                                          : OperandKind::kS;
    }
    if (register_count(kind) == 0) continue;  // literals
    const Reg r = reg_of(kind, field_of(o.role));
    if (o.role == Role::kD) {
      u.writes.push_back(r);
      if (op.reads_d) u.reads.push_back(r);
    } else {
      u.reads.push_back(r);
      if (o.role == Role::kB && increments_b(in.op)) {
        u.incremented = static_cast<int>(u.writes.size());
        u.writes.push_back(r);
      }
    }
  }
  u.reads.push_back(reg_of(in.pred_vector ? OperandKind::kVp : OperandKind::kSp, in.pred));
  return u;
}

struct RegState {
  int last_write = -1, write_latency = 0;
  int last_read = -1;
  // For a loop body: the earliest read before the block's first write of the register (what the
  // pass before must have landed by), and that first write.
  int read_before_write = -1;
  int first_write = -1, first_write_latency = 0;
};

}  // namespace

BlockSchedule schedule_block(const std::vector<ScheduleItem>& block, Generation generation,
                             bool loop_body) {
  BlockSchedule out;
  if (block.empty()) return out;
  struct Row {
    std::array<bool, kSlotCount> taken{};
    std::optional<std::uint32_t> immediate;
    bool label = false;
  };
  std::vector<Row> rows;
  std::map<Reg, RegState> regs;
  int memory_floor = 0;  // a memory operation goes no earlier than this
  int after_store = 0;   // a load goes no earlier than this
  int last_memory = -1;  // the latest memory operation placed
  int drained = 0;       // every result so far has landed by this bundle
  int latest = 0;        // the latest bundle used

  for (const ScheduleItem& item : block) {
    const Instruction& in = item.instruction;
    const OpInfo& op = info(in.op);
    const int op_latency = latency(in.op, in.dtype, generation);
    const Uses u = uses_of(in);
    const auto write_latency = [&](std::size_t w) {
      return static_cast<int>(w) == u.incremented ? increment_latency(in.op, generation)
                                                  : op_latency;
    };
    int earliest = 0;
    for (const Reg& r : u.reads) {
      const RegState& s = regs[r];
      if (s.last_write >= 0) earliest = std::max(earliest, s.last_write + s.write_latency);
    }
    for (std::size_t w = 0; w < u.writes.size(); ++w) {
      const RegState& s = regs[u.writes[w]];
      earliest = std::max(earliest, s.last_read);
      if (s.last_write >= 0) {
        earliest = std::max(
            {earliest, s.last_write, s.last_write + s.write_latency - write_latency(w) + 1});
      }
    }
    const bool is_load =
        op.memory == MemoryClass::kGlobalLoad || op.memory == MemoryClass::kLocalLoad;
    const bool is_store =
        op.memory == MemoryClass::kGlobalStore || op.memory == MemoryClass::kLocalStore;
    if (op.memory != MemoryClass::kNone) earliest = std::max(earliest, memory_floor);
    if (is_load) earliest = std::max(earliest, after_store);
    if (op.memory == MemoryClass::kFence) earliest = std::max(earliest, last_memory);
    if (op.control != Control::kNone) earliest = std::max({earliest, latest, drained - 1});

    const int slot = static_cast<int>(op.slot);
    int b = earliest;
    for (;; ++b) {
      if (static_cast<std::size_t>(b) >= rows.size()) rows.resize(static_cast<std::size_t>(b) + 1);
      Row& row = rows[static_cast<std::size_t>(b)];
      if (row.taken[static_cast<std::size_t>(slot)]) continue;
      const bool wants_immediate = item.immediate.has_value() || item.label;
      if (wants_immediate &&
          (row.label || (row.immediate && (item.label || *row.immediate != *item.immediate)))) {
        continue;
      }
      row.taken[static_cast<std::size_t>(slot)] = true;
      if (item.label) row.label = true;
      if (item.immediate) row.immediate = item.immediate;
      break;
    }
    out.bundle_of.push_back(b);
    latest = std::max(latest, b);
    for (const Reg& r : u.reads) {
      RegState& s = regs[r];
      s.last_read = std::max(s.last_read, b);
      if (s.last_write < 0)
        s.read_before_write = s.read_before_write < 0 ? b : std::min(s.read_before_write, b);
    }
    for (std::size_t w = 0; w < u.writes.size(); ++w) {
      RegState& s = regs[u.writes[w]];
      if (s.first_write < 0) {
        s.first_write = b;
        s.first_write_latency = write_latency(w);
      }
      s.last_write = b;
      s.write_latency = write_latency(w);
      drained = std::max(drained, b + write_latency(w));
    }
    if (u.writes.empty()) drained = std::max(drained, b + op_latency);
    if (op.memory != MemoryClass::kNone) {
      memory_floor = std::max(memory_floor, b);
      last_memory = std::max(last_memory, b);
    }
    if (is_store) after_store = std::max(after_store, b + 1);
    if (op.memory == MemoryClass::kFence) memory_floor = after_store = b + 1;
  }
  out.bundles = std::max(latest + 1, drained);
  if (loop_body) {
    // The next pass starts right after this one: long enough that its reads see this pass's
    // writes and its writes land after them; what lands later is waited out after the loop.
    int length = latest + 1;
    for (const auto& [reg, s] : regs) {
      if (s.last_write < 0) continue;
      const int lands = s.last_write + s.write_latency;
      if (s.read_before_write >= 0) length = std::max(length, lands - s.read_before_write);
      if (s.first_write != s.last_write || s.first_write_latency != s.write_latency)
        length = std::max(length, lands - (s.first_write + s.first_write_latency) + 1);
    }
    out.bundles = length;
    out.residual = std::max(0, drained - length);
  }
  if (info(block.back().instruction.op).control != Control::kNone) {
    out.bundles = latest + 1;  // the control bundle is last; it waited for the drain itself
  }
  return out;
}

}  // namespace podsim::tpc
