// 24-bit packet sequence numbers (IBTA vol. 1 9.7.1): arithmetic modulo 2^24, and the rule that
// tells a PSN ahead of a reference from one behind it (the half of the space ahead is "ahead").
// Captures: wrap-around, and the mapping between wire PSNs and 64-bit sequence numbers that never
// wrap. The NIC counts in 64-bit sequence numbers (0 = the QP's initial PSN) and converts only at
// the wire, so ordinary comparisons work everywhere else.
// Ignores: nothing of the transport's PSN rules; windows are enforced by their users.
#pragma once

#include <cstdint>

namespace podsim::roce {

constexpr std::uint32_t kPsnModulus = 1u << 24;
constexpr std::uint32_t kPsnMask = kPsnModulus - 1;
// PSNs less than this far ahead of a reference count as ahead; the rest as behind.
constexpr std::uint32_t kPsnHalf = 1u << 23;

constexpr std::uint32_t psn_add(std::uint32_t psn, std::uint64_t n) {
  return static_cast<std::uint32_t>((psn + n) & kPsnMask);
}
// Steps forward from `from` to reach `to`, in [0, 2^24).
constexpr std::uint32_t psn_distance(std::uint32_t from, std::uint32_t to) {
  return (to - from) & kPsnMask;
}
// True when `psn` is `reference` or within the half of the space ahead of it.
constexpr bool psn_at_or_ahead(std::uint32_t psn, std::uint32_t reference) {
  return psn_distance(reference, psn) < kPsnHalf;
}

// Sequence numbers of one direction of a QP: seq 0 is the initial PSN.
class PsnSpace {
 public:
  explicit constexpr PsnSpace(std::uint32_t initial_psn = 0) : initial_(initial_psn & kPsnMask) {}

  constexpr std::uint32_t initial_psn() const { return initial_; }
  constexpr std::uint32_t psn(std::uint64_t seq) const { return psn_add(initial_, seq); }
  // The sequence number at or after `base` (within 2^24 of it) that carries `psn`.
  constexpr std::uint64_t seq_at_or_after(std::uint64_t base, std::uint32_t psn) const {
    return base + psn_distance(this->psn(base), psn);
  }
  // How far `psn` lies behind the sequence number `base`, in [0, 2^24).
  constexpr std::uint32_t behind(std::uint64_t base, std::uint32_t psn) const {
    return psn_distance(psn, this->psn(base));
  }

 private:
  std::uint32_t initial_;
};

}  // namespace podsim::roce
