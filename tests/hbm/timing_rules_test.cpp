// Each timing rule on its own: a scenario where that rule, and no other, sets the answer, so the
// test fails if the rule were dropped. HBM2 at 1 GHz: RL 14, WL 4, tRCD 14, tRP 14, tRAS 34,
// tRC 48, tCCD_S 1, tCCD_L 2, tRRD_S 4, tRRD_L 6, tFAW 30, tWTR_S 6, tWTR_L 8, tRTW 14, tRTP 5,
// tWR 16, BL/2 2, tRFC 260.
#include <gtest/gtest.h>

#include "hw/hbm/channel_state.h"

namespace podsim::hbm {
namespace {

class TimingRules : public ::testing::Test {
 protected:
  HbmConfig config = hbm2();
  // Bank b of bank group g.
  static int bank(int g, int b) { return g * 4 + b; }
  PseudoChannelState fresh() const { return PseudoChannelState(config); }
};

TEST_F(TimingRules, ActivateToColumnWaitsTrcd) {
  auto s = fresh();
  s.activate(bank(0, 0), 7, 100);
  EXPECT_EQ(s.earliest_column(bank(0, 0), false, 100), 114);
  EXPECT_EQ(s.earliest_column(bank(0, 0), true, 100), 114);
}

TEST_F(TimingRules, ActivateToPrechargeWaitsTras) {
  auto s = fresh();
  s.activate(bank(0, 0), 7, 100);
  EXPECT_EQ(s.earliest_precharge(bank(0, 0), 100), 134);
}

TEST_F(TimingRules, PrechargeToActivateWaitsTrp) {
  auto s = fresh();
  s.activate(bank(0, 0), 7, 0);
  s.precharge(bank(0, 0), 200);
  EXPECT_EQ(s.earliest_activate(bank(0, 0), 200), 214);
}

TEST_F(TimingRules, ActivateToActivateInOneBankWaitsTrc) {
  config.timing.rc = 60;  // longer than tRAS + tRP so that it alone decides
  auto s = fresh();
  s.activate(bank(0, 0), 7, 0);
  s.precharge(bank(0, 0), 34);
  EXPECT_EQ(s.earliest_activate(bank(0, 0), 34), 60);
}

TEST_F(TimingRules, ActivatesInOtherBankGroupsWaitTrrdS) {
  auto s = fresh();
  s.activate(bank(0, 0), 7, 0);
  EXPECT_EQ(s.earliest_activate(bank(1, 0), 0), 4);
}

TEST_F(TimingRules, ActivatesInOneBankGroupWaitTrrdL) {
  auto s = fresh();
  s.activate(bank(0, 0), 7, 0);
  EXPECT_EQ(s.earliest_activate(bank(0, 1), 0), 6);
}

TEST_F(TimingRules, FifthActivateWaitsTfaw) {
  auto s = fresh();
  for (int g = 0; g < 4; ++g) s.activate(bank(g, 0), 7, 4 * g);
  EXPECT_EQ(s.earliest_activate(bank(0, 1), 12), 30);
}

TEST_F(TimingRules, ColumnCommandsInOtherBankGroupsWaitTccdS) {
  config.timing.ccd_s = 3;  // longer than a burst so that it alone decides
  config.timing.ccd_l = 3;
  auto s = fresh();
  s.activate(bank(0, 0), 7, 0);
  s.activate(bank(1, 0), 7, 4);
  s.column(bank(0, 0), false, 100);
  EXPECT_EQ(s.earliest_column(bank(1, 0), false, 100), 103);
}

TEST_F(TimingRules, ColumnCommandsInOneBankGroupWaitTccdL) {
  config.timing.ccd_l = 5;
  auto s = fresh();
  s.activate(bank(0, 0), 7, 0);
  s.activate(bank(0, 1), 7, 6);
  s.column(bank(0, 0), false, 100);
  EXPECT_EQ(s.earliest_column(bank(0, 1), false, 100), 105);
  EXPECT_EQ(s.earliest_column(bank(1, 0), false, 100), 102);  // other group: the data bus
}

TEST_F(TimingRules, BurstsShareTheDataBusAndArriveAfterRlOrWl) {
  auto s = fresh();
  s.activate(bank(0, 0), 7, 0);
  s.activate(bank(1, 0), 7, 4);
  EXPECT_EQ(s.column(bank(0, 0), false, 100), 116);  // RL 14 + BL/2 2
  EXPECT_EQ(s.earliest_column(bank(1, 0), false, 100), 102);
  EXPECT_EQ(s.column(bank(1, 0), true, 200), 206);  // WL 4 + BL/2 2
}

TEST_F(TimingRules, ReadAfterWriteInOneBankGroupWaitsTwtrL) {
  auto s = fresh();
  s.activate(bank(0, 0), 7, 0);
  s.activate(bank(0, 1), 7, 6);
  s.column(bank(0, 0), true, 100);  // data ends at 106
  EXPECT_EQ(s.earliest_column(bank(0, 1), false, 100), 114);
}

TEST_F(TimingRules, ReadAfterWriteInAnotherBankGroupWaitsTwtrS) {
  auto s = fresh();
  s.activate(bank(0, 0), 7, 0);
  s.activate(bank(1, 0), 7, 4);
  s.column(bank(0, 0), true, 100);
  EXPECT_EQ(s.earliest_column(bank(1, 0), false, 100), 112);
}

TEST_F(TimingRules, WriteAfterReadWaitsTrtw) {
  auto s = fresh();
  s.activate(bank(0, 0), 7, 0);
  s.activate(bank(1, 0), 7, 4);
  s.column(bank(0, 0), false, 100);
  EXPECT_EQ(s.earliest_column(bank(1, 0), true, 100), 114);
}

TEST_F(TimingRules, ReadToPrechargeWaitsTrtp) {
  auto s = fresh();
  s.activate(bank(0, 0), 7, 0);
  s.column(bank(0, 0), false, 100);
  EXPECT_EQ(s.earliest_precharge(bank(0, 0), 100), 105);
}

TEST_F(TimingRules, WriteToPrechargeWaitsTwrAfterTheData) {
  auto s = fresh();
  s.activate(bank(0, 0), 7, 0);
  s.column(bank(0, 0), true, 100);
  EXPECT_EQ(s.earliest_precharge(bank(0, 0), 100), 122);
}

TEST_F(TimingRules, RefreshWaitsForPrechargeAndBlocksForTrfc) {
  auto s = fresh();
  s.activate(bank(2, 3), 7, 0);
  s.precharge(bank(2, 3), 900);
  EXPECT_EQ(s.earliest_refresh(900), 914);
  s.refresh(1000);
  EXPECT_EQ(s.earliest_activate(bank(0, 0), 1000), 1260);
  EXPECT_EQ(s.earliest_activate(bank(3, 3), 1000), 1260);
}

}  // namespace
}  // namespace podsim::hbm
