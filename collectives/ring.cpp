#include "collectives/ring.h"

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <vector>

#include "collectives/schedule.h"

namespace podsim::collectives {

namespace {

// The vector's n segments, each cut into chunks, in elements.
struct Pieces : Segments {
  std::uint64_t chunk = 0;   // elements per chunk
  std::uint64_t chunks = 0;  // per segment, as many as the longest segment needs

  Pieces(std::uint64_t count, int n, std::uint64_t chunk_elements,
         const std::optional<RingShare>& share)
      : Segments(count, n), chunk(chunk_elements) {
    // A share's segment at position p: its slice of the part of the rank at p.
    if (share) {
      for (int p = 0; p < n; ++p) {
        offset[p] = static_cast<std::uint64_t>(rank_at(p, n, *share)) * (count / n) + share->at;
        length[p] = share->length;
      }
    }
    chunks = std::max<std::uint64_t>(1, (length[0] + chunk - 1) / chunk);
  }
  static int rank_at(int position, int n, const RingShare& share) {
    return share.backward ? (n - position) % n : position;
  }
  // Element offset and length of chunk c of segment s (length 0 when the segment is shorter).
  std::uint64_t start(int s, std::uint64_t c) const { return offset[s] + c * chunk; }
  std::uint64_t size(int s, std::uint64_t c) const {
    const std::uint64_t begin = c * chunk;
    return begin >= length[s] ? 0 : std::min(chunk, length[s] - begin);
  }
};

class RingBuilder {
 public:
  RingBuilder(const Spec& spec, int n, int position, std::uint32_t to_next,
              std::optional<RingShare> share = {})
      : spec_(spec),
        n_(n),
        r_(position),
        rank_(share ? Pieces::rank_at(position, n, *share) : position),
        qp_(to_next),
        l_(layout(spec, n, rank_)),
        element_(core::size_of(spec.type)),
        share_at_(share ? share->at : 0),
        pieces_(spec.count, n, spec.chunk_bytes / element_, share) {
    program_.signals = static_cast<std::uint32_t>(pieces_.chunks * 3 * (n - 1));
    program_.streams.resize(pieces_.chunks);
  }

  Program build() {
    if (n_ > 1) {
      for (std::uint64_t c = 0; c < pieces_.chunks; ++c) {
        if (spec_.op != Op::kAllGather) reduce_scatter(c);
        if (spec_.op != Op::kReduceScatter) all_gather(c);
      }
    }
    if (n_ == 1 || (spec_.op == Op::kAllGather && !spec_.in_place)) own_copy();
    return std::move(program_);
  }

 private:
  enum SignalKind { kPartialArrived, kReduced, kResultArrived };
  std::uint32_t signal(std::uint64_t c, SignalKind kind, int step) const {
    return static_cast<std::uint32_t>((c * 3 + kind) * static_cast<std::uint64_t>(n_ - 1) + step);
  }
  int segment(int s) const { return ((s % n_) + n_) % n_; }
  std::uint64_t at(std::uint64_t base, int s, std::uint64_t c) const {
    return base + pieces_.start(s, c) * element_;
  }
  // Where this rank's own contribution to segment s lies.
  std::uint64_t own(int s, std::uint64_t c) const {
    if (spec_.op == Op::kAllGather) return in_part(l_.input, c);
    return at(l_.input, s, c);
  }
  // Where this rank keeps its running partial result of segment s.
  std::uint64_t partial(int s, std::uint64_t c) const {
    if (spec_.op == Op::kAllReduce) return at(l_.output, s, c);
    if (s == r_) return in_part(l_.output, c);
    return at(l_.partials, s, c);
  }
  // Chunk c of this ring's share of a buffer that holds one rank's part.
  std::uint64_t in_part(std::uint64_t base, std::uint64_t c) const {
    return base + (share_at_ + c * pieces_.chunk) * element_;
  }
  // Where the finished segment s lies on this rank.
  std::uint64_t result(int s, std::uint64_t c) const { return at(l_.output, s, c); }

  void add(std::uint64_t c, const Command& command) { program_.streams[c].push_back(command); }

  Command write(std::uint64_t src, std::uint64_t dst, std::uint64_t elements,
                std::uint32_t remote_signal) const {
    return write_command(qp_, src, dst, elements * element_, remote_signal);
  }
  Command engine(Command::Kind kind, std::uint64_t dst, std::uint64_t a, std::uint64_t b,
                 std::uint64_t elements) const {
    return engine_command(spec_, kind, dst, a, b, elements);
  }

