#include "collectives/ring.h"

#include <algorithm>
#include <vector>

#include "collectives/schedule.h"

namespace podsim::collectives {

namespace {

using chip::Command;

// The vector's n segments, each cut into chunks, in elements.
struct Pieces : Segments {
  std::uint64_t chunk = 0;   // elements per chunk
  std::uint64_t chunks = 0;  // per segment, as many as the longest segment needs

  Pieces(std::uint64_t count, int n, std::uint64_t chunk_elements)
      : Segments(count, n), chunk(chunk_elements) {
    chunks = std::max<std::uint64_t>(1, (length[0] + chunk - 1) / chunk);
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
  RingBuilder(const Spec& spec, int n, int rank, std::uint32_t to_next)
      : spec_(spec),
        n_(n),
        r_(rank),
        qp_(to_next),
        l_(layout(spec, n, rank)),
        element_(core::size_of(spec.type)),
        pieces_(spec.count, n, spec.chunk_bytes / element_) {
    program_.signals = static_cast<std::uint32_t>(pieces_.chunks * 3 * (n - 1));
    program_.streams.resize(pieces_.chunks);
  }

  chip::Program build() {
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
    if (spec_.op == Op::kAllGather) return l_.input + c * pieces_.chunk * element_;
    return at(l_.input, s, c);
  }
  // Where this rank keeps its running partial result of segment s.
  std::uint64_t partial(int s, std::uint64_t c) const {
    if (spec_.op == Op::kAllReduce) return at(l_.output, s, c);
    if (s == r_) return l_.output + c * pieces_.chunk * element_;
    return at(l_.partials, s, c);
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
    const std::uint64_t bytes = std::min(l_.input_bytes, l_.output_bytes);
    const std::uint64_t dst =
        spec_.op == Op::kAllGather ? l_.output + static_cast<std::uint64_t>(r_) * bytes : l_.output;
    if (bytes == 0) return;
    if (program_.streams.empty()) program_.streams.resize(1);
    program_.streams[0].push_back(engine(Command::Kind::kCopy, dst, l_.input, 0, bytes / element_));
  }

  const Spec& spec_;
  int n_, r_;
  std::uint32_t qp_;
  Layout l_;
  std::uint64_t element_;
  Pieces pieces_;
  chip::Program program_;
};

}  // namespace

chip::Program ring_program(const Spec& spec, int ranks, int rank, std::uint32_t to_next) {
  return RingBuilder(spec, ranks, rank, to_next).build();
}

}  // namespace podsim::collectives
