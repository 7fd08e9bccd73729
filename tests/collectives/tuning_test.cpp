// The tuning table in the system config: its names are the collectives' own, bad rules are
// reported at their key, and a system file can carry its own table.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "collectives/collective.h"
#include "hw/system/system_config.h"
#include "tests/support/test_support.h"

namespace podsim::collectives {
namespace {

using ::testing::HasSubstr;

std::set<std::string> names(const core::Choices<std::string>& choices) {
  std::set<std::string> out;
  for (const auto& [name, value] : choices) out.insert(name);
  return out;
}

TEST(TuningTable, NamesAreTheCollectivesOwn) {
  std::set<std::string> ops{"any"}, algorithms;
  for (Op op : kOps) ops.insert(to_string(op));
  for (Algorithm a : kAlgorithms) algorithms.insert(to_string(a));
  EXPECT_EQ(names(system::TuningRule::op_choices()), ops);
  EXPECT_EQ(names(system::TuningRule::algorithm_choices()), algorithms);
}

TEST(TuningTable, EveryDefaultRuleNamesAnAlgorithmThatRunsItsOperation) {
  for (const auto& rule : system::default_tuning()) {
    const auto algorithm = parse_algorithm(rule.algorithm);
    ASSERT_TRUE(algorithm.has_value()) << rule.algorithm;
    if (rule.op != "any") {
      EXPECT_TRUE(supports(*algorithm, *parse_op(rule.op))) << rule.op;
    }
  }
}

TEST(TuningTable, RulesMatchByOperationSpanAndSize) {
  system::TuningRule rule;
  rule.op = "all_reduce";
  rule.span = system::Span::kBoxes;
  rule.min_bytes = core::ByteSize{1024};
  rule.max_bytes = core::ByteSize{4096};
  EXPECT_TRUE(rule.matches("all_reduce", false, 1024));
  EXPECT_FALSE(rule.matches("all_reduce", false, 4096));  // the upper bound is excluded
  EXPECT_FALSE(rule.matches("all_reduce", false, 1023));
  EXPECT_FALSE(rule.matches("all_reduce", true, 2048));
  EXPECT_FALSE(rule.matches("broadcast", false, 2048));
}

std::string load_error(const std::string& rules) {
  test::TempDir dir;
  const auto file =
      dir.write("tuned.yaml", "extends: hls2\nname: tuned\ncollectives:\n  auto:\n" + rules);
  try {
    system::load_system(file.string(), {});
  } catch (const core::ConfigError& e) {
    return e.what();
  }
  return "no error";
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
  const auto loaded = system::load_system(file.string(), {});
  ASSERT_EQ(loaded.config.collectives.auto_rules.size(), 1u);
  EXPECT_EQ(loaded.config.collectives.auto_rules[0].algorithm, "ring");
  EXPECT_GT(system::load_system("hls2", {}).config.collectives.auto_rules.size(), 1u);
}

}  // namespace
}  // namespace podsim::collectives