  // Step k: send segment r-k-1 onwards (own input first, then what was reduced at step k-1),
  // and reduce what arrives from the previous rank (segment r-k-2) with the own input.
  void reduce_scatter(std::uint64_t c) {
    for (int k = 0; k < n_ - 1; ++k) {
      const int out = segment(r_ - k - 1), in = segment(r_ - k - 2);
      if (const std::uint64_t len = pieces_.size(out, c)) {
        Command w = write(k == 0 ? own(out, c) : partial(out, c), at(l_.arriving_partials, out, c),
                          len, signal(c, kPartialArrived, k));
        if (k > 0) {
          w.wait = signal(c, kReduced, k - 1);
          w.wait_count = 1;
        }
        add(c, w);
      }
      if (const std::uint64_t len = pieces_.size(in, c)) {
        Command reduce = engine(Command::Kind::kReduce, partial(in, c), own(in, c),
                                at(l_.arriving_partials, in, c), len);
        reduce.wait = signal(c, kPartialArrived, k);
        reduce.wait_count = 1;
        reduce.done = signal(c, kReduced, k);
        add(c, reduce);
      }
    }
  }

  // Step k: send segment r-k onwards (the own finished segment first, then what arrived at step
  // k-1), and copy what arrives (segment r-k-1) into the output.
  void all_gather(std::uint64_t c) {
    for (int k = 0; k < n_ - 1; ++k) {
      const int out = segment(r_ - k), in = segment(r_ - k - 1);
      if (const std::uint64_t len = pieces_.size(out, c)) {
        const std::uint64_t src = k > 0                        ? at(l_.arriving_results, out, c)
                                  : spec_.op == Op::kAllGather ? own(out, c)
                                                               : result(out, c);
        Command w = write(src, at(l_.arriving_results, out, c), len, signal(c, kResultArrived, k));
        if (k > 0) {
          w.wait = signal(c, kResultArrived, k - 1);
          w.wait_count = 1;
        } else if (spec_.op == Op::kAllReduce) {
          w.wait = signal(c, kReduced, n_ - 2);
          w.wait_count = 1;
        }
        add(c, w);
      }
      if (const std::uint64_t len = pieces_.size(in, c)) {
        Command copy =
            engine(Command::Kind::kCopy, result(in, c), at(l_.arriving_results, in, c), 0, len);
        copy.wait = signal(c, kResultArrived, k);
        copy.wait_count = 1;
        add(c, copy);
      }
    }
  }

  // The rank's own piece where no peer brings it: an all-gather's input into its slot of the
  // output, or a single rank's input into its output.
  void own_copy() {
    if (spec_.in_place) return;
    const std::uint64_t part = std::min(l_.input_bytes, l_.output_bytes);
    const std::uint64_t slot =
        spec_.op == Op::kAllGather ? static_cast<std::uint64_t>(rank_) * part : 0;
    const std::uint64_t elements = n_ > 1 ? pieces_.length[0] : part / element_;
    if (elements == 0) return;
    if (program_.streams.empty()) program_.streams.resize(1);
    program_.streams[0].push_back(engine(Command::Kind::kCopy, in_part(l_.output + slot, 0),
                                         in_part(l_.input, 0), 0, elements));
  }

  const Spec& spec_;
  int n_, r_, rank_;  // position on the ring, and the rank there
  std::uint32_t qp_;
  Layout l_;
  std::uint64_t element_;
  std::uint64_t share_at_;  // where this ring's share starts in a rank's part
  Pieces pieces_;
  Program program_;
};

// Broadcast, reduce and send/recv: the whole vector, chunk by chunk, along the ring (a chain
// from the root for a broadcast, to the root for a reduce, one hop for a send/recv).
class ChainBuilder {
 public:
  ChainBuilder(const Spec& spec, int n, int rank, std::uint32_t to_next)
      : spec_(spec),
        n_(n),
        qp_(to_next),
        l_(layout(spec, n, rank)),
        element_(core::size_of(spec.type)),
        chunk_(spec.chunk_bytes / element_),
        chunks_(std::max<std::uint64_t>(1, (spec.count + chunk_ - 1) / chunk_)) {
    // Position along the chain: a broadcast starts at the root, a reduce ends there.
    const int from = spec.op == Op::kReduce ? spec.root + 1 : spec.root;
    position_ = ((rank - from) % n + n) % n;
    program_.signals = static_cast<std::uint32_t>(kKinds * chunks_);
    program_.streams.resize(chunks_ + 1);
  }

