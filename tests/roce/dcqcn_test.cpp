// DCQCN's rate cut, alpha, decrease period, increase stages, byte counter and recovery.
#include "hw/roce/dcqcn.h"

#include <gtest/gtest.h>

namespace podsim::roce {
namespace {

constexpr double kLine = 100e9;
constexpr core::TimePs kUs = 1000000;

double decay(double alpha, int periods) {
  for (int i = 0; i < periods; ++i) alpha *= 1 - 1.0 / 256;
  return alpha;
}

TEST(Dcqcn, StartsAtLineRateWithInitialAlpha) {
  Dcqcn d(DcqcnConfig::hpcc(), kLine);
  d.advance(10 * kUs);
  EXPECT_EQ(d.rate(), kLine);
  EXPECT_FALSE(d.limited());
  EXPECT_EQ(d.alpha(1000 * kUs), 1.0);  // alpha runs from the first CNP on
}

TEST(Dcqcn, CnpCutsRateByHalfAlpha) {
  Dcqcn d(DcqcnConfig::hpcc(), kLine);
  d.on_cnp(5 * kUs);
  EXPECT_EQ(d.rate(), 50e9);  // Rc (1 - 1/2)
  EXPECT_EQ(d.target_rate(), kLine);
  EXPECT_EQ(d.alpha(5 * kUs), 1.0);  // (1 - g) 1 + g
  EXPECT_EQ(d.cuts(), 1u);
}

TEST(Dcqcn, AlphaDecaysPerPeriodAndSetsTheNextCut) {
  Dcqcn d(DcqcnConfig::hpcc(), kLine);
  d.on_cnp(0);
  const double a = decay(1.0, 10);
  EXPECT_DOUBLE_EQ(d.alpha(10 * kUs + 999), a);
  d.on_cnp(10 * kUs + 999);
  EXPECT_DOUBLE_EQ(d.target_rate(), 50e9);
  EXPECT_DOUBLE_EQ(d.rate(), 50e9 * (1 - a / 2));
  EXPECT_DOUBLE_EQ(d.alpha(10 * kUs + 999), (1 - 1.0 / 256) * a + 1.0 / 256);
}

TEST(Dcqcn, AtMostOneCutPerDecreasePeriod) {
  Dcqcn d(DcqcnConfig::hpcc(), kLine);
  d.on_cnp(0);
  d.on_cnp(1 * kUs);
  d.on_cnp(2 * kUs);
  EXPECT_EQ(d.cuts(), 1u);
  EXPECT_EQ(d.rate(), 50e9);
  d.advance(4 * kUs - 1);
  EXPECT_EQ(d.cuts(), 1u);
  d.advance(4 * kUs);  // the CNPs inside the period are applied when it ends
  EXPECT_EQ(d.cuts(), 2u);
  EXPECT_DOUBLE_EQ(d.rate(), 50e9 * (1 - decay(1.0, 4) / 2));
}

TEST(Dcqcn, FastRecoveryThenAdditiveIncrease) {
  DcqcnConfig c = DcqcnConfig::hpcc();  // F = 1, timer 300 us, byte counter 10 MB (not reached)
  Dcqcn d(c, kLine);
  d.on_cnp(0);
  d.advance(300 * kUs - 1);
  EXPECT_EQ(d.rate(), 50e9);
  d.advance(300 * kUs);
  EXPECT_EQ(d.rate(), 75e9);  // fast recovery towards Rt
  EXPECT_EQ(d.target_rate(), kLine);
  d.advance(600 * kUs);
  EXPECT_EQ(d.rate(), 87.5e9);  // additive increase; Rt stays capped at the line rate
}

TEST(Dcqcn, AdditiveIncreaseRaisesTheTarget) {
  DcqcnConfig c = DcqcnConfig::hpcc();
  c.fast_recovery_rounds = 0;
  c.additive_increase = core::Bandwidth{1e9};
  Dcqcn d(c, kLine);
  d.on_cnp(0);
  d.on_cnp(4 * kUs);  // Rt = 50 Gb/s
  const double rc = d.rate();
  d.advance(304 * kUs);
  EXPECT_DOUBLE_EQ(d.target_rate(), 51e9);
  EXPECT_DOUBLE_EQ(d.rate(), (51e9 + rc) / 2);
}

TEST(Dcqcn, TimerOnlyGoesToHyperIncrease) {
  DcqcnConfig c = DcqcnConfig::hpcc();
  c.fast_recovery_rounds = 0;
  c.byte_counter = core::ByteSize{0};
  c.hyper_increase = core::Bandwidth{1e9};
  Dcqcn d(c, kLine);
  d.on_cnp(0);
  d.on_cnp(4 * kUs);
  d.advance(304 * kUs);
  EXPECT_DOUBLE_EQ(d.target_rate(), 51e9);  // i = 1
  d.advance(604 * kUs);
  EXPECT_DOUBLE_EQ(d.target_rate(), 53e9);  // i = 2
}

TEST(Dcqcn, ByteCounterDrivesIncreaseEvents) {
  DcqcnConfig c = DcqcnConfig::hpcc();
  c.byte_counter = core::ByteSize{1000000};
  Dcqcn d(c, kLine);
  d.on_cnp(0);
  d.on_sent(999999, 10 * kUs);
  EXPECT_EQ(d.rate(), 50e9);
  d.on_sent(1, 11 * kUs);
  EXPECT_EQ(d.rate(), 75e9);  // B = 1 <= F: fast recovery
}

TEST(Dcqcn, RateNeverFallsBelowTheMinimum) {
  DcqcnConfig c = DcqcnConfig::hpcc();
  c.min_rate = core::Bandwidth{40e9};
  Dcqcn d(c, kLine);
  d.on_cnp(0);
  d.on_cnp(4 * kUs);
  EXPECT_EQ(d.rate(), 40e9);
}

TEST(Dcqcn, RecoversToExactlyTheLineRate) {
  Dcqcn d(DcqcnConfig::hpcc(), kLine);
  d.on_cnp(0);
  d.advance(20000 * kUs);
  EXPECT_EQ(d.rate(), kLine);
  EXPECT_FALSE(d.limited());
}

TEST(Dcqcn, LazyEvaluationEqualsStepping) {
  Dcqcn lazy(DcqcnConfig::hpcc(), kLine), stepped(DcqcnConfig::hpcc(), kLine);
  const core::TimePs cnps[] = {3 * kUs, 5 * kUs, 900 * kUs, 2000 * kUs};
  for (const core::TimePs t : cnps) {
    for (core::TimePs s = 0; s < t; s += kUs / 2) stepped.advance(s);
    stepped.on_cnp(t);
    lazy.on_cnp(t);
  }
  for (core::TimePs s = 0; s <= 5000 * kUs; s += kUs) stepped.advance(s);
  lazy.advance(5000 * kUs);
  EXPECT_EQ(lazy.rate(), stepped.rate());
  EXPECT_EQ(lazy.target_rate(), stepped.target_rate());
  EXPECT_EQ(lazy.cuts(), stepped.cuts());
}

TEST(Dcqcn, ObserverSeesEveryChange) {
  Dcqcn d(DcqcnConfig::hpcc(), kLine);
  core::TimeWeighted level;
  d.observe(&level, 0);
  d.on_cnp(100 * kUs);
  d.advance(400 * kUs);  // back to 75 Gb/s at 400 us
  EXPECT_EQ(level.level(), 75.0);
  // 100 us at 100, 300 us at 50, 100 us at 75 over the first 500 us.
  EXPECT_DOUBLE_EQ(level.average(500 * kUs), (100.0 * 100 + 50.0 * 300 + 75.0 * 100) / 500);
}

// The nic profile (after HPCC's simulator and NVIDIA's NICs): a burst of cuts keeps the target
// the flow had before it; the paper's rules set the target at every cut.
TEST(Dcqcn, NicProfileKeepsTheTargetThroughBackToBackCuts) {
  Dcqcn nic(DcqcnConfig::nic(), kLine), paper(DcqcnConfig::hpcc(), kLine);
  for (Dcqcn* d : {&nic, &paper}) {
    d->on_cnp(0);
    d->on_cnp(4 * kUs);
  }
  EXPECT_EQ(nic.cuts(), 2u);
  EXPECT_EQ(nic.target_rate(), kLine);
  EXPECT_EQ(paper.target_rate(), 50e9);
  EXPECT_LT(nic.rate(), 50e9);
}

// After a timer increase the next cut sets the target to the rate it cuts from.
TEST(Dcqcn, NicProfileClampsTheTargetAfterATimerIncrease) {
  Dcqcn d(DcqcnConfig::nic(), kLine);
  d.on_cnp(0);           // Rc 50, Rt 100
  d.advance(300 * kUs);  // fast recovery: Rc 75
  EXPECT_EQ(d.rate(), 75e9);
  d.on_cnp(301 * kUs);
  EXPECT_EQ(d.target_rate(), 75e9);
}

// Alpha moves once per alpha period, by g only when a CNP came in it, and not at cuts.
TEST(Dcqcn, NicProfileUpdatesAlphaPerPeriod) {
  DcqcnConfig c = DcqcnConfig::nic();
  c.initial_alpha = 0.5;
  Dcqcn d(c, kLine);
  const double g = 1.0 / 256;
  d.on_cnp(0);  // cuts with alpha 0.5 and starts the alpha timer
  EXPECT_EQ(d.rate(), 75e9);
  EXPECT_EQ(d.alpha(kUs - 1), 0.5);
  EXPECT_DOUBLE_EQ(d.alpha(kUs), 0.5 * (1 - g));  // no CNP in the first period
  d.on_cnp(kUs + kUs / 2);                        // a CNP in the second
  const double second = (1 - g) * (0.5 * (1 - g)) + g;
  EXPECT_DOUBLE_EQ(d.alpha(2 * kUs), second);
  EXPECT_DOUBLE_EQ(d.alpha(3 * kUs), second * (1 - g));
  d.advance(4 * kUs);  // the CNP's cut, at the end of the decrease period, uses alpha then
  EXPECT_EQ(d.cuts(), 2u);
  EXPECT_DOUBLE_EQ(d.rate(), 75e9 * (1 - second * (1 - g) * (1 - g) / 2));
  EXPECT_DOUBLE_EQ(d.alpha(4 * kUs), second * (1 - g) * (1 - g));  // the cut left alpha alone
}

TEST(Dcqcn, NicProfileHyperIncreaseAddsTheSameStepEachTime) {
  DcqcnConfig c = DcqcnConfig::nic();
  c.fast_recovery_rounds = 0;
  c.hyper_increase = core::Bandwidth{1e9};
  Dcqcn d(c, kLine);
  d.on_cnp(0);
  d.advance(300 * kUs);  // a timer increase, so the next cut sets the target
  d.on_cnp(301 * kUs);
  const double rt = d.target_rate();
  d.advance(601 * kUs);
  EXPECT_DOUBLE_EQ(d.target_rate(), rt + 1e9);
  d.advance(901 * kUs);
  EXPECT_DOUBLE_EQ(d.target_rate(), rt + 2e9);  // the paper's would be rt + 3e9
}

}  // namespace
}  // namespace podsim::roce
