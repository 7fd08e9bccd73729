#include "collectives/pipeline.h"

#include <algorithm>
#include <stdexcept>

#include "collectives/schedule.h"

namespace podsim::collectives {

std::vector<std::pair<std::uint64_t, std::uint64_t>> cut_pieces(std::uint64_t count,
                                                                std::uint64_t unit, int pieces) {
  if (unit == 0 || count % unit != 0 || pieces < 1) {
    throw std::invalid_argument("cut_pieces: count must be whole units and pieces at least 1");
  }
  const std::uint64_t units = count / unit;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> out;
  for (std::uint64_t p = 0; p < static_cast<std::uint64_t>(pieces); ++p) {
    const auto [at, length] = part_of(units, static_cast<std::uint64_t>(pieces), p);
    if (length > 0) out.emplace_back(at * unit, length * unit);
  }
  return out;
}

PhasePipeline::PhasePipeline(int pieces, int phases, Launch launch, std::function<void()> finished,
                             int window)
    : pieces_(pieces),
      phases_(phases),
      window_(window),
      launch_(std::move(launch)),
      finished_(std::move(finished)),
      states_(static_cast<std::size_t>(pieces * phases), State::kWaiting) {
  if (pieces < 1 || phases < 1 || window < 1) {
    throw std::invalid_argument("a pipeline needs pieces, phases and a window of at least one");
  }
}

void PhasePipeline::start() {
  for (int piece = 0; piece < std::min(window_, pieces_); ++piece) try_launch(piece, 0);
}

void PhasePipeline::phase_done(int piece, int phase) {
  if (state(piece, phase) != State::kRunning) throw std::logic_error("a phase finished twice");
  state(piece, phase) = State::kDone;
  ++finished_count_;
  if (finished()) {
    if (finished_) finished_();
    return;
  }
  if (phase + 1 < phases_) try_launch(piece, phase + 1);
  if (piece + window_ < pieces_) try_launch(piece + window_, phase);
}

void PhasePipeline::try_launch(int piece, int phase) {
  if (state(piece, phase) != State::kWaiting) return;
  if (phase > 0 && state(piece, phase - 1) != State::kDone) return;
  if (piece >= window_ && state(piece - window_, phase) != State::kDone) return;
  state(piece, phase) = State::kRunning;
  launch_(piece, phase,
          [self = shared_from_this(), piece, phase] { self->phase_done(piece, phase); });
}

}  // namespace podsim::collectives
