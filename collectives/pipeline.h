// How a collective made of phases (the hierarchical all-reduce: reduce-scatter in the boxes,
// all-reduce across them, all-gather in the boxes) overlaps them: the vector is cut into pieces
// and phase k of piece p starts once phase k-1 of piece p and phase k of piece p-window have
// both finished, so each phase works on up to `window` pieces at a time (overlapping one
// piece's latency with the next one's transfers) while the others work on the pieces before and
// after them. Plain bookkeeping: launching a phase and reporting it finished are the
// caller's.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

namespace podsim::collectives {

// `count` elements cut into at most `pieces` pieces, each a whole number of `unit` elements
// (count must be a multiple of unit): offset and length of each, in elements, none empty.
std::vector<std::pair<std::uint64_t, std::uint64_t>> cut_pieces(std::uint64_t count,
                                                                std::uint64_t unit, int pieces);

// Made with std::make_shared: each running phase's `done` callback keeps the pipeline alive.
class PhasePipeline : public std::enable_shared_from_this<PhasePipeline> {
 public:
  // Starts a phase; calls `done` (once, now or later) when it has finished.
  using Launch = std::function<void(int piece, int phase, std::function<void()> done)>;

  // `finished` runs once the last phase of the last piece is done.
  PhasePipeline(int pieces, int phases, Launch launch, std::function<void()> finished,
                int window = 1);

  void start();
  bool finished() const { return finished_count_ == pieces_ * phases_; }

 private:
  enum class State : std::uint8_t { kWaiting, kRunning, kDone };
  State& state(int piece, int phase) {
    return states_[static_cast<std::size_t>(piece * phases_ + phase)];
  }
  void try_launch(int piece, int phase);
  void phase_done(int piece, int phase);

  int pieces_, phases_, window_;
  Launch launch_;
  std::function<void()> finished_;
  std::vector<State> states_;
  int finished_count_ = 0;
};

}  // namespace podsim::collectives
