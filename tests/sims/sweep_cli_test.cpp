// `podsim sweep` and `podsim plot` end to end: every point runs as its own podsim, a bad point is
// reported while the others finish, the rows are the ones the command gives alone, and the plot
// draws them.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/support/test_support.h"

namespace podsim {
namespace {

using ::testing::HasSubstr;

class SweepCli : public ::testing::Test {
 protected:
  std::string write(const std::string& name, const std::string& text) {
    return dir_.write(name, text).string();
  }
  test::TempDir dir_;
};

// Twelve sizes, the last one not a size: eleven rows, the bad point named, exit status 1.
TEST_F(SweepCli, ABadPointIsReportedAndTheOthersFinish) {
  const auto file = write("s.yaml",
                          "command: collective --timing-only --place out\n"
                          "axes:\n"
                          "  sizes: [1K, 2K, 4K, 8K, 16K, 32K, 64K, 128K, 256K, 512K, 1M, lots]\n");
  const auto csv = dir_ / "rows.csv", json = dir_ / "sweep.json", svg = dir_ / "plot.svg";
  const auto r =
      test::run_program(PODSIM_BINARY, {"sweep", file, "--jobs", "2", "--csv", csv.string(),
                                        "--plot", svg.string(), "--json", json.string()});
  EXPECT_EQ(r.exit_status, 1) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("point 11 (sizes=lots) failed, exit status 2: podsim: error: "
                               "--sizes lots"));
  EXPECT_THAT(r.out, HasSubstr("11 of 12 points ran, 11 rows, 1 failed"));
  const auto j = nlohmann::json::parse(test::read_text(json));
  ASSERT_EQ(j["rows"].size(), 11u);
  EXPECT_EQ(j["failed"], 1);
  EXPECT_EQ(j["rows"][10]["size_bytes"], 1 << 20);
  const std::string text = test::read_text(csv);
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 12);  // a header and eleven rows
  EXPECT_THAT(test::read_text(svg), HasSubstr("bus bandwidth (GB/s)"));

  // A point's row is what the command gives alone.
  const auto alone = dir_ / "alone.json";
  const auto one =
      test::run_program(PODSIM_BINARY, {"collective", "--timing-only", "--place", "out", "--sizes",
                                        "64K", "--json", alone.string(), "-q"});
  ASSERT_EQ(one.exit_status, 0) << one.err;
  const auto direct = nlohmann::json::parse(test::read_text(alone))["rows"][0];
  EXPECT_EQ(j["rows"][6]["time_us"], direct["time_us"]);
  EXPECT_EQ(j["rows"][6]["busbw_gbps"], direct["busbw_gbps"]);
}

// The same sweep twice, its points finishing in any order, gives the same rows byte for byte.
TEST_F(SweepCli, TheSameSweepTwiceGivesTheSameRows) {
  const auto file = write("s.yaml",
                          "command: collective --timing-only --place both\n"
                          "axes:\n  algo: [ring, mesh, tree]\n  sizes: [4K, 1M]\n");
  std::string csv[2];
  for (int i = 0; i < 2; ++i) {
    const auto out = dir_ / ("rows" + std::to_string(i) + ".csv");
    const auto r = test::run_program(PODSIM_BINARY, {"sweep", file, "--csv", out.string(), "-q"});
    ASSERT_EQ(r.exit_status, 0) << r.err;
    csv[i] = test::read_text(out);
  }
  EXPECT_EQ(csv[0], csv[1]);
  EXPECT_EQ(std::count(csv[0].begin(), csv[0].end(), '\n'), 13);  // 6 points x 2 places
}

TEST_F(SweepCli, PlotDrawsOneLinePerAlgorithmFromACsv) {
  const auto csv = write("rows.csv",
                         "point,algo,size_bytes,busbw_gbps\n0,ring,1024,1.5\n1,ring,2048,3\n"
                         "2,mesh,1024,2\n3,mesh,2048,6\n");
  const auto svg = dir_ / "p.svg";
  const auto r = test::run_program(PODSIM_BINARY, {"plot", csv, "-o", svg.string()});
  ASSERT_EQ(r.exit_status, 0) << r.err;
  const std::string text = test::read_text(svg);
  EXPECT_THAT(text, HasSubstr(">ring</text>"));
  EXPECT_THAT(text, HasSubstr(">mesh</text>"));
  EXPECT_THAT(text, HasSubstr(">size (bytes)</text>"));
}

TEST_F(SweepCli, BadInputIsAClearErrorAndExitStatusTwo) {
  const auto bad = write("bad.yaml", "command: collective\naxes:\n  sizes: []\n");
  auto r = test::run_program(PODSIM_BINARY, {"sweep", bad});
  EXPECT_EQ(r.exit_status, 2);
  EXPECT_THAT(r.err, HasSubstr("bad.yaml:3"));
  r = test::run_program(PODSIM_BINARY, {"sweep", (dir_ / "missing.yaml").string()});
  EXPECT_EQ(r.exit_status, 2);
  EXPECT_THAT(r.err, HasSubstr("cannot read"));
  const auto csv = write("rows.csv", "point,algo\n0,ring\n");
  r = test::run_program(PODSIM_BINARY, {"plot", csv, "-o", (dir_ / "p.svg").string()});
  EXPECT_EQ(r.exit_status, 2);
  EXPECT_THAT(r.err, HasSubstr("no column 'ranks'"));
}

}  // namespace
}  // namespace podsim
