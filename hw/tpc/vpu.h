// The C++ datapath of the TPC's vector unit: what every VPU operation computes on 256-byte
// vectors, lane by lane, for each type it takes (hw/tpc/isa.yaml). The core calls one function
// per operation and type, chosen once when a kernel is decoded; the RTL vector ALU
// (hw/tpc/rtl) is checked against these functions bit for bit.
// Captures: exact results per numerics.h (float types computed in binary32 and rounded once to
// the lane type, integers wrapping, conversions saturating), comparison masks, reductions in a
// fixed pairwise order, shuffles and broadcasts, the random-number generator's step. Ignores:
// predication and write-back (the core's), timing.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "hw/tpc/isa.h"

namespace podsim::tpc {

// One vector register. GCC defines reading a union member other than the last written, which is
// how lanes of every type share the 256 bytes.
union alignas(64) Vector {
  std::uint8_t u8[256];
  std::int8_t i8[256];
  std::uint16_t u16[128];
  std::int16_t i16[128];
  std::uint32_t u32[64];
  std::int32_t i32[64];
  float f32[64];
};
static_assert(sizeof(Vector) == 256);

// A vector predicate: bit i for lane i (of whatever type the operation uses).
struct VMask {
  std::array<std::uint64_t, 4> words{};
  bool test(int lane) const {
    return (words[static_cast<std::size_t>(lane >> 6)] >> (lane & 63)) & 1;
  }
  void set(int lane, bool on) {
    std::uint64_t& w = words[static_cast<std::size_t>(lane >> 6)];
    const std::uint64_t bit = std::uint64_t{1} << (lane & 63);
    w = on ? (w | bit) : (w & ~bit);
  }
  static VMask all() { return VMask{{~0ull, ~0ull, ~0ull, ~0ull}}; }
  friend bool operator==(const VMask& a, const VMask& b) { return a.words == b.words; }
};

// What a VPU operation reads and writes. `b` is already a vector (a scalar or the immediate has
// been broadcast by broadcast_scalar), except for an integer operand (bcast's lane), which comes
// as `b_integer`; `d` is the destination's old value (mac); `c` the selection mask (sel);
// `modifier` the comparison or the source type (cvt); `lane_group` cvt's c.
struct VpuArgs {
  const Vector* a = nullptr;
  const Vector* b = nullptr;
  std::uint32_t b_integer = 0;
  const Vector* d = nullptr;
  const VMask* c = nullptr;
  std::uint8_t modifier = 0;
  std::uint8_t lane_group = 0;
  Vector* out = nullptr;      // operations that write a vector
  VMask* out_mask = nullptr;  // cmp
};
using VpuFn = void (*)(const VpuArgs&);

// The function for a VPU operation on type `t`, or nullptr when the operation does not take it.
VpuFn vpu_function(Op op, Dtype t);

// Another implementation of some VPU operations (the RTL vector ALU): the executor asks it
// first and falls back on the C++ functions for what it does not implement.
class VectorDatapath {
 public:
  virtual ~VectorDatapath() = default;
  // Computes `op` on type `t` into args.out (or args.out_mask) and returns true, or returns
  // false without touching anything when it does not implement that operation and type.
  virtual bool execute(Op op, Dtype t, const VpuArgs& args) = 0;
};

// One step of the TPC's random-number generator on a 32-bit state (lfsr, per lane): Marsaglia's
// xorshift [A3]. The kernel library's references call it to reproduce a kernel's random draws.
constexpr std::uint32_t xorshift32(std::uint32_t a) {
  a ^= a << 13;
  a ^= a >> 17;
  a ^= a << 5;
  return a;
}

// A 32-bit scalar (a register or the immediate) in every lane of type `t`: integers truncated,
// floats converted from binary32 to the lane type.
void broadcast_scalar(std::uint32_t value, Dtype t, Vector& out);

// One element of type `t` in memory <-> the 32-bit scalar form (floats as binary32 bits,
// integers sign- or zero-extended; back: floats rounded, integers truncated).
std::uint32_t element_to_scalar(const std::uint8_t* element, Dtype t);
void scalar_to_element(std::uint32_t value, Dtype t, std::uint8_t* element);

// Element i of a buffer as a double, and back (rounded to the buffer's type).
double read_element(const std::vector<std::uint8_t>& buffer, Dtype t, std::uint64_t i);
void write_element(std::vector<std::uint8_t>& buffer, Dtype t, std::uint64_t i, double value);

// `count` elements converted from type `from` to type `to` as cvt does (float to float rounding
// to nearest even, float to integer rounding and saturating with NaN as 0, integer to float
// through binary32, integer to integer saturating).
void convert_elements(Dtype from, Dtype to, const std::uint8_t* in, std::uint8_t* out, int count);

}  // namespace podsim::tpc
