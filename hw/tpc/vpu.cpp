#include "hw/tpc/vpu.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "hw/tpc/numerics.h"

namespace podsim::tpc {
namespace {

// ---------------------------------------------------------------- lane formats
// Each format says how its raw lanes sit in a Vector and how they read as numbers.

template <class Raw>
Raw* lanes_of(Vector& v) {
  if constexpr (sizeof(Raw) == 4) {
    return reinterpret_cast<Raw*>(v.u32);
  } else if constexpr (sizeof(Raw) == 2) {
    return reinterpret_cast<Raw*>(v.u16);
  } else {
    return reinterpret_cast<Raw*>(v.u8);
  }
}
template <class Raw>
const Raw* lanes_of(const Vector& v) {
  return lanes_of<Raw>(const_cast<Vector&>(v));
}

struct F32 {
  using Raw = std::uint32_t;
  static constexpr bool kFloat = true;
  static float get(Raw r) { return float_of(r); }
  static Raw put(float f) { return bits_of(canonical(f)); }
};
struct Bf16 {
  using Raw = std::uint16_t;
  static constexpr bool kFloat = true;
  static float get(Raw r) { return bf16_to_f32(r); }
  static Raw put(float f) { return f32_to_bf16(f); }
};
struct F16 {
  using Raw = std::uint16_t;
  static constexpr bool kFloat = true;
  static float get(Raw r) { return f16_to_f32(r); }
  static Raw put(float f) { return f32_to_f16(f); }
};
template <class T>
struct Int {
  using Raw = std::make_unsigned_t<T>;
  using Value = T;
  static constexpr bool kFloat = false;
  static constexpr int kBits = 8 * sizeof(T);
  static T get(Raw r) { return static_cast<T>(r); }
  static Raw put(std::uint64_t v) { return static_cast<Raw>(v); }  // wraps
  static Raw saturate(std::int64_t v) {
    const std::int64_t lo = std::numeric_limits<T>::min(), hi = std::numeric_limits<T>::max();
    return static_cast<Raw>(static_cast<T>(v < lo ? lo : v > hi ? hi : v));
  }
};

template <class F>
constexpr int kLanes = 256 / static_cast<int>(sizeof(typename F::Raw));

// ---------------------------------------------------------------- element operations

struct AddOp {
  template <class X>
  X operator()(X a, X b) const {
    return a + b;
  }
};
struct SubOp {
  template <class X>
  X operator()(X a, X b) const {
    return a - b;
  }
};
struct MulOp {
  template <class X>
  X operator()(X a, X b) const {
    return a * b;
  }
};
struct MinOp {
  float operator()(float a, float b) const { return min_f32(a, b); }
  template <class X>
  X operator()(X a, X b) const {
    return b < a ? b : a;
  }
};
struct MaxOp {
  float operator()(float a, float b) const { return max_f32(a, b); }
  template <class X>
  X operator()(X a, X b) const {
    return a < b ? b : a;
  }
};
struct AndOp {
  template <class X>
  X operator()(X a, X b) const {
    return a & b;
  }
};
struct OrOp {
  template <class X>
  X operator()(X a, X b) const {
    return a | b;
  }
};
struct XorOp {
  template <class X>
  X operator()(X a, X b) const {
    return a ^ b;
  }
};

template <class F, class Op>
void float_binary(const VpuArgs& x) {
  using Raw = typename F::Raw;
  const Raw* a = lanes_of<Raw>(*x.a);
  const Raw* b = lanes_of<Raw>(*x.b);
  Raw* out = lanes_of<Raw>(*x.out);
  for (int i = 0; i < kLanes<F>; ++i) out[i] = F::put(Op()(F::get(a[i]), F::get(b[i])));
}

// Integers wrap: arithmetic runs on the unsigned lane type widened to 32 bits.
template <class I, class Op>
void int_binary(const VpuArgs& x) {
  using Raw = typename I::Raw;
  const Raw* a = lanes_of<Raw>(*x.a);
  const Raw* b = lanes_of<Raw>(*x.b);
  Raw* out = lanes_of<Raw>(*x.out);
  for (int i = 0; i < kLanes<I>; ++i) {
    if constexpr (std::is_same_v<Op, MinOp> || std::is_same_v<Op, MaxOp>) {
      out[i] = static_cast<Raw>(Op()(I::get(a[i]), I::get(b[i])));
    } else {
      out[i] = I::put(Op()(static_cast<std::uint32_t>(a[i]), static_cast<std::uint32_t>(b[i])));
    }
  }
}

template <class F>
void float_mac(const VpuArgs& x) {
  using Raw = typename F::Raw;
  const Raw* a = lanes_of<Raw>(*x.a);
  const Raw* b = lanes_of<Raw>(*x.b);
  const Raw* d = lanes_of<Raw>(*x.d);
  Raw* out = lanes_of<Raw>(*x.out);
  for (int i = 0; i < kLanes<F>; ++i) {
    const float product = canonical(F::get(a[i]) * F::get(b[i]));
    out[i] = F::put(F::get(d[i]) + product);
  }
}

template <class I>
void int_mac(const VpuArgs& x) {
  using Raw = typename I::Raw;
  const Raw* a = lanes_of<Raw>(*x.a);
  const Raw* b = lanes_of<Raw>(*x.b);
  const Raw* d = lanes_of<Raw>(*x.d);
  Raw* out = lanes_of<Raw>(*x.out);
  for (int i = 0; i < kLanes<I>; ++i) {
    out[i] = I::put(std::uint32_t{d[i]} + std::uint32_t{a[i]} * std::uint32_t{b[i]});
  }
}

template <class F>
constexpr
    typename F::Raw kSignBit = static_cast<typename F::Raw>(typename F::Raw{1}
                                                            << (8 * sizeof(typename F::Raw) - 1));

template <class F>
void float_abs(const VpuArgs& x) {
  using Raw = typename F::Raw;
  const Raw* a = lanes_of<Raw>(*x.a);
  Raw* out = lanes_of<Raw>(*x.out);
  for (int i = 0; i < kLanes<F>; ++i) out[i] = static_cast<Raw>(a[i] & ~kSignBit<F>);
}
template <class F>
void float_neg(const VpuArgs& x) {
  using Raw = typename F::Raw;
  const Raw* a = lanes_of<Raw>(*x.a);
  Raw* out = lanes_of<Raw>(*x.out);
  for (int i = 0; i < kLanes<F>; ++i) out[i] = static_cast<Raw>(a[i] ^ kSignBit<F>);
}
template <class I>
void int_abs(const VpuArgs& x) {
  using Raw = typename I::Raw;
  const Raw* a = lanes_of<Raw>(*x.a);
  Raw* out = lanes_of<Raw>(*x.out);
  for (int i = 0; i < kLanes<I>; ++i) {
    out[i] = I::get(a[i]) < 0 ? I::put(0u - std::uint32_t{a[i]}) : a[i];
  }
}
template <class I>
void int_neg(const VpuArgs& x) {
  using Raw = typename I::Raw;
  const Raw* a = lanes_of<Raw>(*x.a);
  Raw* out = lanes_of<Raw>(*x.out);
  for (int i = 0; i < kLanes<I>; ++i) out[i] = I::put(0u - std::uint32_t{a[i]});
}
template <class I>
void int_not(const VpuArgs& x) {
  using Raw = typename I::Raw;
  const Raw* a = lanes_of<Raw>(*x.a);
  Raw* out = lanes_of<Raw>(*x.out);
  for (int i = 0; i < kLanes<I>; ++i) out[i] = static_cast<Raw>(~a[i]);
}

template <class I, bool kLeft>
void int_shift(const VpuArgs& x) {
  using Raw = typename I::Raw;
  const Raw* a = lanes_of<Raw>(*x.a);
  const Raw* b = lanes_of<Raw>(*x.b);
  Raw* out = lanes_of<Raw>(*x.out);
  for (int i = 0; i < kLanes<I>; ++i) {
    const int n = static_cast<int>(b[i] % I::kBits);
    if constexpr (kLeft) {
      out[i] = I::put(std::uint32_t{a[i]} << n);
    } else {
      out[i] = static_cast<Raw>(I::get(a[i]) >> n);  // arithmetic for signed types
    }
  }
}

template <class X>
bool compare(X a, X b, std::uint8_t cond) {
  switch (static_cast<Cond>(cond)) {
    case Cond::kEq:
      return a == b;
    case Cond::kNe:
      return a != b;
    case Cond::kLt:
      return a < b;
    case Cond::kLe:
      return a <= b;
    case Cond::kGt:
      return a > b;
    case Cond::kGe:
      return a >= b;
  }
  return false;
}

template <class F>
void cmp_lanes(const VpuArgs& x) {
  using Raw = typename F::Raw;
  const Raw* a = lanes_of<Raw>(*x.a);
  const Raw* b = lanes_of<Raw>(*x.b);
  *x.out_mask = VMask{};
  for (int i = 0; i < kLanes<F>; ++i)
    x.out_mask->set(i, compare(F::get(a[i]), F::get(b[i]), x.modifier));
}

template <class F>
void sel_lanes(const VpuArgs& x) {
  using Raw = typename F::Raw;
  const Raw* a = lanes_of<Raw>(*x.a);
  const Raw* b = lanes_of<Raw>(*x.b);
  Raw* out = lanes_of<Raw>(*x.out);
  for (int i = 0; i < kLanes<F>; ++i) out[i] = x.c->test(i) ? a[i] : b[i];
}

void mov_vector(const VpuArgs& x) { *x.out = *x.b; }

template <class F, float (*Fn)(float)>
void float_unary(const VpuArgs& x) {
  using Raw = typename F::Raw;
  const Raw* a = lanes_of<Raw>(*x.a);
  Raw* out = lanes_of<Raw>(*x.out);
  for (int i = 0; i < kLanes<F>; ++i) out[i] = F::put(Fn(F::get(a[i])));
}

// Pairwise: lane i with lane i + L/2, then i + L/4, ...; floats round to the lane type at
// every level, as a tree of the VPU's adders would.
template <class F, class Op>
void reduce_lanes(const VpuArgs& x) {
  using Raw = typename F::Raw;
  Raw work[kLanes<F>];
  std::memcpy(work, lanes_of<Raw>(*x.a), sizeof(work));
  for (int width = kLanes<F> / 2; width >= 1; width /= 2) {
    for (int i = 0; i < width; ++i) {
      if constexpr (F::kFloat) {
        work[i] = F::put(Op()(F::get(work[i]), F::get(work[i + width])));
      } else if constexpr (std::is_same_v<Op, AddOp>) {
        work[i] = F::put(std::uint32_t{work[i]} + std::uint32_t{work[i + width]});
      } else {
        work[i] = static_cast<Raw>(Op()(F::get(work[i]), F::get(work[i + width])));
      }
    }
  }
  Raw* out = lanes_of<Raw>(*x.out);
  for (int i = 0; i < kLanes<F>; ++i) out[i] = work[0];
}

template <class F>
void shuffle_lanes(const VpuArgs& x) {
  using Raw = typename F::Raw;
  const Raw* a = lanes_of<Raw>(*x.a);
  const Raw* b = lanes_of<Raw>(*x.b);
  Raw* out = lanes_of<Raw>(*x.out);
  for (int i = 0; i < kLanes<F>; ++i) out[i] = a[b[i] % kLanes<F>];
}

template <class F>
void bcast_lane(const VpuArgs& x) {
  using Raw = typename F::Raw;
  const Raw value = lanes_of<Raw>(*x.a)[x.b_integer % kLanes<F>];
  Raw* out = lanes_of<Raw>(*x.out);
  for (int i = 0; i < kLanes<F>; ++i) out[i] = value;
}

template <class I>
void lane_numbers(const VpuArgs& x) {
  using Raw = typename I::Raw;
  Raw* out = lanes_of<Raw>(*x.out);
  for (int i = 0; i < kLanes<I>; ++i) out[i] = static_cast<Raw>(i);
}

// The random-number generator's step (isa.yaml, lfsr): 32-bit lanes only.
void xorshift_lanes(const VpuArgs& x) {
  for (int i = 0; i < 64; ++i) x.out->u32[i] = xorshift32(x.a->u32[i]);
}

// ---------------------------------------------------------------- conversions

template <class F>
float as_float(typename F::Raw r) {
  if constexpr (F::kFloat) {
    return F::get(r);
  } else {
    return static_cast<float>(F::get(r));  // to nearest even
  }
}

template <class From, class To>
typename To::Raw convert_one(typename From::Raw r) {
  if constexpr (To::kFloat) {
    return To::put(as_float<From>(r));
  } else if constexpr (From::kFloat) {
    using V = typename To::Value;
    return static_cast<typename To::Raw>(static_cast<V>(
        f32_to_int(From::get(r), std::numeric_limits<V>::min(), std::numeric_limits<V>::max())));
  } else {
    return To::saturate(static_cast<std::int64_t>(From::get(r)));
  }
}

template <class From, class To>
void convert_run(const std::uint8_t* in, std::uint8_t* out, int count) {
  using RawIn = typename From::Raw;
  using RawOut = typename To::Raw;
  for (int i = 0; i < count; ++i) {
    RawIn r;
    std::memcpy(&r, in + i * sizeof(RawIn), sizeof(RawIn));
    const RawOut o = convert_one<From, To>(r);
    std::memcpy(out + i * sizeof(RawOut), &o, sizeof(RawOut));
  }
}

using ConvertFn = void (*)(const std::uint8_t*, std::uint8_t*, int);

// The formats in Dtype code order, for tables indexed by type.
template <class... Fs>
struct Formats {};
using AllFormats = Formats<F32, Bf16, F16, Int<std::int32_t>, Int<std::uint32_t>, Int<std::int16_t>,
                           Int<std::uint16_t>, Int<std::int8_t>, Int<std::uint8_t>>;

template <class From, class... Tos>
constexpr std::array<ConvertFn, kDtypeCount> convert_row(Formats<Tos...>) {
  return {&convert_run<From, Tos>...};
}
template <class... Froms>
constexpr std::array<std::array<ConvertFn, kDtypeCount>, kDtypeCount> convert_table(
    Formats<Froms...>) {
  return {convert_row<Froms>(AllFormats{})...};
}
constexpr auto kConvert = convert_table(AllFormats{});

void convert_vector(const VpuArgs& x, Dtype to) {
  const auto from = static_cast<Dtype>(x.modifier);
  const int src_bytes = info(from).bytes, dst_bytes = info(to).bytes;
  const int out_lanes = lanes(to);
  const ConvertFn fn = kConvert[x.modifier][static_cast<std::size_t>(to)];
  if (src_bytes <= dst_bytes) {  // same width, or lane group `lane_group` of a widening
    fn(x.a->u8 + x.lane_group * out_lanes * src_bytes, x.out->u8, out_lanes);
  } else {  // narrowing by two: a fills the low half, b the high half
    Vector result;
    fn(x.a->u8, result.u8, out_lanes / 2);
    fn(x.b->u8, result.u8 + out_lanes / 2 * dst_bytes, out_lanes / 2);
    *x.out = result;
  }
}

template <Dtype kTo>
void cvt_to(const VpuArgs& x) {
  convert_vector(x, kTo);
}

// ---------------------------------------------------------------- the tables

template <class F>
VpuFn float_function(Op op) {
  switch (op) {
    case Op::kVpuAdd:
      return &float_binary<F, AddOp>;
    case Op::kVpuSub:
      return &float_binary<F, SubOp>;
    case Op::kVpuMul:
      return &float_binary<F, MulOp>;
    case Op::kVpuMac:
      return &float_mac<F>;
    case Op::kVpuMin:
      return &float_binary<F, MinOp>;
    case Op::kVpuMax:
      return &float_binary<F, MaxOp>;
    case Op::kVpuAbs:
      return &float_abs<F>;
    case Op::kVpuNeg:
      return &float_neg<F>;
    case Op::kVpuCmp:
      return &cmp_lanes<F>;
    case Op::kVpuExp:
      return &float_unary<F, exp_f32>;
    case Op::kVpuLog:
      return &float_unary<F, log_f32>;
    case Op::kVpuRcp:
      return &float_unary<F, rcp_f32>;
    case Op::kVpuRsqrt:
      return &float_unary<F, rsqrt_f32>;
    case Op::kVpuSqrt:
      return &float_unary<F, sqrt_f32>;
    case Op::kVpuTanh:
      return &float_unary<F, tanh_f32>;
    case Op::kVpuSigmoid:
      return &float_unary<F, sigmoid_f32>;
    case Op::kVpuReduceAdd:
      return &reduce_lanes<F, AddOp>;
    case Op::kVpuReduceMax:
      return &reduce_lanes<F, MaxOp>;
    case Op::kVpuReduceMin:
      return &reduce_lanes<F, MinOp>;
    default:
      return nullptr;
  }
}

template <class I>
VpuFn int_function(Op op) {
  switch (op) {
    case Op::kVpuAdd:
      return &int_binary<I, AddOp>;
    case Op::kVpuSub:
      return &int_binary<I, SubOp>;
    case Op::kVpuMul:
      return &int_binary<I, MulOp>;
    case Op::kVpuMac:
      return &int_mac<I>;
    case Op::kVpuMin:
      return &int_binary<I, MinOp>;
    case Op::kVpuMax:
      return &int_binary<I, MaxOp>;
    case Op::kVpuAbs:
      return &int_abs<I>;
    case Op::kVpuNeg:
      return &int_neg<I>;
    case Op::kVpuAnd:
      return &int_binary<I, AndOp>;
    case Op::kVpuOr:
      return &int_binary<I, OrOp>;
    case Op::kVpuXor:
      return &int_binary<I, XorOp>;
    case Op::kVpuNot:
      return &int_not<I>;
    case Op::kVpuShl:
      return &int_shift<I, true>;
    case Op::kVpuShr:
      return &int_shift<I, false>;
    case Op::kVpuCmp:
      return &cmp_lanes<I>;
    case Op::kVpuReduceAdd:
      return &reduce_lanes<I, AddOp>;
    case Op::kVpuReduceMax:
      return &reduce_lanes<I, MaxOp>;
    case Op::kVpuReduceMin:
      return &reduce_lanes<I, MinOp>;
    case Op::kVpuLaneId:
      return &lane_numbers<I>;
    case Op::kVpuLfsr:
      return &xorshift_lanes;
    default:
      return nullptr;
  }
}

// Operations that only move lanes: the same for every type of one width.
template <class F>
VpuFn lane_function(Op op) {
  switch (op) {
    case Op::kVpuSel:
      return &sel_lanes<F>;
    case Op::kVpuMov:
      return &mov_vector;
    case Op::kVpuShuffle:
      return &shuffle_lanes<F>;
    case Op::kVpuBcast:
      return &bcast_lane<F>;
    default:
      return nullptr;
  }
}

template <class F>
VpuFn typed_function(Op op) {
  if (VpuFn fn = lane_function<F>(op)) return fn;
  if constexpr (F::kFloat) {
    return float_function<F>(op);
  } else {
    return int_function<F>(op);
  }
}

VpuFn any_function(Op op, Dtype t) {
  switch (t) {
    case Dtype::kF32:
      return typed_function<F32>(op);
    case Dtype::kBf16:
      return typed_function<Bf16>(op);
    case Dtype::kF16:
      return typed_function<F16>(op);
    case Dtype::kI32:
      return typed_function<Int<std::int32_t>>(op);
    case Dtype::kU32:
      return typed_function<Int<std::uint32_t>>(op);
    case Dtype::kI16:
      return typed_function<Int<std::int16_t>>(op);
    case Dtype::kU16:
      return typed_function<Int<std::uint16_t>>(op);
    case Dtype::kI8:
      return typed_function<Int<std::int8_t>>(op);
    case Dtype::kU8:
      return typed_function<Int<std::uint8_t>>(op);
  }
  return nullptr;
}

VpuFn cvt_function(Dtype t) {
  switch (t) {
    case Dtype::kF32:
      return &cvt_to<Dtype::kF32>;
    case Dtype::kBf16:
      return &cvt_to<Dtype::kBf16>;
    case Dtype::kF16:
      return &cvt_to<Dtype::kF16>;
    case Dtype::kI32:
      return &cvt_to<Dtype::kI32>;
    case Dtype::kU32:
      return &cvt_to<Dtype::kU32>;
    case Dtype::kI16:
      return &cvt_to<Dtype::kI16>;
    case Dtype::kU16:
      return &cvt_to<Dtype::kU16>;
    case Dtype::kI8:
      return &cvt_to<Dtype::kI8>;
    case Dtype::kU8:
      return &cvt_to<Dtype::kU8>;
  }
  return nullptr;
}

}  // namespace

VpuFn vpu_function(Op op, Dtype t) {
  if (info(op).slot != Slot::kVpu || !takes(op, t)) return nullptr;
  if (op == Op::kVpuCvt) return cvt_function(t);
  return any_function(op, t);
}

void broadcast_scalar(std::uint32_t value, Dtype t, Vector& out) {
  switch (info(t).bytes) {
    case 4:
      for (std::uint32_t& lane : out.u32) lane = value;
      break;
    case 2: {
      const auto h = static_cast<std::uint16_t>(t == Dtype::kBf16  ? f32_to_bf16(float_of(value))
                                                : t == Dtype::kF16 ? f32_to_f16(float_of(value))
                                                                   : value);
      for (std::uint16_t& lane : out.u16) lane = h;
      break;
    }
    default:
      std::memset(out.u8, static_cast<int>(value & 0xFF), sizeof(out.u8));
      break;
  }
}

std::uint32_t element_to_scalar(const std::uint8_t* element, Dtype t) {
  std::uint32_t out = 0;
  const Dtype wide = is_float(t)                          ? Dtype::kF32
                     : info(t).kind == DtypeKind::kSigned ? Dtype::kI32
                                                          : Dtype::kU32;
  if (t == Dtype::kF32 || t == Dtype::kI32 || t == Dtype::kU32) {
    std::memcpy(&out, element, 4);
    return out;
  }
  convert_elements(t, wide, element, reinterpret_cast<std::uint8_t*>(&out), 1);
  return out;
}

void scalar_to_element(std::uint32_t value, Dtype t, std::uint8_t* element) {
  if (is_float(t)) {
    convert_elements(Dtype::kF32, t, reinterpret_cast<const std::uint8_t*>(&value), element, 1);
  } else {
    std::memcpy(element, &value, info(t).bytes);  // truncates (little-endian)
  }
}

void convert_elements(Dtype from, Dtype to, const std::uint8_t* in, std::uint8_t* out, int count) {
  kConvert[static_cast<std::size_t>(from)][static_cast<std::size_t>(to)](in, out, count);
}

double read_element(const std::vector<std::uint8_t>& buffer, Dtype t, std::uint64_t i) {
  const std::uint32_t bits = element_to_scalar(buffer.data() + i * info(t).bytes, t);
  if (is_float(t)) return float_of(bits);
  return info(t).kind == DtypeKind::kSigned ? static_cast<double>(static_cast<std::int32_t>(bits))
                                            : static_cast<double>(bits);
}

void write_element(std::vector<std::uint8_t>& buffer, Dtype t, std::uint64_t i, double value) {
  std::uint8_t* at = buffer.data() + i * info(t).bytes;
  if (is_float(t)) {
    float f = static_cast<float>(value);
    if (t != Dtype::kF32 && std::isfinite(f) && static_cast<double>(f) != value) {
      // Round to odd on the way to f32, so that the second rounding (to bf16 or f16, at least
      // two bits shorter) rounds as once from the double.
      if (std::fabs(static_cast<double>(f)) > std::fabs(value)) f = std::nextafter(f, 0.0f);
      f = float_of(bits_of(f) | 1);
    }
    scalar_to_element(bits_of(f), t, at);
    return;
  }
  const double lo =
      info(t).kind == DtypeKind::kSigned ? -std::ldexp(1.0, info(t).bytes * 8 - 1) : 0.0;
  const double hi = (info(t).kind == DtypeKind::kSigned ? std::ldexp(1.0, info(t).bytes * 8 - 1)
                                                        : std::ldexp(1.0, info(t).bytes * 8)) -
                    1;
  const double r = std::clamp(std::nearbyint(value), lo, hi);
  const auto v = static_cast<std::int64_t>(r);
  std::memcpy(at, &v, info(t).bytes);  // little-endian: the low bytes
}

}  // namespace podsim::tpc
