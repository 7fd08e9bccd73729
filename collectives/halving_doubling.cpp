#include "collectives/halving_doubling.h"

#include <algorithm>
#include <vector>

#include "collectives/schedule.h"

namespace podsim::collectives {

namespace {

struct Piece {
  std::uint64_t offset = 0, length = 0;  // elements
  int lane = 0;
};

class HalvingDoublingBuilder : ProgramBuilder {
 public:
  HalvingDoublingBuilder(const Spec& spec, int n, int rank, int lanes, const QpOf& qp)
      : ProgramBuilder(spec, n, rank, lanes, qp) {
    while (p_ * 2 <= n_) p_ *= 2;
    while ((1 << levels_) < p_) ++levels_;
    extra_ = n_ - p_;
    steps_ = 2 * levels_ + 2;
    max_pieces_ =
        static_cast<std::uint32_t>(std::max<std::size_t>(1, pieces(0, spec.count).size()));
    program_.signals = static_cast<std::uint32_t>(steps_) * (max_pieces_ + 1);
    program_.streams.resize(static_cast<std::size_t>(lanes_) + 2);
  }

  Program build() {
    if (r_ < 2 * extra_ && r_ % 2 == 0) {
      sit_out();
    } else {
      const int v = r_ < 2 * extra_ ? r_ / 2 : r_ - extra_;
      if (r_ < 2 * extra_) fold();
      const auto [lo, hi] = reduce_scatter(v);
      all_gather(v, lo, hi);
      if (r_ < 2 * extra_) send(r_ - 1, 0, spec_.count, l_.output, l_.output, unfold_step());
    }
    return std::move(program_);
  }

 private:
  // Step 0 folds, steps 1..levels halve, levels+1..2 levels double, the last unfolds.
  int unfold_step() const { return steps_ - 1; }
  std::uint32_t arrived(int step, std::size_t piece) const {
    return static_cast<std::uint32_t>(step) * max_pieces_ + static_cast<std::uint32_t>(piece);
  }
  std::uint32_t reduced(int step) const {
    return static_cast<std::uint32_t>(steps_) * max_pieces_ + static_cast<std::uint32_t>(step);
  }
  int rank_of(int v) const { return v < extra_ ? 2 * v + 1 : v + extra_; }
  // Elements of blocks [lo, hi) of the vector cut into p blocks.
  std::pair<std::uint64_t, std::uint64_t> blocks(int lo, int hi) const {
    const auto p = static_cast<std::uint64_t>(p_);
    const std::uint64_t begin = part_of(spec_.count, p, static_cast<std::uint64_t>(lo)).first;
    const std::uint64_t end =
        hi == p_ ? spec_.count : part_of(spec_.count, p, static_cast<std::uint64_t>(hi)).first;
    return {begin, end - begin};
  }
  // A range split over the lanes, each lane's part cut into chunks; sender and receiver cut
  // alike, so piece i means the same elements on both.
  std::vector<Piece> pieces(std::uint64_t offset, std::uint64_t length) const {
    std::vector<Piece> out;
    for (int lane = 0; lane < lanes_; ++lane) {
      const auto [at, part] =
          part_of(length, static_cast<std::uint64_t>(lanes_), static_cast<std::uint64_t>(lane));
      for (std::uint64_t c = 0; c < part; c += chunk_) {
        out.push_back({offset + at + c, std::min(chunk_, part - c), lane});
      }
    }
    return out;
  }
  void add(std::size_t stream, const Command& c) { program_.streams[stream].push_back(c); }
  std::size_t reduce_stream() const { return static_cast<std::size_t>(lanes_); }
  std::size_t await_stream() const { return static_cast<std::size_t>(lanes_) + 1; }
  // Every lane's sends wait for `signal` to reach `count` first.
  void hold_sends(std::uint32_t signal, std::uint32_t count) {
    for (int lane = 0; lane < lanes_; ++lane) add(lane, wait_command(signal, count));
  }
  // Elements [offset, offset + length) of the vector at `src` here to rank `to`, where element
  // `offset` goes to `dst`.
  void send(int to, std::uint64_t offset, std::uint64_t length, std::uint64_t src,
            std::uint64_t dst, int step) {
    const auto list = pieces(offset, length);
    for (std::size_t i = 0; i < list.size(); ++i) {
      const Piece& piece = list[i];
      add(piece.lane,
          write_command(qp_(to, piece.lane), src + bytes(piece.offset),
                        dst + bytes(piece.offset - offset), bytes(piece.length), arrived(step, i)));
    }
  }
  // The output's elements [offset, offset + length) = the vector at `a` op what arrived in step
  // `step` at `landing` (where element `offset` lands), piece by piece as it arrives.
  std::uint32_t reduce(std::uint64_t offset, std::uint64_t length, std::uint64_t a,
                       std::uint64_t landing, int step) {
    const auto list = pieces(offset, length);
    for (std::size_t i = 0; i < list.size(); ++i) {
      const Piece& piece = list[i];
      Command c = engine_command(spec_, Command::Kind::kReduce, l_.output + bytes(piece.offset),
                                 a + bytes(piece.offset), landing + bytes(piece.offset - offset),
                                 piece.length);
      after(c, arrived(step, i));
      c.done = reduced(step);
      add(reduce_stream(), c);
    }
    return static_cast<std::uint32_t>(list.size());
  }
  void await(std::size_t stream, std::uint64_t offset, std::uint64_t length, int step) {
    const std::size_t count = pieces(offset, length).size();
    for (std::size_t i = 0; i < count; ++i) add(stream, wait_command(arrived(step, i), 1));
  }

