// What algorithms build their per-rank programs from: the vector cut into one segment per rank
// (the first count % n segments one element longer), and constructors for the programs'
// commands.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "collectives/collective.h"
#include "collectives/program.h"

namespace podsim::collectives {

// [begin, begin + size) of a range cut into `parts` nearly equal parts: part `i`.
inline std::pair<std::uint64_t, std::uint64_t> part_of(std::uint64_t size, std::uint64_t parts,
                                                       std::uint64_t i) {
  const std::uint64_t base = size / parts, extra = size % parts;
  return {i * base + std::min(i, extra), base + (i < extra ? 1 : 0)};
}

struct Segments {
  std::vector<std::uint64_t> offset, length;  // in elements, per segment

  Segments(std::uint64_t count, int n) {
    for (int s = 0; s < n; ++s) {
      const auto [at, len] =
          part_of(count, static_cast<std::uint64_t>(n), static_cast<std::uint64_t>(s));
      offset.push_back(at);
      length.push_back(len);
    }
  }
};

// A rank's QP to `peer` over lane `lane`.
using QpOf = std::function<std::uint32_t(int peer, int lane)>;

// What the builders of the algorithms that talk to many peers start from: the spec, this rank
// among n, its QPs over `lanes` lanes per peer, its buffers, and element and chunk sizes.
class ProgramBuilder {
 protected:
  ProgramBuilder(const Spec& spec, int n, int rank, int lanes, const QpOf& qp)
      : spec_(spec),
        n_(n),
        r_(rank),
        lanes_(lanes),
        qp_(qp),
        l_(layout(spec, n, rank)),
        element_(core::size_of(spec.type)),
        chunk_(spec.chunk_bytes / element_) {}

  std::uint64_t bytes(std::uint64_t elements) const { return elements * element_; }

  const Spec& spec_;
  int n_, r_, lanes_;
  const QpOf& qp_;
  Layout l_;
  std::uint64_t element_, chunk_;  // bytes per element, elements per chunk
  Program program_;
};

inline Command write_command(std::uint32_t qpn, std::uint64_t src, std::uint64_t dst,
                             std::uint64_t bytes, std::uint32_t remote_signal) {
  Command w;
  w.kind = Command::Kind::kWrite;
  w.qpn = qpn;
  w.src = src;
  w.dst = dst;
  w.bytes = bytes;
  w.remote_signal = remote_signal;
  return w;
}

// A reduction (dst = a op b) or copy (dst = a) of `count` elements of the spec's type.
inline Command engine_command(const Spec& spec, Command::Kind kind, std::uint64_t dst,
                              std::uint64_t a, std::uint64_t b, std::uint64_t count) {
  Command e;
  e.kind = kind;
  e.type = spec.type;
  e.op = spec.reduce;
  e.dst = dst;
  e.src = a;
  e.b = b;
  e.bytes = count * core::size_of(spec.type);
  return e;
}

inline Command wait_command(std::uint32_t signal, std::uint32_t count) {
  Command c;
  c.kind = Command::Kind::kWait;
  c.wait = signal;
  c.wait_count = count;
  return c;
}

inline Command& after(Command& c, std::uint32_t signal, std::uint32_t count = 1) {
  c.wait = signal;
  c.wait_count = count;
  return c;
}

// Appends `from`'s streams to `into`, its signals numbered after `into`'s. Every rank must
// append the same programs in the same order, since remote signals name the peer's numbering.
inline void append(Program& into, Program from) {
  const std::uint32_t base = into.signals;
  const auto shift = [base](std::uint32_t& signal) {
    if (signal != Command::kNone) signal += base;
  };
  for (auto& stream : from.streams) {
    for (Command& c : stream) {
      shift(c.wait);
      shift(c.done);
      if (c.kind == Command::Kind::kWrite) c.remote_signal += base;
    }
    into.streams.push_back(std::move(stream));
  }
  into.signals += from.signals;
}

}  // namespace podsim::collectives
