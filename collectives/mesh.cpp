#include "collectives/mesh.h"

#include <algorithm>
#include <vector>

#include "collectives/schedule.h"

namespace podsim::collectives {

namespace {

class MeshBuilder : ProgramBuilder {
 public:
  MeshBuilder(const Spec& spec, int n, int rank, int lanes, const QpOf& qp)
      : ProgramBuilder(spec, n, rank, lanes, qp), segments_(spec.count, n) {
    // Every lane of the longest segment in chunks; shorter pieces have fewer.
    const std::uint64_t lane_max = (segments_.length[0] + lanes_ - 1) / lanes_;
    chunks_ = std::max<std::uint64_t>(1, (lane_max + chunk_ - 1) / chunk_);
    program_.signals = static_cast<std::uint32_t>(kKinds * n_ * lanes_ * chunks_);
  }

  Program build() {
    for (int lane = 0; lane < lanes_; ++lane) {
      switch (spec_.op) {
        case Op::kBroadcast:
          broadcast(lane);
          break;
        case Op::kAllToAll:
          all_to_all(lane);
          break;
        default:
          reduce_and_gather(lane);
      }
    }
    own_copy();
    return std::move(program_);
  }

 private:
  enum SignalKind { kPieceArrived, kResultArrived, kReduced, kSent, kKinds };
  // Per sender or peer (for kReduced, the rank itself: 0), per lane, per chunk.
  std::uint32_t signal(SignalKind kind, int rank, int lane, std::uint64_t c) const {
    const std::uint64_t slot = static_cast<std::uint64_t>(kind) * n_ + rank;
    return static_cast<std::uint32_t>((slot * lanes_ + lane) * chunks_ + c);
  }
  bool ends_gathered() const { return spec_.op == Op::kAllReduce || spec_.op == Op::kAllGather; }

  // Reduce-scatter (all-reduce, reduce-scatter, reduce), then the segments go to every rank
  // (all-reduce, all-gather) or to the root (reduce).
  void reduce_and_gather(int lane) {
    if (reduces(spec_.op)) {
      for (int step = 1; step < n_; ++step) send_pieces(lane, segment(r_ + step));
      reduce_own(lane);
    }
    if (ends_gathered()) {
      for (int step = 1; step < n_; ++step) gather_to(lane, segment(r_ + step));
      await_results(lane, -1);
    }
    if (spec_.op == Op::kReduce) {
      if (r_ != spec_.root) gather_to(lane, spec_.root);
      if (r_ == spec_.root) await_results(lane, -1);
    }
  }

  // The root sends segment s straight to rank s (a scatter) and its own segment to everyone;
  // every other rank passes its segment on to the ranks other than the root as it arrives.
  void broadcast(int lane) {
    const int root = spec_.root;
    if (r_ == root) {
      for (int step = 1; step < n_; ++step) {
        const int peer = segment(r_ + step);
        scatter_to(lane, peer);
        gather_to(lane, peer);
      }
      return;
    }
    for (std::uint64_t c = 0; c < chunks_; ++c) {
      if (piece(r_, lane, c).second == 0) continue;
      add(await_stream(lane), wait_command(signal(kPieceArrived, root, lane, c), 1));
    }
    for (int step = 1; step < n_; ++step) {
      const int peer = segment(r_ + step);
      if (peer != root) gather_to(lane, peer);
    }
    await_results(lane, -1);
  }

  // Block `peer` of our input goes into block r of the peer's output (or its scratch, in
  // place, copied over once our own block `peer` has left).
  void all_to_all(int lane) {
    for (int step = 1; step < n_; ++step) {
      const int peer = segment(r_ + step);
      const std::uint64_t landing = spec_.in_place ? l_.arriving_results : l_.output;
      for (std::uint64_t c = 0; c < chunks_; ++c) {
        const auto [offset, len] = piece(peer, lane, c);
        if (len == 0) continue;
        Command w = write_command(qp_(peer, lane), input(peer) + bytes(offset),
                                  landing + bytes(segments_.offset[r_] + offset), bytes(len),
                                  signal(kPieceArrived, r_, lane, c));
        w.done = signal(kSent, peer, lane, c);
        add(send_stream(lane, peer), w);
        add(reduce_stream(lane), wait_command(signal(kPieceArrived, peer, lane, c), 1));
        if (!spec_.in_place) continue;
        // Our block `peer` is where its block lands: copy once ours has gone.
        const std::uint64_t at = bytes(segments_.offset[peer] + offset);
        add(await_stream(lane), wait_command(signal(kSent, peer, lane, c), 1));
        Command copy = engine_command(spec_, Command::Kind::kCopy, l_.output + at,
                                      l_.arriving_results + at, 0, len);
        add(await_stream(lane), after(copy, signal(kPieceArrived, peer, lane, c)));
      }
    }
  }
  int segment(int s) const { return ((s % n_) + n_) % n_; }

