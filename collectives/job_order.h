// When a stream's job must wait for the job before it in the same stream: the rule both ways of
// running programs share (the command compiler's queues and the coarse chips' sequencers).
#pragma once

#include <cstdint>

namespace podsim::collectives {

// A job's byte ranges and how it is cut.
struct JobRanges {
  std::uint64_t dst, a, b, bytes;
  bool reduce;
  int slices;
  bool on_tpcs;
};

// Whether `next` may run without waiting for `prev` (the stream's job before it): they touch
// nothing in common, or what they share is cut into the same slices on the same engines, whose
// queues keep their order.
inline bool independent(const JobRanges& prev, const JobRanges& next) {
  const bool same_cut =
      prev.slices == next.slices && prev.bytes == next.bytes && prev.on_tpcs == next.on_tpcs;
  // x: a range of `next`, y: one of `prev`.
  auto ok = [&](std::uint64_t x, std::uint64_t y) {
    const bool apart = x + next.bytes <= y || y + prev.bytes <= x;
    return apart || (same_cut && x == y);
  };
  // One engine, in order.
  if (prev.slices == 1 && next.slices == 1 && prev.on_tpcs == next.on_tpcs) return true;
  bool fine = ok(next.a, prev.dst) && ok(next.dst, prev.dst) && ok(next.dst, prev.a);
  if (next.reduce) fine = fine && ok(next.b, prev.dst);
  if (prev.reduce) fine = fine && ok(next.dst, prev.b);
  return fine;
}

}  // namespace podsim::collectives
