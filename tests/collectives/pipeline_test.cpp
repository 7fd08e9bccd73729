// The phase pipeline's order: phase k of piece p only after phase k-1 of p and phase k of
// p-window; pieces cut in whole units.
#include "collectives/pipeline.h"

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "collectives/collective.h"

namespace podsim::collectives {
namespace {

struct Recorder {
  std::vector<std::pair<int, int>> launched;
  std::vector<std::function<void()>> running;
  bool finished = false;

  std::shared_ptr<PhasePipeline> make(int pieces, int phases, int window = 1) {
    return std::make_shared<PhasePipeline>(
        pieces, phases,
        [this](int piece, int phase, std::function<void()> done) {
          launched.emplace_back(piece, phase);
          running.push_back(std::move(done));
        },
        [this] { finished = true; }, window);
  }
  // Finishes the phase launched `i`-th.
  void finish(std::size_t i) { std::exchange(running[i], nullptr)(); }
};

TEST(PhasePipeline, PhasesOverlapAcrossPiecesInOrder) {
  Recorder r;
  auto pipeline = r.make(3, 2);
  pipeline->start();
  ASSERT_EQ(r.launched, (std::vector<std::pair<int, int>>{{0, 0}}));
  r.finish(0);  // piece 0 phase 0: phase 1 of piece 0 and phase 0 of piece 1 may go
  ASSERT_EQ(r.launched, (std::vector<std::pair<int, int>>{{0, 0}, {0, 1}, {1, 0}}));
  r.finish(2);  // piece 1 phase 0: piece 1 phase 1 still waits for piece 0 phase 1
  ASSERT_EQ(r.launched.size(), 4u);
  EXPECT_EQ(r.launched[3], std::make_pair(2, 0));
  r.finish(1);  // piece 0 phase 1 frees piece 1 phase 1
  EXPECT_EQ(r.launched[4], std::make_pair(1, 1));
  r.finish(3);
  r.finish(4);
  EXPECT_FALSE(r.finished);
  ASSERT_EQ(r.launched.size(), 6u);
  EXPECT_EQ(r.launched[5], std::make_pair(2, 1));
  r.finish(5);
  EXPECT_TRUE(r.finished);
  EXPECT_TRUE(pipeline->finished());
}

// With a window of two, two pieces may be in one phase at once: phase k of piece p waits for
// phase k of piece p-2, not p-1.
TEST(PhasePipeline, AWindowLetsPiecesShareAPhase) {
  Recorder r;
  auto pipeline = r.make(3, 2, 2);
  pipeline->start();
  ASSERT_EQ(r.launched, (std::vector<std::pair<int, int>>{{0, 0}, {1, 0}}));
  r.finish(1);  // piece 1 phase 0: its phase 1 may go, piece 0's phase 1 not yet
  ASSERT_EQ(r.launched, (std::vector<std::pair<int, int>>{{0, 0}, {1, 0}, {1, 1}}));
  r.finish(0);  // piece 0 phase 0: its phase 1, and piece 2's phase 0
  ASSERT_EQ(r.launched.size(), 5u);
  EXPECT_EQ(r.launched[3], std::make_pair(0, 1));
  EXPECT_EQ(r.launched[4], std::make_pair(2, 0));
  for (std::size_t i = 2; i < 5; ++i) r.finish(i);
  ASSERT_EQ(r.launched.size(), 6u);
  EXPECT_EQ(r.launched[5], std::make_pair(2, 1));
  r.finish(5);
  EXPECT_TRUE(r.finished);
  EXPECT_THROW(r.make(3, 2, 0), std::invalid_argument);
}

TEST(PhasePipeline, PhasesThatFinishAtOnceRunEverything) {
  int launches = 0;
  bool finished = false;
  auto pipeline = std::make_shared<PhasePipeline>(
      4, 3,
      [&](int, int, std::function<void()> done) {
        ++launches;
        done();
      },
      [&] { finished = true; });
  pipeline->start();
  EXPECT_EQ(launches, 12);
  EXPECT_TRUE(finished);
}

TEST(CutPieces, WholeUnitsNearlyEqualNoneEmpty) {
  const auto pieces = cut_pieces(8 * 10, 8, 3);  // 10 units: 4, 3, 3
  ASSERT_EQ(pieces.size(), 3u);
  EXPECT_EQ(pieces[0], std::make_pair(std::uint64_t{0}, std::uint64_t{32}));
  EXPECT_EQ(pieces[1], std::make_pair(std::uint64_t{32}, std::uint64_t{24}));
  EXPECT_EQ(pieces[2], std::make_pair(std::uint64_t{56}, std::uint64_t{24}));
  EXPECT_EQ(cut_pieces(16, 8, 5).size(), 2u);  // no more pieces than units
  EXPECT_THROW(cut_pieces(17, 8, 2), std::invalid_argument);
}

TEST(PipelineDepth, OnePiecePer64MiBFromOneToSixteenUnlessGiven) {
  Spec spec;
  spec.type = core::DataType::kFp32;
  const auto depth_at = [&spec](std::uint64_t mib) {
    spec.count = mib * (1 << 20) / 4;
    return pipeline_depth(spec);
  };
  EXPECT_EQ(depth_at(16), 1);
  EXPECT_EQ(depth_at(64), 1);
  EXPECT_EQ(depth_at(128), 2);
  EXPECT_EQ(depth_at(1024), 16);
  EXPECT_EQ(depth_at(4096), 16);
  spec.pipeline = 3;
  EXPECT_EQ(depth_at(16), 3);
}

}  // namespace
}  // namespace podsim::collectives