  Program build() {
    for (std::uint64_t c = 0; c < chunks_; ++c) {
      switch (spec_.op) {
        case Op::kBroadcast:
          broadcast(c);
          break;
        case Op::kReduce:
          reduce(c);
          break;
        default:
          send_recv(c);
      }
    }
    if (spec_.op == Op::kBroadcast && position_ == 0 && !spec_.in_place) {
      add(chunks_,
          engine_command(spec_, Command::Kind::kCopy, l_.output, l_.input, 0, spec_.count));
    }
    return std::move(program_);
  }

 private:
  enum SignalKind { kArrived, kReduced, kSent, kKinds };
  std::uint32_t signal(SignalKind kind, std::uint64_t c) const {
    return static_cast<std::uint32_t>(kind * chunks_ + c);
  }
  std::uint64_t at(std::uint64_t base, std::uint64_t c) const {
    return base + c * chunk_ * element_;
  }
  std::uint64_t size(std::uint64_t c) const {
    return std::min(chunk_, spec_.count - std::min(spec_.count, c * chunk_));
  }
  bool last() const { return position_ == n_ - 1; }
  void add(std::uint64_t stream, const Command& command) {
    program_.streams[stream].push_back(command);
  }
  Command write(std::uint64_t src, std::uint64_t dst, std::uint64_t c) const {
    return write_command(qp_, src, dst, size(c) * element_, signal(kArrived, c));
  }

  void broadcast(std::uint64_t c) {
    if (size(c) == 0) return;
    if (position_ == 0) {
      add(c, write(at(l_.input, c), at(l_.output, c), c));
    } else if (!last()) {
      Command w = write(at(l_.output, c), at(l_.output, c), c);
      add(c, after(w, signal(kArrived, c)));
    } else {
      add(c, wait_command(signal(kArrived, c), 1));
    }
  }

  // The chain's first rank sends its input; each next one reduces what arrives with its own
  // input and passes the partial result on; the root keeps it.
  void reduce(std::uint64_t c) {
    if (size(c) == 0) return;
    if (position_ == 0) {
      add(c, write(at(l_.input, c), at(l_.arriving_partials, c), c));
      return;
    }
    const std::uint64_t dst = last() ? at(l_.output, c) : at(l_.partials, c);
    Command r = engine_command(spec_, Command::Kind::kReduce, dst, at(l_.input, c),
                               at(l_.arriving_partials, c), size(c));
    after(r, signal(kArrived, c));
    r.done = signal(kReduced, c);
    add(c, r);
    if (last()) return;
    Command w = write(dst, at(l_.arriving_partials, c), c);
    add(c, after(w, signal(kReduced, c)));
  }

  // In place, what arrives waits in scratch until our own chunk has left.
  void send_recv(std::uint64_t c) {
    if (size(c) == 0) return;
    const std::uint64_t landing = spec_.in_place ? l_.arriving_results : l_.output;
    Command w = write(at(l_.input, c), at(landing, c), c);
    w.done = signal(kSent, c);
    add(c, w);
    if (!spec_.in_place) {
      add(c, wait_command(signal(kArrived, c), 1));
      return;
    }
    add(c, wait_command(signal(kSent, c), 1));
    Command copy = engine_command(spec_, Command::Kind::kCopy, at(l_.output, c),
                                  at(l_.arriving_results, c), 0, size(c));
    add(c, after(copy, signal(kArrived, c)));
  }

  const Spec& spec_;
  int n_, position_ = 0;
  std::uint32_t qp_;
  Layout l_;
  std::uint64_t element_, chunk_, chunks_;
  Program program_;
};

bool chained(Op op) { return op == Op::kBroadcast || op == Op::kReduce || op == Op::kSendRecv; }

}  // namespace

Program ring_program(const Spec& spec, int ranks, int rank, std::uint32_t to_next) {
  if (ranks > 1 && chained(spec.op)) return ChainBuilder(spec, ranks, rank, to_next).build();
  return RingBuilder(spec, ranks, rank, to_next).build();
}

Program ring_program(const Spec& spec, int ranks, int position, std::uint32_t to_next,
                     const RingShare& share) {
  if (spec.op != Op::kReduceScatter && spec.op != Op::kAllGather) {
    throw std::invalid_argument("a ring's share of every part: reduce-scatter and all-gather only");
  }
  return RingBuilder(spec, ranks, position, to_next, share).build();
}

}  // namespace podsim::collectives
