#include "hw/dma/issue_window.h"

#include <gtest/gtest.h>

#include <stdexcept>

namespace podsim::dma {
namespace {

// 800 Gbps is 100 GB/s: 10 ps per byte.
constexpr core::Bandwidth kRate{800e9};

TEST(IssueWindow, BurstsIssueAtTheEngineRateWhileSlotsAreFree) {
  IssueWindow window(4, kRate);
  window.start(1000);
  EXPECT_EQ(window.earliest(), 1000u);
  EXPECT_EQ(window.issue(1000, 100), 0);
  EXPECT_EQ(window.earliest(), 2000u);
  EXPECT_EQ(window.issue(2000, 100), 1);
  EXPECT_EQ(window.reading(), 2);
}

TEST(IssueWindow, TheBurstNBeforeMustCompleteFirst) {
  IssueWindow window(2, kRate);
  window.start(0);
  window.issue(0, 100);
  window.issue(1000, 100);
  // Slot 0's burst has not issued its write: when it will be free is not known yet.
  EXPECT_FALSE(window.earliest().has_value());
  window.written(0, 50000);
  EXPECT_EQ(window.earliest(), 50000u);
  EXPECT_EQ(window.writing(40000), 1);
  EXPECT_EQ(window.writing(50000), 0);
  EXPECT_EQ(window.last_done(), 50000u);
  EXPECT_EQ(window.issue(50000, 100), 0);
  // A slot whose write completed early does not hold the rate back.
  window.written(1, 1500);
  EXPECT_EQ(window.earliest(), 51000u);
}

TEST(IssueWindow, StartFreesEverySlot) {
  IssueWindow window(1, kRate);
  window.start(0);
  window.issue(0, 10);
  window.start(7);
  EXPECT_EQ(window.earliest(), 7u);
  EXPECT_EQ(window.reading(), 0);
}

TEST(IssueWindow, MisuseIsRejected) {
  EXPECT_THROW(IssueWindow(0, kRate), std::invalid_argument);
  EXPECT_THROW(IssueWindow(1, core::Bandwidth{0}), std::invalid_argument);
  IssueWindow window(2, kRate);
  window.start(0);
  EXPECT_THROW(window.written(0, 5), std::logic_error);
}

}  // namespace
}  // namespace podsim::dma