  // Rank 2i of the first 2e: its vector to rank 2i+1, the result back from it.
  void sit_out() {
    send(r_ + 1, 0, spec_.count, l_.input, l_.arriving_results, 0);
    await(await_stream(), 0, spec_.count, unfold_step());
  }

  void fold() {
    const std::uint32_t count = reduce(0, spec_.count, l_.input, l_.arriving_results, 0);
    hold_sends(reduced(0), count);
  }

  // Returns the blocks [lo, hi) this rank holds reduced over every rank: block v.
  std::pair<int, int> reduce_scatter(int v) {
    int lo = 0, hi = p_;
    std::uint64_t src = r_ < 2 * extra_ ? l_.output : l_.input;
    std::uint64_t landing = l_.arriving_partials;
    for (int step = 1; step <= levels_; ++step) {
      const int m = p_ >> step, mid = (lo + hi) / 2;
      const bool upper = (v & m) != 0;
      const auto [give_at, give] = upper ? blocks(lo, mid) : blocks(mid, hi);
      const auto [keep_at, keep] = upper ? blocks(mid, hi) : blocks(lo, mid);
      // Each step's half lands in its own stretch of scratch (the partner, whose range matches
      // ours, counts the same stretches), so no step's arrivals overwrite what an earlier
      // step has yet to reduce.
      send(rank_of(v ^ m), give_at, give, src, landing, step);
      const std::uint32_t count = reduce(keep_at, keep, src, landing, step);
      hold_sends(reduced(step), count);
      src = l_.output;
      landing += bytes(keep);
      (upper ? lo : hi) = mid;
    }
    return {lo, hi};
  }

  // Results go straight into the partner's output: it gave those blocks away while halving.
  void all_gather(int v, int lo, int hi) {
    for (int j = 1; j <= levels_; ++j) {
      const int m = 1 << (j - 1), step = levels_ + j;
      const auto [at, length] = blocks(lo, hi);
      send(rank_of(v ^ m), at, length, l_.output, l_.output + bytes(at), step);
      const int sibling = lo ^ m;
      const auto [sibling_at, sibling_length] = blocks(sibling, sibling + (hi - lo));
      for (int lane = 0; lane < lanes_; ++lane) await(lane, sibling_at, sibling_length, step);
      lo = std::min(lo, sibling);
      hi = lo + 2 * m;
    }
  }

  int p_ = 1, levels_ = 0, extra_ = 0, steps_ = 0;
  std::uint32_t max_pieces_ = 1;
};

}  // namespace

Program halving_doubling_program(const Spec& spec, int ranks, int rank, int lanes,
                                 const std::function<std::uint32_t(int, int)>& qp) {
  return HalvingDoublingBuilder(spec, ranks, rank, lanes, qp).build();
}

}  // namespace podsim::collectives
