#include "collectives/mesh.h"

#include <algorithm>
#include <vector>

#include "collectives/schedule.h"

namespace podsim::collectives {

namespace {

using chip::Command;

class MeshBuilder {
 public:
  MeshBuilder(const Spec& spec, int n, int rank, int lanes,
              const std::function<std::uint32_t(int, int)>& qp)
      : spec_(spec),
        n_(n),
        r_(rank),
        lanes_(lanes),
        qp_(qp),
        l_(layout(spec, n, rank)),
        element_(core::size_of(spec.type)),
        segments_(spec.count, n),
        chunk_(spec.chunk_bytes / element_) {
    // Every lane of the longest segment in chunks; shorter pieces have fewer.
    const std::uint64_t lane_max = (segments_.length[0] + lanes_ - 1) / lanes_;
    chunks_ = std::max<std::uint64_t>(1, (lane_max + chunk_ - 1) / chunk_);
    program_.signals = static_cast<std::uint32_t>((2 * n_ + 1) * lanes_ * chunks_);
  }

  chip::Program build() {
    const bool reduce = spec_.op != Op::kAllGather, gather = spec_.op != Op::kReduceScatter;
    for (int lane = 0; lane < lanes_; ++lane) {
      if (reduce) {
        for (int step = 1; step < n_; ++step) send_pieces(lane, segment(r_ + step));
        reduce_own(lane);
      }
      if (gather) {
        for (int step = 1; step < n_; ++step) gather_to(lane, segment(r_ + step));
        await_gathered(lane);
      }
    }
    if (n_ == 1 || (spec_.op == Op::kAllGather && !spec_.in_place)) own_copy();
    return std::move(program_);
  }

 private:
  enum SignalKind { kPieceArrived = 0, kResultArrived = 1, kReduced = 2 };
  // Per sender (or, for kReduced, the one owner), per lane, per chunk.
  std::uint32_t signal(SignalKind kind, int rank, int lane, std::uint64_t c) const {
    const std::uint64_t slot = kind == kReduced ? 2 * static_cast<std::uint64_t>(n_)
                                                : kind * static_cast<std::uint64_t>(n_) + rank;
    return static_cast<std::uint32_t>((slot * lanes_ + lane) * chunks_ + c);
  }
  int segment(int s) const { return ((s % n_) + n_) % n_; }

  // Chunk c of lane `lane` of segment s: element offset within the segment and length.
  std::pair<std::uint64_t, std::uint64_t> piece(int s, int lane, std::uint64_t c) const {
    const auto [lane_start, lane_len] = part_of(segments_.length[s], lanes_, lane);
    const std::uint64_t begin = c * chunk_;
    if (begin >= lane_len) return {0, 0};
    return {lane_start + begin, std::min(chunk_, lane_len - begin)};
  }
  std::uint64_t bytes(std::uint64_t elements) const { return elements * element_; }
  // Where this rank's input holds segment s, and where its output does.
  std::uint64_t input(int s) const {
    return spec_.op == Op::kAllGather ? l_.input : l_.input + bytes(segments_.offset[s]);
  }
  std::uint64_t output(int s) const {
    return spec_.op == Op::kReduceScatter ? l_.output : l_.output + bytes(segments_.offset[s]);
  }
  // Where the owner of segment s keeps the piece sender `from` sent it (one slot per sender).
  std::uint64_t slot(int from) const {
    return l_.arriving_partials + bytes(static_cast<std::uint64_t>(from) * segments_.length[0]);
  }

  void add(std::size_t stream, const Command& c) {
    if (program_.streams.size() <= stream) program_.streams.resize(stream + 1);
    program_.streams[stream].push_back(c);
  }
  // Streams: per lane, one for each peer's sends, one for reductions, one for awaiting data.
  std::size_t send_stream(int lane, int peer) const {
    return static_cast<std::size_t>(lane) * (n_ + 2) + static_cast<std::size_t>(peer);
  }
  std::size_t reduce_stream(int lane) const {
    return static_cast<std::size_t>(lane) * (n_ + 2) + n_;
  }
  std::size_t await_stream(int lane) const {
    return static_cast<std::size_t>(lane) * (n_ + 2) + n_ + 1;
  }

  // Our input's piece of segment s goes to its owner, into our slot there.
  void send_pieces(int lane, int owner) {
    for (std::uint64_t c = 0; c < chunks_; ++c) {
      const auto [offset, len] = piece(owner, lane, c);
      if (len == 0) continue;
      add(send_stream(lane, owner),
          write_command(qp_(owner, lane), input(owner) + bytes(offset), slot(r_) + bytes(offset),
                        bytes(len), signal(kPieceArrived, r_, lane, c)));
    }
  }

  // Our segment: own input, then each peer's piece in ring order from us, as they arrive.
  void reduce_own(int lane) {
    for (std::uint64_t c = 0; c < chunks_; ++c) {
      const auto [offset, len] = piece(r_, lane, c);
      if (len == 0) continue;
      const std::uint64_t dst = output(r_) + bytes(offset);
      for (int step = 1; step < n_; ++step) {
        const int from = segment(r_ + step);
        Command reduce = engine_command(spec_, Command::Kind::kReduce, dst,
                                        step == 1 ? input(r_) + bytes(offset) : dst,
                                        slot(from) + bytes(offset), len);
        after(reduce, signal(kPieceArrived, from, lane, c));
        if (step == n_ - 1) reduce.done = signal(kReduced, 0, lane, c);
        add(reduce_stream(lane), reduce);
      }
    }
  }

  // Our finished segment (or, for an all-gather, our input) goes into a peer's output.
  void gather_to(int lane, int peer) {
    for (std::uint64_t c = 0; c < chunks_; ++c) {
      const auto [offset, len] = piece(r_, lane, c);
      if (len == 0) continue;
      const std::uint64_t src = spec_.op == Op::kAllGather ? input(r_) : output(r_);
      Command w = write_command(qp_(peer, lane), src + bytes(offset), output(r_) + bytes(offset),
                                bytes(len), signal(kResultArrived, r_, lane, c));
      if (spec_.op == Op::kAllReduce) after(w, signal(kReduced, 0, lane, c));
      add(send_stream(lane, peer), w);
    }
  }

  void await_gathered(int lane) {
    for (int step = 1; step < n_; ++step) {
      const int from = segment(r_ + step);
      for (std::uint64_t c = 0; c < chunks_; ++c) {
        if (piece(from, lane, c).second == 0) continue;
        add(await_stream(lane), wait_command(signal(kResultArrived, from, lane, c), 1));
      }
    }
  }

  // The rank's own piece where no peer brings it (as in ring.cpp).
  void own_copy() {
    if (spec_.in_place) return;
    const std::uint64_t len = std::min(l_.input_bytes, l_.output_bytes);
    if (len == 0) return;
    const std::uint64_t dst = spec_.op == Op::kAllGather ? output(r_) : l_.output;
    add(0, engine_command(spec_, Command::Kind::kCopy, dst, l_.input, 0, len / element_));
  }

  const Spec& spec_;
  int n_, r_, lanes_;
  const std::function<std::uint32_t(int, int)>& qp_;
  Layout l_;
  std::uint64_t element_;
  Segments segments_;
  std::uint64_t chunk_, chunks_ = 1;
  chip::Program program_;
};

}  // namespace

chip::Program mesh_program(const Spec& spec, int ranks, int rank, int lanes,
                           const std::function<std::uint32_t(int, int)>& qp) {
  return MeshBuilder(spec, ranks, rank, lanes, qp).build();
}

}  // namespace podsim::collectives