  // Chunk c of lane `lane` of segment s: element offset within the segment and length.
  std::pair<std::uint64_t, std::uint64_t> piece(int s, int lane, std::uint64_t c) const {
    const auto [lane_start, lane_len] = part_of(segments_.length[s], lanes_, lane);
    const std::uint64_t begin = c * chunk_;
    if (begin >= lane_len) return {0, 0};
    return {lane_start + begin, std::min(chunk_, lane_len - begin)};
  }
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

  // Our finished segment (an all-gather's or broadcast's input, a reduction's result) goes into
  // a peer's output.
  void gather_to(int lane, int peer) {
    const bool from_input =
        spec_.op == Op::kAllGather || (spec_.op == Op::kBroadcast && r_ == spec_.root);
    for (std::uint64_t c = 0; c < chunks_; ++c) {
      const auto [offset, len] = piece(r_, lane, c);
      if (len == 0) continue;
      const std::uint64_t src = from_input ? input(r_) : output(r_);
      Command w = write_command(qp_(peer, lane), src + bytes(offset), output(r_) + bytes(offset),
                                bytes(len), signal(kResultArrived, r_, lane, c));
      if (reduces(spec_.op)) after(w, signal(kReduced, 0, lane, c));
      if (spec_.op == Op::kBroadcast && r_ != spec_.root) {
        after(w, signal(kPieceArrived, spec_.root, lane, c));
      }
      add(send_stream(lane, peer), w);
    }
  }

  // The root's segment s straight into rank s's output.
  void scatter_to(int lane, int peer) {
    for (std::uint64_t c = 0; c < chunks_; ++c) {
      const auto [offset, len] = piece(peer, lane, c);
      if (len == 0) continue;
      add(send_stream(lane, peer),
          write_command(qp_(peer, lane), input(peer) + bytes(offset), output(peer) + bytes(offset),
                        bytes(len), signal(kPieceArrived, r_, lane, c)));
    }
  }

  // Waits for every other rank's segment but `except`'s.
  void await_results(int lane, int except) {
    for (int step = 1; step < n_; ++step) {
      const int from = segment(r_ + step);
      if (from == except) continue;
      for (std::uint64_t c = 0; c < chunks_; ++c) {
        if (piece(from, lane, c).second == 0) continue;
        add(await_stream(lane), wait_command(signal(kResultArrived, from, lane, c), 1));
      }
    }
  }

  // What of the rank's own input no peer brings to its output: an all-gather's input into its
  // slot, the broadcast root's whole input, an all-to-all's own block, a single rank's input.
  void own_copy() {
    if (spec_.in_place) return;
    std::uint64_t src = l_.input, dst = l_.output;
    std::uint64_t len = std::min(l_.input_bytes, l_.output_bytes);
    if (n_ == 1 || (spec_.op == Op::kBroadcast && r_ == spec_.root)) {
      // the whole buffer
    } else if (spec_.op == Op::kAllGather) {
      dst = output(r_);
    } else if (spec_.op == Op::kAllToAll) {
      src = input(r_);
      dst = output(r_);
      len = bytes(segments_.length[r_]);
    } else {
      return;
    }
    if (len == 0) return;
    add(0, engine_command(spec_, Command::Kind::kCopy, dst, src, 0, len / element_));
  }

  Segments segments_;
  std::uint64_t chunks_ = 1;
};

}  // namespace

Program mesh_program(const Spec& spec, int ranks, int rank, int lanes,
                     const std::function<std::uint32_t(int, int)>& qp) {
  return MeshBuilder(spec, ranks, rank, lanes, qp).build();
}

}  // namespace podsim::collectives
