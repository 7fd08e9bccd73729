#include "core/stats.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <stdexcept>
#include <string>

#include "tests/support/test_support.h"

namespace podsim::core {
namespace {

namespace fs = std::filesystem;
using test::read_text;
using test::TempDir;
using ::testing::HasSubstr;
using ::testing::Not;

TEST(StatsCounter, AddsOneByDefaultOrN) {
  Counter c;
  c.add();
  c.add(41);
  EXPECT_EQ(c.value(), 42u);
}

// What a stretch of simulation counted, counted again (a replayed collective's).
TEST(StatsRegistry, AddCountedAddsWhatTheCountersCountedBetweenTwoSnapshots) {
  StatsRegistry r;
  Counter& a = r.counter("a", "1", "");
  Counter& b = r.counter("b", "B", "");
  r.accumulator("c", "1", "").sample(5);
  a.add(2);
  const auto before = r.counter_values();
  a.add(3);
  b.add(10);
  const auto after = r.counter_values();
  r.add_counted(before, after);
  EXPECT_EQ(a.value(), 8u);
  EXPECT_EQ(b.value(), 20u);
  r.counter("d", "1", "");  // a counter made since: the snapshots no longer fit
  EXPECT_THROW(r.add_counted(before, after), std::invalid_argument);
}

TEST(StatsAccumulator, TracksCountSumMinMaxMean) {
  Accumulator a;
  EXPECT_EQ(a.count(), 0u);
  EXPECT_EQ(a.mean(), 0.0);
  for (double v : {3.0, -2.0, 5.0, 6.0}) a.sample(v);
  EXPECT_EQ(a.count(), 4u);
  EXPECT_EQ(a.sum(), 12.0);
  EXPECT_EQ(a.min(), -2.0);
  EXPECT_EQ(a.max(), 6.0);
  EXPECT_EQ(a.mean(), 3.0);
}

TEST(StatsAccumulator, MinIsNotStuckAtZeroForPositiveSamples) {
  Accumulator a;
  a.sample(7);
  a.sample(9);
  EXPECT_EQ(a.min(), 7.0);
}

TEST(StatsHistogram, SampleOnABoundCountsInThatBucket) {
  Histogram h({10, 20});
  for (double v : {1.0, 10.0, 10.5, 20.0, 20.5, 1000.0}) h.sample(v);
  EXPECT_EQ(h.counts(), (std::vector<std::uint64_t>{2, 2, 2}));
  EXPECT_EQ(h.summary().count(), 6u);
}

TEST(StatsHistogram, LinearAndExponentialShapes) {
  EXPECT_EQ(Histogram::linear(10, 5, 3).upper_bounds(), (std::vector<double>{10, 15, 20}));
  EXPECT_EQ(Histogram::exponential(1, 2, 4).upper_bounds(), (std::vector<double>{1, 2, 4, 8}));
  EXPECT_EQ(Histogram::linear(10, 5, 3).counts().size(), 4u);
}

TEST(StatsHistogram, RejectsBadShapes) {
  EXPECT_THROW(Histogram({}), std::invalid_argument);
  EXPECT_THROW(Histogram({1, 1}), std::invalid_argument);
  EXPECT_THROW(Histogram({2, 1}), std::invalid_argument);
  EXPECT_THROW(Histogram::linear(0, 0, 3), std::invalid_argument);
  EXPECT_THROW(Histogram::exponential(1, 1, 3), std::invalid_argument);
  EXPECT_THROW(Histogram::exponential(0, 2, 3), std::invalid_argument);
}

TEST(StatsHistogram, PercentilesInterpolateInsideTheBucket) {
  Histogram h = Histogram::linear(10, 10, 10);
  for (int v = 1; v <= 100; ++v) h.sample(v);
  EXPECT_DOUBLE_EQ(h.percentile(50), 50.0);
  EXPECT_DOUBLE_EQ(h.percentile(99), 99.0);
  EXPECT_DOUBLE_EQ(h.percentile(25), 25.0);
  EXPECT_DOUBLE_EQ(h.percentile(0), 1.0);
  EXPECT_DOUBLE_EQ(h.percentile(100), 100.0);
}

TEST(StatsHistogram, PercentilesStayInsideObservedRange) {
  Histogram h({10, 100});
  for (int i = 0; i < 3; ++i) h.sample(7);
  EXPECT_DOUBLE_EQ(h.percentile(50), 7.0);
  EXPECT_DOUBLE_EQ(h.percentile(99), 7.0);
}

TEST(StatsHistogram, OverflowBucketEndsAtTheLargestSample) {
  Histogram h({10});
  for (double v : {5.0, 20.0, 30.0, 40.0}) h.sample(v);
  // rank 3.96 of 4: 2.96 of the 3 samples in (10, 40].
  EXPECT_NEAR(h.percentile(99), 10 + 30 * (2.96 / 3), 1e-9);
  EXPECT_EQ(Histogram({10}).percentile(50), 0.0);
}

TEST(StatsTimeWeighted, AveragesBusyTimeOverTheRun) {
  TimeWeighted busy;
  busy.busy(10);
  busy.idle(30);
  busy.busy(60);
  EXPECT_DOUBLE_EQ(busy.average(100), 0.6);  // (20 + 40) / 100
  EXPECT_DOUBLE_EQ(busy.average(60), 20.0 / 60);
  EXPECT_EQ(busy.max(), 1.0);
  EXPECT_EQ(busy.level(), 1.0);
}

TEST(StatsTimeWeighted, AveragesQueueDepthLevels) {
  TimeWeighted depth;
  depth.set(2, 0);
  depth.set(4, 50);
  depth.set(1, 75);
  EXPECT_DOUBLE_EQ(depth.average(100), (2 * 50 + 4 * 25 + 1 * 25) / 100.0);
  EXPECT_EQ(depth.max(), 4.0);
  EXPECT_EQ(depth.level(), 1.0);
  EXPECT_EQ(depth.average(0), 1.0);
}

TEST(StatsTimeWeighted, StaysExactOverLongRuns) {
  TimeWeighted busy;
  // A simulated hour is 3.6e15 ps; single picoseconds late in the run must still count.
  busy.busy(0);
  busy.idle(1'000'000'000'000'001);
  EXPECT_EQ(busy.average(2'000'000'000'000'002), 0.5);
  busy.busy(2'000'000'000'000'002);
  EXPECT_GT(busy.average(2'000'000'000'000'003), 0.5);
}

// A registry with one statistic of each kind and known values.
void fill(StatsRegistry& r) {
  r.counter("sys.b.bytes", "bytes", "bytes moved").add(4096);
  auto& latency = r.accumulator("sys.a.latency", "ns", "request latency");
  latency.sample(1.5);
  latency.sample(2.5);
  auto& sizes = r.histogram("sys.c.sizes", Histogram({64, 4096}), "bytes", "burst sizes");
  sizes.sample(64);
  sizes.sample(100);
  sizes.sample(8192);
  auto& busy = r.time_weighted("sys.d.busy", "fraction", "engine busy");
  busy.busy(250);
  busy.idle(500);
}

TEST(StatsRegistry, JsonHasVersionTimeAndEveryStatByName) {
  StatsRegistry r;
  fill(r);
  const nlohmann::json j = r.to_json(1000);
  EXPECT_EQ(j["podsim_stats_version"], 1);
  EXPECT_EQ(j["sim_time_ps"], 1000);
  const auto& stats = j["stats"];
  ASSERT_EQ(stats.size(), 4u);

  EXPECT_EQ(stats["sys.b.bytes"]["kind"], "counter");
  EXPECT_EQ(stats["sys.b.bytes"]["unit"], "bytes");
  EXPECT_EQ(stats["sys.b.bytes"]["description"], "bytes moved");
  EXPECT_EQ(stats["sys.b.bytes"]["value"], 4096);

  const auto& latency = stats["sys.a.latency"];
  EXPECT_EQ(latency["kind"], "accumulator");
  EXPECT_EQ(latency["count"], 2);
  EXPECT_EQ(latency["mean"], 2.0);
  EXPECT_EQ(latency["min"], 1.5);
  EXPECT_EQ(latency["max"], 2.5);

  const auto& sizes = stats["sys.c.sizes"];
  EXPECT_EQ(sizes["kind"], "histogram");
  EXPECT_EQ(sizes["bounds"], nlohmann::json({64, 4096}));
  EXPECT_EQ(sizes["counts"], nlohmann::json({1, 1, 1}));
  EXPECT_EQ(sizes["count"], 3);
  EXPECT_EQ(sizes["min"], 64.0);
  EXPECT_EQ(sizes["max"], 8192.0);
  for (const char* field : {"mean", "p50", "p99"}) EXPECT_TRUE(sizes[field].is_number()) << field;

  const auto& busy = stats["sys.d.busy"];
  EXPECT_EQ(busy["kind"], "time_weighted");
  EXPECT_EQ(busy["average"], 0.25);
  EXPECT_EQ(busy["max"], 1.0);
  EXPECT_EQ(busy["final"], 0.0);
}

TEST(StatsRegistry, JsonListsStatsSortedByName) {
  StatsRegistry r;
  r.counter("z", "", "");
  r.counter("a", "", "");
  r.counter("m", "", "");
  const std::string text = r.to_json(0).dump();
  EXPECT_LT(text.find("\"a\""), text.find("\"m\""));
  EXPECT_LT(text.find("\"m\""), text.find("\"z\""));
}

TEST(StatsRegistry, CsvHasOneRowPerScalarField) {
  StatsRegistry r;
  fill(r);
  const std::string csv = r.to_csv(1000);
  EXPECT_EQ(csv.rfind("name,kind,unit,field,value\n", 0), 0u);
  EXPECT_THAT(csv, HasSubstr("\nsys.b.bytes,counter,bytes,value,4096\n"));
  EXPECT_THAT(csv, HasSubstr("\nsys.a.latency,accumulator,ns,mean,2.0\n"));
  EXPECT_THAT(csv, HasSubstr("\nsys.c.sizes,histogram,bytes,bounds[1],4096.0\n"));
  EXPECT_THAT(csv, HasSubstr("\nsys.c.sizes,histogram,bytes,counts[2],1\n"));
  EXPECT_THAT(csv, HasSubstr("\nsys.d.busy,time_weighted,fraction,average,0.25\n"));
  EXPECT_THAT(csv, Not(HasSubstr("bytes moved")));  // descriptions live in the JSON only
  // Header, 1 counter row, 5 accumulator rows, 6 scalar + 2 bound + 3 count histogram rows,
  // 3 time-weighted rows.
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 1 + 1 + 5 + 11 + 3);
}

TEST(StatsRegistry, CsvQuotesFieldsThatNeedIt) {
  StatsRegistry r;
  r.counter("x", "bytes, \"raw\"", "").add(1);
  EXPECT_THAT(r.to_csv(0), HasSubstr("\nx,counter,\"bytes, \"\"raw\"\"\",value,1\n"));
}

TEST(StatsRegistry, DuplicateNameIsAnErrorNamingTheStat) {
  StatsRegistry r;
  r.counter("sys.hbm.reads", "", "");
  try {
    r.accumulator("sys.hbm.reads", "", "");
    FAIL() << "expected std::logic_error";
  } catch (const std::logic_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("sys.hbm.reads"));
  }
  EXPECT_EQ(r.size(), 1u);
}

TEST(StatsRegistry, ReferencesStayValidAsTheRegistryGrows) {
  StatsRegistry r;
  Counter& first = r.counter("c0", "", "");
  for (int i = 1; i < 1000; ++i) r.counter("c" + std::to_string(i), "", "");
  first.add(3);
  EXPECT_EQ(r.to_json(0)["stats"]["c0"]["value"], 3);
}

TEST(StatsRegistry, ClearForgetsEveryStat) {
  StatsRegistry r;
  fill(r);
  r.clear();
  EXPECT_EQ(r.size(), 0u);
  EXPECT_FALSE(r.contains("sys.b.bytes"));
  r.counter("sys.b.bytes", "", "");  // the name is free again
  EXPECT_TRUE(r.contains("sys.b.bytes"));
}

TEST(StatsRegistry, AttachedCountersAreReadWhereTheyLive) {
  StatsRegistry r;
  Counter owned;
  StatsGroup("sw1.port0", r).attach("tx_frames", owned, "1", "frames sent");
  owned.add(5);
  EXPECT_EQ(r.to_json(0)["stats"]["sw1.port0.tx_frames"]["value"], 5);
  EXPECT_THROW(r.attach("sw1.port0.tx_frames", owned, "1", ""), std::logic_error);
}

TEST(StatsRegistry, ForgetDropsOnlyTheNamesUnderThePrefix) {
  StatsRegistry r;
  Counter a, b;
  r.attach("sw1.port0.tx", a, "", "");
  r.attach("sw1.port1.tx", b, "", "");
  r.counter("sw10.port0.tx", "", "");
  r.counter("sw1x", "", "");
  r.forget("sw1");
  EXPECT_FALSE(r.contains("sw1.port0.tx"));
  EXPECT_FALSE(r.contains("sw1.port1.tx"));
  EXPECT_TRUE(r.contains("sw10.port0.tx"));
  EXPECT_TRUE(r.contains("sw1x"));
  EXPECT_EQ(r.size(), 2u);
}

TEST(StatsRegistry, StatsSharingAUnitAndDescriptionEachKeepThemAfterOthersGo) {
  StatsRegistry r;
  for (int port = 0; port < 3; ++port) {
    StatsGroup(fmt::format("nic.port{}", port), r).counter("rx", "B", "bytes received");
  }
  r.counter("nic.drops", "1", "frames dropped");
  r.forget("nic.port0");
  r.counter("nic.port0.rx", "B", "bytes received again");
  const nlohmann::json stats = r.to_json(0)["stats"];
  EXPECT_EQ(stats["nic.port0.rx"]["description"], "bytes received again");
  EXPECT_EQ(stats["nic.port2.rx"]["unit"], "B");
  EXPECT_EQ(stats["nic.port2.rx"]["description"], "bytes received");
  EXPECT_EQ(stats["nic.drops"]["unit"], "1");
  EXPECT_EQ(stats["nic.drops"]["description"], "frames dropped");
}

TEST(StatsGroup, NamesStatsUnderTheModule) {
  StatsRegistry r;
  StatsGroup group("system.chip0.hbm", r);
  group.counter("reads", "", "").add();
  group.time_weighted("busy", "", "");
  EXPECT_TRUE(r.contains("system.chip0.hbm.reads"));
  EXPECT_TRUE(r.contains("system.chip0.hbm.busy"));
}

TEST(StatsRegistry, ProcessRegistryIsOneObject) { EXPECT_EQ(&stats_registry(), &stats_registry()); }

TEST(StatsRegistry, WritesJsonAndCsvByExtension) {
  TempDir dir;
  StatsRegistry r;
  fill(r);
  const std::string json_path = (dir / "stats.json").string();
  const std::string csv_path = (dir / "stats.csv").string();
  r.write(json_path, 1000);
  r.write(csv_path, 1000);
  EXPECT_EQ(nlohmann::json::parse(read_text(json_path)), r.to_json(1000));
  EXPECT_EQ(read_text(csv_path), r.to_csv(1000));
  EXPECT_FALSE(fs::exists(json_path + ".tmp"));
  EXPECT_FALSE(fs::exists(csv_path + ".tmp"));
}

TEST(StatsRegistry, UnknownExtensionIsRejectedBeforeWriting) {
  TempDir dir;
  StatsRegistry r;
  const std::string path = (dir / "stats.xyz").string();
  try {
    r.write(path, 0);
    FAIL() << "expected std::runtime_error";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr(path + ": unknown stats format '.xyz' (use .json or .csv)"));
  }
  EXPECT_TRUE(fs::is_empty(dir.path()));
}

TEST(StatsRegistry, MissingDirectoryFailsNamingTheFile) {
  TempDir dir;
  StatsRegistry r;
  const std::string path = (dir / "no-such-dir" / "stats.json").string();
  try {
    r.write(path, 0);
    FAIL() << "expected std::runtime_error";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr(path));
  }
  EXPECT_TRUE(fs::is_empty(dir.path()));
}

TEST(StatsRegistry, FailedRenameLeavesNothingHalfWritten) {
  TempDir dir;
  StatsRegistry r;
  fill(r);
  // A directory in the way: the temporary file is written, the rename into place fails.
  const fs::path blocked = dir / "stats.json";
  dir.write("stats.json/keep", "x");
  EXPECT_THROW(r.write(blocked.string(), 0), std::runtime_error);
  EXPECT_FALSE(fs::exists(blocked.string() + ".tmp"));
  EXPECT_EQ(read_text(blocked / "keep"), "x");
}

TEST(StatsRegistry, OutputIsByteIdenticalForTheSameRun) {
  TempDir dir;
  // Registration order differs; values include ones with long binary expansions.
  StatsRegistry forward;
  StatsRegistry backward;
  forward.accumulator("a", "", "").sample(0.1 + 0.2);
  forward.counter("b", "", "").add(7);
  backward.counter("b", "", "").add(7);
  backward.accumulator("a", "", "").sample(0.1 + 0.2);
  for (const char* ext : {".json", ".csv"}) {
    const std::string one = (dir / (std::string("one") + ext)).string();
    const std::string two = (dir / (std::string("two") + ext)).string();
    forward.write(one, 12345);
    backward.write(two, 12345);
    EXPECT_EQ(read_text(one), read_text(two)) << ext;
  }
  EXPECT_THAT(read_text(dir / "one.json"), HasSubstr("0.30000000000000004"));
}

// A parallel run's processes each count what they simulate; rank 0 adds the others' in. The
// result is what one registry that counted everything holds, to the bit.
struct Counted {
  Counter* frames_a;
  Counter* frames_b;
  Accumulator* delay_b;
  Histogram* sizes_b;
  TimeWeighted* busy_b;
};

Counted register_all(StatsRegistry& r) {
  return {&r.counter("a.frames", "1", "frames"), &r.counter("b.frames", "1", "frames"),
          &r.accumulator("b.delay", "ps", "delay"),
          &r.histogram("b.sizes", Histogram::linear(100, 100, 4), "B", "sizes"),
          &r.time_weighted("b.busy", "1", "busy")};
}

// What component "a" counts (this process) and what component "b" counts (the other one).
void count_a(Counted& c) { c.frames_a->add(5); }
void count_b(Counted& c, StatsRegistry& r) {
  c.frames_b->add(7);
  c.delay_b->sample(0.1);
  c.delay_b->sample(0.7);
  c.sizes_b->sample(250);
  c.busy_b->set(0.3, 1000);
  c.busy_b->set(0, 3000);
  r.time_weighted("b.late", "1", "made during the run").set(1, 2000);
}

TEST(StatsRegistry, MergesAnotherRegistrysRawStateExactly) {
  StatsRegistry one, mine, theirs;
  auto all = register_all(one);
  auto here = register_all(mine);
  auto there = register_all(theirs);
  count_a(all);
  count_b(all, one);
  count_a(here);
  count_b(there, theirs);
  mine.merge_raw(theirs.export_raw());
  EXPECT_EQ(mine.to_json(5000).dump(), one.to_json(5000).dump());
}

TEST(StatsRegistry, RefusesRawStateCutShort) {
  StatsRegistry a, b;
  a.counter("x", "1", "x").add(1);
  std::string raw = a.export_raw();
  raw.pop_back();
  EXPECT_THROW(b.merge_raw(raw), std::runtime_error);
}

}  // namespace
}  // namespace podsim::core
