#include "hw/tpc/executor.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <stdexcept>

#include "hw/tpc/numerics.h"

namespace podsim::tpc {
namespace {

enum File : int { kFileV, kFileS, kFileI, kFileVp, kFileSp };
constexpr const char* kFileNames[] = {"v", "s", "i", "vp", "sp"};
// Architectural vector registers plus every write that can be in flight (two vector-writing
// slots, fifteen bundles deep), and one spare.
constexpr int kPhysicalVectors = kVRegisters + 2 * (Executor::kMaxLatency + 1) + 1;

std::int32_t signed_of(std::uint32_t u) { return static_cast<std::int32_t>(u); }

}  // namespace

// One slot's instruction as the executor runs it.
struct Program::Decoded {
  bool active = false;
  Op op{};
  Slot slot = Slot::kLoad;
  Dtype dtype = Dtype::kF32;
  std::uint8_t dst = 0, a = 0, b = 0, c = 0, pred = 0, modifier = 0, latency = 1;
  std::uint8_t increment_latency = 0;  // an auto-incrementing access: its address register's
  bool pred_not = false, pred_vector = false;
  BKind b_kind = BKind::kRegister;
  OperandKind b_operand = OperandKind::kV;
  VpuFn vpu = nullptr;
  std::uint32_t immediate = 0;
};

// ---------------------------------------------------------------- tensors

TensorDescriptor TensorDescriptor::dense(std::uint64_t base, Dtype dtype,
                                         std::vector<std::uint32_t> sizes, std::uint32_t padding) {
  TensorDescriptor t;
  t.base = base;
  t.dtype = dtype;
  t.dims = static_cast<int>(sizes.size());
  t.padding = padding;
  std::uint64_t stride = 1;
  for (std::size_t d = 0; d < sizes.size() && d < kMaxDims; ++d) {
    t.size[d] = sizes[d];
    t.stride[d] = stride;
    stride *= sizes[d];
  }
  return t;
}

std::uint64_t TensorDescriptor::elements() const {
  std::uint64_t n = 1;
  for (int d = 0; d < dims; ++d) n *= size[static_cast<std::size_t>(d)];
  return n;
}

std::uint64_t TensorDescriptor::span_bytes() const {
  std::uint64_t last = 0;
  for (int d = 0; d < dims; ++d) {
    const auto i = static_cast<std::size_t>(d);
    if (size[i] == 0) return 0;
    last += (size[i] - 1) * stride[i];
  }
  return (last + 1) * info(dtype).bytes;
}

std::optional<std::string> TensorDescriptor::problem() const {
  if (dims < 1 || dims > kMaxDims) return fmt::format("{} dimensions (1 to 5)", dims);
  if (static_cast<int>(dtype) >= kDtypeCount) return fmt::format("type code {}", int(dtype));
  for (int d = 0; d < dims; ++d) {
    if (size[static_cast<std::size_t>(d)] > static_cast<std::uint32_t>(INT32_MAX)) {
      return fmt::format("dimension {} has {} elements", d, size[static_cast<std::size_t>(d)]);
    }
  }
  return std::nullopt;
}

// ---------------------------------------------------------------- set-up

Executor::Executor(const ExecutorConfig& config, GlobalAccess& access)
    : config_(config), access_(access) {
  vphys_.resize(kPhysicalVectors);
  vlm_.resize(config_.vlm_bytes);
  slm_.resize(config_.slm_bytes);
  for (auto& slot : pending_) slot.writes.reserve(8);
}

Executor::~Executor() = default;

Program::~Program() = default;

Program::Program(const std::vector<std::uint8_t>& binary)
    : Program(parse_binary(binary), binary_generation(binary.data())) {}

Program::Program(const std::vector<Bundle>& bundles, Generation generation)
    : generation_(generation) {
  if (bundles.empty()) throw std::invalid_argument("a kernel needs at least one bundle");
  bundle_count_ = static_cast<std::uint32_t>(bundles.size());
  ops_.resize(bundles.size() * kSlotCount);
  for (std::size_t pc = 0; pc < bundles.size(); ++pc) {
    for (int s = 0; s < kSlotCount; ++s) {
      const Instruction& in = bundles[pc].slots[static_cast<std::size_t>(s)];
      Decoded& d = ops_[pc * kSlotCount + static_cast<std::size_t>(s)];
      if (in.nop) continue;
      const OpInfo& op = info(in.op);
      d.active = true;
      d.op = in.op;
      d.slot = op.slot;
      d.dtype = in.dtype;
      d.dst = in.dst, d.a = in.a, d.b = in.b, d.c = in.c;
      d.pred = in.pred, d.pred_not = in.pred_not, d.pred_vector = in.pred_vector;
      d.b_kind = in.b_kind;
      d.modifier = in.modifier;
      d.latency = static_cast<std::uint8_t>(latency(in.op, in.dtype, generation));
      if (increments_b(in.op))
        d.increment_latency = static_cast<std::uint8_t>(increment_latency(in.op, generation));
      d.immediate = bundles[pc].immediate;
      for (int i = 0; i < op.operand_count; ++i) {
        if (op.operands[static_cast<std::size_t>(i)].role == Role::kB)
          d.b_operand = op.operands[static_cast<std::size_t>(i)].kind;
      }
      if (op.slot == Slot::kVpu) d.vpu = vpu_function(in.op, in.dtype);
      if (op.control == Control::kLoop && (d.immediate <= pc + 1 || d.immediate > bundles.size())) {
        throw std::invalid_argument(fmt::format(
            "bundle {}: loop ends at bundle {}; its body must hold at least one bundle of the {}",
            pc, d.immediate, bundles.size()));
      }
      if (op.control == Control::kJump && d.immediate >= bundles.size()) {
        throw std::invalid_argument(
            fmt::format("bundle {}: jump to bundle {} of {}", pc, d.immediate, bundles.size()));
      }
    }
  }
}

void Executor::start(std::shared_ptr<const Program> program, const LaunchState& launch) {
  slot_ops_.fill(0);
  program_ = std::move(program);
  launch_ = launch;
  state_ = State::kRunning;
  error_.clear();
  pc_ = 0;
  issued_ = 0;
  loop_depth_ = 0;
  hazards_.clear();
  for (auto& slot : pending_) slot.clear();
  for (auto& file : ready_at_) file.fill(0);
  vfree_.clear();
  for (int p = kPhysicalVectors - 1; p >= kVRegisters; --p) vfree_.push_back(p);
  for (int r = 0; r < kVRegisters; ++r) {
    vmap_[static_cast<std::size_t>(r)] = r;
    std::memset(&vphys_[static_cast<std::size_t>(r)], 0, sizeof(Vector));
  }
  sregs_.fill(0);
  std::copy(launch.srf.begin(), launch.srf.end(), sregs_.begin());
  iregs_.fill(Coord{});
  iregs_[0] = launch.slice_start;
  iregs_[1] = launch.slice_end;
  vpreds_.fill(VMask{});
  vpreds_[0] = VMask::all();
  spreds_.fill(false);
  spreds_[0] = true;
  std::fill(vlm_.begin(), vlm_.end(), 0);
  std::fill(slm_.begin(), slm_.end(), 0);
  for (int t = 0; t < kMaxTensors; ++t) {
    if (auto problem = launch.tensors[static_cast<std::size_t>(t)].problem()) {
      launch_.tensors[static_cast<std::size_t>(t)].dims = 0;  // unusable; an access fails
    }
  }
}

const Vector& Executor::vreg(int r) const {
  return vphys_[static_cast<std::size_t>(vmap_[static_cast<std::size_t>(r)])];
}

void Executor::fail(const std::string& message) {
  if (state_ == State::kFailed) return;
  state_ = State::kFailed;
  error_ = fmt::format("bundle {}: {}", pc_, message);
}

// ---------------------------------------------------------------- the bundle loop

Executor::State Executor::step() {
  if (state_ != State::kRunning) return state_;
  commit_due();
  const std::uint32_t pc = pc_;
  next_pc_ = pc + 1;
  const Decoded* ops = &program_->ops_[static_cast<std::size_t>(pc) * kSlotCount];
  for (int s = 0; s < kSlotCount; ++s) {
    if (!ops[s].active) continue;
    ++slot_ops_[static_cast<std::size_t>(s)];
    execute(ops[s]);
    if (state_ == State::kFailed) return state_;
  }
  ++issued_;
  end_bundle(pc);
  return state_;
}

void Executor::end_bundle(std::uint32_t pc) {
  // A loop whose last bundle this was: advance its iterator (visible to the next bundle) and go
  // round again, or leave it (and perhaps the loop around it, ending here too).
  while (loop_depth_ > 0 && next_pc_ == pc + 1) {
    Loop& loop = loops_[static_cast<std::size_t>(loop_depth_ - 1)];
    if (loop.end != pc) break;
    std::uint32_t& iter = sregs_[loop.reg];
    iter = static_cast<std::uint32_t>(signed_of(iter) + loop.step);
    const bool again = loop.step > 0 ? signed_of(iter) < loop.limit : signed_of(iter) > loop.limit;
    if (again) {
      next_pc_ = loop.start;
      break;
    }
    --loop_depth_;
  }
  if (state_ == State::kHalted) return drain();
  if (state_ != State::kRunning) return;
  if (next_pc_ >= program_->bundle_count_) return fail("ran past the last bundle without halt");
  pc_ = next_pc_;
}

// The pipeline empties: every write in flight lands, in the order it was due.
void Executor::drain() {
  for (int n = 0; n <= kMaxLatency; ++n) {
    commit_due();
    ++issued_;
  }
  issued_ -= kMaxLatency + 1;
}

void Executor::commit_due() {
  DueSlot& due = pending_[issued_ % (kMaxLatency + 1)];
  for (const Pending& p : due.writes) {
    switch (p.file) {
      case kFileV: {
        int& mapped = vmap_[p.reg];
        if (p.lane_bytes == 0) {
          vfree_.push_back(mapped);
          mapped = static_cast<int>(p.value);
          break;
        }
        // A masked write: the mask waits in the payloads, the new value in its own register.
        const VMask& mask = due.masks[p.payload];
        Vector& dst = vphys_[static_cast<std::size_t>(mapped)];
        const Vector& src = vphys_[p.value];
        for (int lane = 0; lane < 256 / p.lane_bytes; ++lane) {
          if (mask.test(lane)) {
            std::memcpy(dst.u8 + lane * p.lane_bytes, src.u8 + lane * p.lane_bytes, p.lane_bytes);
          }
        }
        vfree_.push_back(static_cast<int>(p.value));
        break;
      }
      case kFileS:
        sregs_[p.reg] = p.value;
        break;
      case kFileI:
        iregs_[p.reg] = due.indices[p.payload];
        break;
      case kFileVp:
        vpreds_[p.reg] = due.masks[p.payload];
        break;
      case kFileSp:
        spreds_[p.reg] = p.flag;
        break;
    }
  }
  due.clear();
}

Executor::DueSlot& Executor::schedule_write(int file, std::uint8_t reg, int latency) {
  const std::uint64_t due = issued_ + static_cast<std::uint64_t>(latency);
  if (config_.check_hazards) {
    std::uint64_t& ready = ready_at_[static_cast<std::size_t>(file)][reg];
    ready = std::max(ready, due);
  }
  return pending_[due % (kMaxLatency + 1)];
}

void Executor::execute(const Decoded& op) {
  switch (op.slot) {
    case Slot::kLoad:
      return execute_load(op);
    case Slot::kSpu:
      return execute_spu(op);
    case Slot::kVpu:
      return execute_vpu(op);
    case Slot::kStore:
      return execute_store(op);
  }
}

// ---------------------------------------------------------------- operands

void Executor::check_read(int file, int r, Slot slot) {
  if (!config_.check_hazards) return;
  if (ready_at_[static_cast<std::size_t>(file)][static_cast<std::size_t>(r)] > issued_) {
    hazards_.push_back(Hazard{pc_, slot, fmt::format("{}{}", kFileNames[file], r)});
  }
}

const Vector& Executor::read_v(int r, Slot slot) {
  check_read(kFileV, r, slot);
  return vphys_[static_cast<std::size_t>(vmap_[static_cast<std::size_t>(r)])];
}
std::uint32_t Executor::read_s(int r, Slot slot) {
  check_read(kFileS, r, slot);
  return sregs_[static_cast<std::size_t>(r)];
}
const Coord& Executor::read_i(int r, Slot slot) {
  check_read(kFileI, r, slot);
  return iregs_[static_cast<std::size_t>(r)];
}
const VMask& Executor::read_vp(int r, Slot slot) {
  check_read(kFileVp, r, slot);
  return vpreds_[static_cast<std::size_t>(r)];
}
bool Executor::read_sp(int r, Slot slot) {
  check_read(kFileSp, r, slot);
  return spreds_[static_cast<std::size_t>(r)];
}

std::uint32_t Executor::read_b_scalar(const Decoded& op) {
  return op.b_kind == BKind::kImmediate ? op.immediate : read_s(op.b, op.slot);
}

const Vector& Executor::read_b_vector(const Decoded& op, Vector& scratch) {
  if (op.b_kind == BKind::kRegister) return read_v(op.b, op.slot);
  broadcast_scalar(read_b_scalar(op), op.dtype, scratch);
  return scratch;
}

bool Executor::predicate_passes(const Decoded& op, VMask& lanes) {
  if (op.pred_vector) {
    lanes = read_vp(op.pred, op.slot);
    if (op.pred_not) {
      for (auto& w : lanes.words) w = ~w;
    }
    return true;
  }
  return read_sp(op.pred, op.slot) != op.pred_not;
}

// ---------------------------------------------------------------- writes

// In a timing-only run no vector value is ever read (ExecutorConfig::vector_data), so results
// go to a scratch register and no write is queued: renaming them would only cost time.
Vector& Executor::new_vector(const Decoded&, int& phys) {
  if (!config_.vector_data) {
    phys = -1;
    return scratch_;
  }
  phys = vfree_.back();
  vfree_.pop_back();
  return vphys_[static_cast<std::size_t>(phys)];
}

void Executor::write_v_phys(const Decoded& op, int phys, const VMask* lanes, int lane_bytes) {
  DueSlot& due = schedule_write(kFileV, op.dst, op.latency);
  if (phys < 0) return;
  Pending p;
  p.file = kFileV;
  p.reg = op.dst;
  p.value = static_cast<std::uint32_t>(phys);
  if (lanes) {
    p.lane_bytes = static_cast<std::uint8_t>(lane_bytes);
    p.payload = static_cast<std::uint16_t>(due.masks.size());
    due.masks.push_back(*lanes);
  }
  due.writes.push_back(p);
}

void Executor::write_v(const Decoded& op, const Vector& value, const VMask* lanes, int lane_bytes) {
  int phys = 0;
  new_vector(op, phys) = value;
  write_v_phys(op, phys, lanes, lane_bytes);
}

void Executor::queue_scalar(int file, std::uint8_t reg, std::uint32_t value, bool flag,
                            int latency) {
  Pending p;
  p.file = static_cast<std::uint8_t>(file);
  p.reg = reg;
  p.value = value;
  p.flag = flag;
  schedule_write(file, reg, latency).writes.push_back(p);
}

// An auto-incrementing access: its address register b holds `address` + 256 after the
// increment's latency.
void Executor::advance(const Decoded& op, std::uint32_t address) {
  queue_scalar(kFileS, op.b, address + kAutoIncrement, false, op.increment_latency);
}

void Executor::write_s(const Decoded& op, std::uint32_t value) {
  queue_scalar(kFileS, op.dst, value, false, op.latency);
}

void Executor::write_i(const Decoded& op, const Coord& value) {
  DueSlot& due = schedule_write(kFileI, op.dst, op.latency);
  Pending p;
  p.file = kFileI;
  p.reg = op.dst;
  p.payload = static_cast<std::uint16_t>(due.indices.size());
  due.indices.push_back(value);
  due.writes.push_back(p);
}

void Executor::write_vp(const Decoded& op, const VMask& value) {
  DueSlot& due = schedule_write(kFileVp, op.dst, op.latency);
  Pending p;
  p.file = kFileVp;
  p.reg = op.dst;
  p.payload = static_cast<std::uint16_t>(due.masks.size());
  due.masks.push_back(value);
  due.writes.push_back(p);
}

void Executor::write_sp(const Decoded& op, bool value) {
  queue_scalar(kFileSp, op.dst, 0, value, op.latency);
}

// ---------------------------------------------------------------- VPU

void Executor::execute_vpu(const Decoded& op) {
  // A timing-only run computes no vector value, and a VPU operation writes nothing else (its
  // predicate masks are vector values too), so unless reads are being checked it has no effect.
  if (!config_.vector_data && !config_.check_hazards) return;
  VMask lanes;
  if (!predicate_passes(op, lanes)) return;
  const VMask* masked = op.pred_vector ? &lanes : nullptr;
  Vector scratch;
  VpuArgs args;
  const OpInfo& spec = info(op.op);
  for (int i = 0; i < spec.operand_count; ++i) {
    const OperandSpec& o = spec.operands[static_cast<std::size_t>(i)];
    if (o.role == Role::kA) args.a = &read_v(op.a, op.slot);
    if (o.role == Role::kB && o.kind == OperandKind::kUi) args.b_integer = read_b_scalar(op);
    if (o.role == Role::kB && o.kind != OperandKind::kUi) args.b = &read_b_vector(op, scratch);
    if (o.role == Role::kC && o.kind == OperandKind::kVp) args.c = &read_vp(op.c, op.slot);
  }
  if (spec.reads_d) args.d = &read_v(op.dst, op.slot);
  args.modifier = op.modifier;
  args.lane_group = op.c;
  if (op.op == Op::kVpuCmp) {
    VMask result;
    args.out_mask = &result;
    compute(op, args);
    if (masked) {  // lanes the predicate clears keep their bits
      const VMask& old = vpreds_[op.dst];
      for (std::size_t w = 0; w < 4; ++w) {
        result.words[w] = (result.words[w] & masked->words[w]) | (old.words[w] & ~masked->words[w]);
      }
    }
    write_vp(op, result);
    return;
  }
  int phys = 0;
  args.out = &new_vector(op, phys);
  compute(op, args);
  write_v_phys(op, phys, masked, info(op.dtype).bytes);
}

void Executor::compute(const Decoded& op, const VpuArgs& args) {
  if (!config_.vector_data) return;
  if (datapath_ == nullptr || !datapath_->execute(op.op, op.dtype, args)) op.vpu(args);
}

// ---------------------------------------------------------------- SPU

namespace {

std::uint32_t scalar_binary(Op op, Dtype t, std::uint32_t a, std::uint32_t b) {
  if (t == Dtype::kF32) {
    const float x = float_of(a), y = float_of(b);
    switch (op) {
      case Op::kSpuAdd:
        return bits_of(canonical(x + y));
      case Op::kSpuSub:
        return bits_of(canonical(x - y));
      case Op::kSpuMul:
        return bits_of(canonical(x * y));
      case Op::kSpuMin:
        return bits_of(min_f32(x, y));
      case Op::kSpuMax:
        return bits_of(max_f32(x, y));
      default:
        return 0;
    }
  }
  const bool is_signed = t == Dtype::kI32;
  const std::int32_t sa = signed_of(a), sb = signed_of(b);
  switch (op) {
    case Op::kSpuAdd:
      return a + b;
    case Op::kSpuSub:
      return a - b;
    case Op::kSpuMul:
      return a * b;
    case Op::kSpuDiv:
      if (b == 0) return 0;
      if (!is_signed) return a / b;
      if (sa == INT32_MIN && sb == -1) return a;
      return static_cast<std::uint32_t>(sa / sb);
    case Op::kSpuRem:
      if (b == 0) return a;
      if (!is_signed) return a % b;
      if (sb == -1) return 0;
      return static_cast<std::uint32_t>(sa % sb);
    case Op::kSpuMin:
      return is_signed ? static_cast<std::uint32_t>(std::min(sa, sb)) : std::min(a, b);
    case Op::kSpuMax:
      return is_signed ? static_cast<std::uint32_t>(std::max(sa, sb)) : std::max(a, b);
    case Op::kSpuAnd:
      return a & b;
    case Op::kSpuOr:
      return a | b;
    case Op::kSpuXor:
      return a ^ b;
    case Op::kSpuShl:
      return a << (b & 31);
    case Op::kSpuShr:
      return is_signed ? static_cast<std::uint32_t>(sa >> (b & 31)) : a >> (b & 31);
    default:
      return 0;
  }
}

bool scalar_compare(Dtype t, std::uint32_t a, std::uint32_t b, std::uint8_t cond) {
  const auto check = [cond](auto x, auto y) {
    switch (static_cast<Cond>(cond)) {
      case Cond::kEq:
        return x == y;
      case Cond::kNe:
        return x != y;
      case Cond::kLt:
        return x < y;
      case Cond::kLe:
        return x <= y;
      case Cond::kGt:
        return x > y;
      case Cond::kGe:
        return x >= y;
    }
    return false;
  };
  if (t == Dtype::kF32) return check(float_of(a), float_of(b));
  if (t == Dtype::kI32) return check(signed_of(a), signed_of(b));
  return check(a, b);
}

std::uint32_t scalar_convert(Dtype from, Dtype to, std::uint32_t v) {
  std::uint32_t out = 0;
  convert_elements(from, to, reinterpret_cast<const std::uint8_t*>(&v),
                   reinterpret_cast<std::uint8_t*>(&out), 1);
  return out;
}

}  // namespace

void Executor::execute_spu(const Decoded& op) {
  VMask unused;
  if (!predicate_passes(op, unused)) return;
  switch (op.op) {
    case Op::kSpuCmp:
      return write_sp(
          op, scalar_compare(op.dtype, read_s(op.a, op.slot), read_b_scalar(op), op.modifier));
    case Op::kSpuMov:
      return write_s(op, read_b_scalar(op));
    case Op::kSpuCvt:
      return write_s(
          op, scalar_convert(static_cast<Dtype>(op.modifier), op.dtype, read_s(op.a, op.slot)));
    case Op::kSpuMovI:
      return write_i(op, read_i(op.a, op.slot));
    case Op::kSpuSetI:
    case Op::kSpuAddI: {
      Coord c = read_i(op.op == Op::kSpuSetI ? op.dst : op.a, op.slot);
      const auto value = signed_of(read_b_scalar(op));
      for (int d = 0; d < kMaxDims; ++d) {
        if (!((op.modifier >> d) & 1)) continue;
        auto& coord = c[static_cast<std::size_t>(d)];
        coord = op.op == Op::kSpuSetI
                    ? value
                    : static_cast<std::int32_t>(static_cast<std::uint32_t>(coord) +
                                                static_cast<std::uint32_t>(value));
      }
      return write_i(op, c);
    }
    case Op::kSpuGetI:
      return write_s(op, static_cast<std::uint32_t>(read_i(op.a, op.slot)[op.modifier % kMaxDims]));
    case Op::kSpuLoop: {
      const std::int32_t iter = signed_of(read_s(op.dst, op.slot));
      const std::int32_t limit = signed_of(read_s(op.b, op.slot));
      const std::int32_t step = static_cast<std::int8_t>(op.modifier << 3) >> 3;  // 5-bit signed
      if (!(step > 0 ? iter < limit : iter > limit)) {
        next_pc_ = op.immediate;
        return;
      }
      if (loop_depth_ == kLoopDepth) return fail("loops nest deeper than four");
      loops_[static_cast<std::size_t>(loop_depth_++)] =
          Loop{pc_ + 1, op.immediate - 1, op.dst, limit, step};
      return;
    }
    case Op::kSpuJmp:
      next_pc_ = op.immediate;
      // Leaving a loop's body drops the loop (a break).
      while (loop_depth_ > 0) {
        const Loop& loop = loops_[static_cast<std::size_t>(loop_depth_ - 1)];
        if (next_pc_ >= loop.start && next_pc_ <= loop.end) break;
        --loop_depth_;
      }
      return;
    case Op::kSpuHalt:
      state_ = State::kHalted;
      return;
    default:
      return write_s(op, scalar_binary(op.op, op.dtype, read_s(op.a, op.slot), read_b_scalar(op)));
  }
}

// ---------------------------------------------------------------- memory

bool Executor::in_bounds(const TensorDescriptor& t, const Coord& at) const {
  for (int d = 0; d < t.dims; ++d) {
    const auto i = static_cast<std::size_t>(d);
    if (at[i] < 0 || static_cast<std::uint32_t>(at[i]) >= t.size[i]) return false;
  }
  return true;
}

std::uint64_t Executor::address_of(const TensorDescriptor& t, const Coord& at) const {
  std::uint64_t element = 0;
  for (int d = 0; d < t.dims; ++d) {
    element += static_cast<std::uint64_t>(at[static_cast<std::size_t>(d)]) *
               t.stride[static_cast<std::size_t>(d)];
  }
  return t.base + element * info(t.dtype).bytes;
}

void Executor::load_tensor(const Decoded& op, Vector& out) {
  const TensorDescriptor& t = launch_.tensors[op.b];
  const int elem = info(op.dtype).bytes;
  const bool convert = op.modifier & 1;
  const int count = convert ? 64 : 256 / elem;
  if (t.dims == 0)
    return fail(fmt::format("{}: tensor {} is not a valid tensor", info(op.op).name, op.b));
  if (info(t.dtype).bytes != elem) {
    return fail(fmt::format("{}.{} on tensor {} of {}", info(op.op).name, info(op.dtype).name, op.b,
                            info(t.dtype).name));
  }
  alignas(64) std::uint8_t raw[256];
  const bool data = config_.vector_data;
  for (int i = 0; data && i < count; ++i)
    std::memcpy(raw + i * elem, &t.padding, static_cast<std::size_t>(elem));
  Coord at = read_i(op.a, op.slot);
  const std::int32_t c0 = at[0];
  at[0] = 0;
  if (t.size[0] > 0 && in_bounds(t, at)) {
    const std::int64_t lo = std::max<std::int64_t>(0, -std::int64_t{c0});
    const std::int64_t hi = std::min<std::int64_t>(count, std::int64_t{t.size[0]} - c0);
    if (t.stride[0] == 1 && lo < hi) {
      at[0] = static_cast<std::int32_t>(c0 + lo);
      if (!access_.load(op.b, address_of(t, at), data ? raw + lo * elem : nullptr,
                        static_cast<std::uint32_t>((hi - lo) * elem))) {
        return fail(
            fmt::format("ld_tnsr: tensor {} at 0x{:X} is not mapped", op.b, address_of(t, at)));
      }
    } else {
      for (std::int64_t i = lo; i < hi; ++i) {
        at[0] = static_cast<std::int32_t>(c0 + i);
        if (!access_.load(op.b, address_of(t, at), data ? raw + i * elem : nullptr,
                          static_cast<std::uint32_t>(elem))) {
          return fail(
              fmt::format("ld_tnsr: tensor {} at 0x{:X} is not mapped", op.b, address_of(t, at)));
        }
      }
    }
  }
  if (!data) return;
  if (convert) {
    convert_elements(op.dtype, Dtype::kF32, raw, out.u8, 64);
  } else {
    std::memcpy(out.u8, raw, 256);
  }
}

void Executor::store_tensor(const Decoded& op, const Vector& value) {
  const TensorDescriptor& t = launch_.tensors[op.b];
  const int elem = info(op.dtype).bytes;
  const bool convert = op.modifier & 1;
  const int count = convert ? 64 : 256 / elem;
  if (t.dims == 0) return fail(fmt::format("st_tnsr: tensor {} is not a valid tensor", op.b));
  if (info(t.dtype).bytes != elem) {
    return fail(fmt::format("st_tnsr.{} on tensor {} of {}", info(op.dtype).name, op.b,
                            info(t.dtype).name));
  }
  alignas(64) std::uint8_t raw[256];
  const bool data = config_.vector_data;
  if (data && convert) {
    convert_elements(Dtype::kF32, op.dtype, value.u8, raw, 64);
  } else if (data) {
    std::memcpy(raw, value.u8, 256);
  }
  Coord at = read_i(op.a, op.slot);
  const std::int32_t c0 = at[0];
  at[0] = 0;
  if (t.size[0] == 0 || !in_bounds(t, at)) return;
  const std::int64_t lo = std::max<std::int64_t>(0, -std::int64_t{c0});
  const std::int64_t hi = std::min<std::int64_t>(count, std::int64_t{t.size[0]} - c0);
  const auto store_run = [&](std::int64_t first, std::int64_t n) {
    at[0] = static_cast<std::int32_t>(c0 + first);
    if (!access_.store(op.b, address_of(t, at), data ? raw + first * elem : nullptr,
                       static_cast<std::uint32_t>(n * elem))) {
      fail(fmt::format("st_tnsr: tensor {} at 0x{:X} is not mapped", op.b, address_of(t, at)));
      return false;
    }
    return true;
  };
  if (t.stride[0] == 1 && lo < hi) {
    store_run(lo, hi - lo);
    return;
  }
  for (std::int64_t i = lo; i < hi; ++i)
    if (!store_run(i, 1)) return;
}

bool Executor::access_element(bool store, int tensor, const Coord& at, std::uint8_t* element) {
  const TensorDescriptor& t = launch_.tensors[static_cast<std::size_t>(tensor)];
  const int elem = info(t.dtype).bytes;
  if (!in_bounds(t, at)) {
    if (!store) std::memcpy(element, &t.padding, static_cast<std::size_t>(elem));
    return true;
  }
  const std::uint64_t address = address_of(t, at);
  const bool ok = store ? access_.store(tensor, address, element, static_cast<std::uint32_t>(elem))
                        : access_.load(tensor, address, element, static_cast<std::uint32_t>(elem));
  if (!ok) {
    fail(fmt::format("{}: tensor {} at 0x{:X} is not mapped", store ? "st_g" : "ld_g", tensor,
                     address));
  }
  return ok;
}

bool Executor::local_range(std::uint32_t address, std::uint32_t bytes, std::uint32_t size,
                           const char* what) {
  if (address % 4 != 0 || address > size || bytes > size - address) {
    fail(fmt::format("{} at byte {} ({} bytes): outside the {}-byte memory or not a multiple of 4",
                     what, address, bytes, size));
    return false;
  }
  return true;
}

void Executor::execute_load(const Decoded& op) {
  VMask lanes;
  if (!predicate_passes(op, lanes)) return;
  const VMask* masked = op.pred_vector ? &lanes : nullptr;
  switch (op.op) {
    case Op::kLoadLdTnsr: {
      int phys = 0;
      Vector& out = new_vector(op, phys);
      load_tensor(op, out);
      const int lane_bytes = (op.modifier & 1) ? 4 : info(op.dtype).bytes;
      return write_v_phys(op, phys, masked, lane_bytes);
    }
    case Op::kLoadLdG: {
      const TensorDescriptor& t = launch_.tensors[op.b];
      if (t.dims == 0) return fail(fmt::format("ld_g: tensor {} is not a valid tensor", op.b));
      std::uint8_t element[4] = {};
      if (!access_element(false, op.b, read_i(op.a, op.slot), element)) return;
      return write_s(op, element_to_scalar(element, t.dtype));
    }
    case Op::kLoadLdVlm:
    case Op::kLoadLdVlmInc: {
      const std::uint32_t address = read_b_scalar(op);
      if (!local_range(address, 256, config_.vlm_bytes, "ld_vlm")) return;
      Vector v;
      std::memcpy(v.u8, vlm_.data() + address, 256);
      if (op.increment_latency) advance(op, address);
      return write_v(op, v, masked, info(op.dtype).bytes);
    }
    case Op::kLoadLdSlm: {
      const std::uint32_t address = read_b_scalar(op);
      if (!local_range(address, 4, config_.slm_bytes, "ld_slm")) return;
      std::uint32_t value = 0;
      std::memcpy(&value, slm_.data() + address, 4);
      return write_s(op, value);
    }
    default:
      return;
  }
}

void Executor::execute_store(const Decoded& op) {
  VMask unused;
  if (!predicate_passes(op, unused)) return;
  switch (op.op) {
    case Op::kStoreStTnsr:
      return store_tensor(op, read_v(op.c, op.slot));
    case Op::kStoreStG: {
      const TensorDescriptor& t = launch_.tensors[op.b];
      if (t.dims == 0) return fail(fmt::format("st_g: tensor {} is not a valid tensor", op.b));
      std::uint8_t element[4] = {};
      scalar_to_element(read_s(op.c, op.slot), t.dtype, element);
      access_element(true, op.b, read_i(op.a, op.slot), element);
      return;
    }
    case Op::kStoreStVlm:
    case Op::kStoreStVlmInc: {
      const std::uint32_t address = read_b_scalar(op);
      if (!local_range(address, 256, config_.vlm_bytes, "st_vlm")) return;
      std::memcpy(vlm_.data() + address, read_v(op.c, op.slot).u8, 256);
      if (op.increment_latency) advance(op, address);
      return;
    }
    case Op::kStoreStSlm: {
      const std::uint32_t address = read_b_scalar(op);
      if (!local_range(address, 4, config_.slm_bytes, "st_slm")) return;
      const std::uint32_t value = read_s(op.c, op.slot);
      std::memcpy(slm_.data() + address, &value, 4);
      return;
    }
    case Op::kStoreFence:
      access_.fence();
      return;
    default:
      return;
  }
}

}  // namespace podsim::tpc
