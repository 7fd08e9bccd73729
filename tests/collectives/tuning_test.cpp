// The tuning table of a system file: its names are the collectives' own, bad rules are reported
// at their key, and a system file can carry its own table.
#include "collectives/tuning.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "collectives/collective.h"
#include "collectives/system_file.h"
#include "tests/support/test_support.h"

namespace podsim::collectives {
namespace {

using ::testing::HasSubstr;

template <class E>
std::set<std::string> names(const core::Choices<E>& choices) {
  std::set<std::string> out;
  for (const auto& [name, value] : choices) out.insert(name);
  return out;
}

TEST(TuningTable, NamesAreTheCollectivesOwn) {
  std::set<std::string> ops{"any"}, algorithms;
  for (Op op : kOps) ops.insert(to_string(op));
  for (Algorithm a : kAlgorithms) algorithms.insert(to_string(a));
  EXPECT_EQ(names(TuningRule::op_choices()), ops);
  EXPECT_EQ(names(TuningRule::algorithm_choices()), algorithms);
}

TEST(TuningTable, EveryDefaultRuleNamesAnAlgorithmThatRunsItsOperation) {
  for (const auto& rule : default_tuning()) {
    if (rule.op) {
      EXPECT_TRUE(supports(rule.algorithm, *rule.op)) << to_string(*rule.op);
    }
  }
}

TEST(TuningTable, RulesMatchByOperationSpanAndSize) {
  TuningRule rule;
  rule.op = Op::kAllReduce;
  rule.span = Span::kBoxes;
  rule.min_bytes = core::ByteSize{1024};
  rule.max_bytes = core::ByteSize{4096};
  EXPECT_TRUE(rule.matches(Op::kAllReduce, false, 2, 1024));
  EXPECT_FALSE(rule.matches(Op::kAllReduce, false, 2, 4096));  // the upper bound is excluded
  EXPECT_FALSE(rule.matches(Op::kAllReduce, false, 2, 1023));
  EXPECT_FALSE(rule.matches(Op::kAllReduce, true, 1, 2048));
  EXPECT_FALSE(rule.matches(Op::kBroadcast, false, 2, 2048));
}

TEST(TuningTable, RulesMatchByTheBoxesSpanned) {
  TuningRule rule;
  rule.min_boxes = 8;
  EXPECT_FALSE(rule.matches(Op::kAllReduce, false, 4, 1024));
  EXPECT_TRUE(rule.matches(Op::kAllReduce, false, 8, 1024));
  EXPECT_TRUE(rule.matches(Op::kAllReduce, false, 128, 1024));
}

std::string load_error(const std::string& rules) {
  test::TempDir dir;
  const auto file =
      dir.write("tuned.yaml", "extends: hls2\nname: tuned\ncollectives:\n  auto:\n" + rules);
  try {
    load_system_file(file.string(), {});
  } catch (const core::ConfigError& e) {
    return e.what();
  }
  return "no error";
}

TEST(TuningTable, AMinimumOfNoBoxesIsNamedAtItsKey) {
  EXPECT_THAT(load_error("    - {algorithm: ring, min_boxes: 0}\n"),
              HasSubstr("collectives.auto.0.min_boxes"));
}

TEST(TuningTable, AnAcrossPhaseOtherThanRingOrHalvingDoublingIsNamedAtItsKey) {
  EXPECT_THAT(load_error("    - {algorithm: hierarchical, across: mesh}\n"),
              HasSubstr("collectives.auto.0.across"));
}

TEST(TuningTable, AnUnknownAlgorithmIsNamedAtItsKey) {
  EXPECT_THAT(
      load_error("    - {op: all_reduce, algorithm: fastest}\n"),
      AllOf(HasSubstr("collectives.auto.0.algorithm"), HasSubstr("'fastest' is not one of")));
}

TEST(TuningTable, AnUnknownOperationIsNamedAtItsKey) {
  EXPECT_THAT(
      load_error(
          "    - {op: all_reduce, algorithm: ring}\n    - {op: allreduce, algorithm: ring}\n"),
      HasSubstr("collectives.auto.1.op"));
}

TEST(TuningTable, AnEmptySizeRangeIsRejected) {
  EXPECT_THAT(
      load_error("    - {min_bytes: 1MiB, max_bytes: 64KiB, algorithm: ring}\n"),
      AllOf(HasSubstr("collectives.auto.0.max_bytes"), HasSubstr("must be above min_bytes")));
}

TEST(TuningTable, ASystemFileCarriesItsOwnTable) {
  test::TempDir dir;
  const auto file = dir.write("tuned.yaml",
                              "extends: hls2\nname: tuned\ncollectives:\n  auto:\n"
                              "    - {op: all_reduce, algorithm: ring}\n");
  const auto loaded = load_system_file(file.string(), {});
  ASSERT_EQ(loaded.tuning.auto_rules.size(), 1u);
  EXPECT_EQ(loaded.tuning.auto_rules[0].algorithm, Algorithm::kRing);
  EXPECT_GT(load_system_file("hls2", {}).tuning.auto_rules.size(), 1u);
}

}  // namespace
}  // namespace podsim::collectives
