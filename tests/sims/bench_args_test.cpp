// The benchmarks refuse arguments they do not understand before running anything (a lone
// `--help` once started the half-hour sweep).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/support/test_support.h"

namespace podsim {
namespace {

using ::testing::HasSubstr;

TEST(BenchArgs, AFlagWithoutItsValueIsAUsageError) {
  for (const char* bench : {COLLECTIVE_SCALE_BINARY, NET_RATE_BINARY, COMPUTE_BINARY,
                            FUNCTIONAL_COST_BINARY, PARALLEL_SCALE_BINARY, TRAINING_SCALE_BINARY}) {
    for (const char* flag : {"--help", "--json"}) {
      const auto r = test::run_program(bench, {flag});
      EXPECT_EQ(r.exit_status, 2) << bench << " " << flag;
      EXPECT_THAT(r.err, HasSubstr("usage:")) << bench;
    }
  }
}

TEST(BenchArgs, AnUnknownSystemIsNamed) {
  const auto r = test::run_program(COLLECTIVE_SCALE_BINARY, {"--systems", "hls2,hls9"});
  EXPECT_EQ(r.exit_status, 2);
  EXPECT_THAT(r.err, HasSubstr("no case 'hls9'"));
}

TEST(BenchArgs, ABadScaleIsNamed) {
  for (const char* scale : {"0", "x"}) {
    const auto r = test::run_program(COMPUTE_BINARY, {"--scale", scale});
    EXPECT_EQ(r.exit_status, 2) << scale;
    EXPECT_THAT(r.err, HasSubstr("--scale must be a whole number")) << scale;
  }
}

TEST(BenchArgs, ABadRunCountIsNamed) {
  for (const char* runs : {"0", "x", "3x"}) {
    const auto r = test::run_program(FUNCTIONAL_COST_BINARY, {"--runs", runs});
    EXPECT_EQ(r.exit_status, 2) << runs;
    EXPECT_THAT(r.err, HasSubstr("--runs")) << runs;
  }
}

TEST(BenchArgs, ABadProcessCountIsNamed) {
  for (const char* processes : {"1", "x", "2x"}) {
    const auto r = test::run_program(PARALLEL_SCALE_BINARY, {"--processes", processes});
    EXPECT_EQ(r.exit_status, 2) << processes;
    EXPECT_THAT(r.err, HasSubstr("--processes")) << processes;
  }
}

TEST(BenchArgs, ABadPointListIsNamed) {
  const auto r = test::run_program(TRAINING_SCALE_BINARY, {"--points", "8,lots"});
  EXPECT_EQ(r.exit_status, 2);
  EXPECT_THAT(r.err, HasSubstr("--points 8,lots"));
}

}  // namespace
}  // namespace podsim
