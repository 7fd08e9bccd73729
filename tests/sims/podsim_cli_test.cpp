// The podsim command as a user runs it: results, exit statuses, and the messages bad input gets.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "core/config_binding.h"
#include "hw/system/system_config.h"
#include "tests/support/chrome_trace_check.h"
#include "tests/support/test_support.h"

namespace podsim {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
namespace fs = std::filesystem;

test::RunResult podsim(const std::vector<std::string>& args) {
  return test::run_program(PODSIM_BINARY, args);
}

// Each bad configuration must stop with status 2, name the key and where it was written, and
// start no simulation.
void expect_config_error(const test::RunResult& r, const std::string& location,
                         const std::string& key, const std::string& message) {
  EXPECT_EQ(r.exit_status, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr(location)) << r.err;
  if (!key.empty()) {
    EXPECT_THAT(r.err, HasSubstr("key '" + key + "'")) << r.err;
  }
  EXPECT_THAT(r.err, HasSubstr(message)) << r.err;
  EXPECT_EQ(r.out, "") << "something ran despite the error";
}

TEST(PodsimInfo, PrintsTheSystemAndItsCeilings) {
  const auto r = podsim({"info", "--system", "hls2"});
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("hls2"));
  EXPECT_THAT(r.out, HasSubstr("gaudi2"));
  EXPECT_THAT(r.out, HasSubstr("84 in-box point-to-point, 0 chip-to-switch"));  // 28 pairs x 3
  EXPECT_THAT(r.out, HasSubstr("21 scale-up + 3 scale-out of 24"));
  EXPECT_THAT(r.out, HasSubstr("262.50 GB/s line"));  // [S10]: 262.5 GB/s per device
  EXPECT_THAT(r.out, HasSubstr("37.50 GB/s line"));   // scale-out per device
  EXPECT_THAT(r.out, HasSubstr("300.00 GB/s line"));  // scale-out per box
  EXPECT_THAT(r.out, HasSubstr("147.06 GB/s"));       // in-box all-reduce ceiling, n = 8
}

// The chip's blocks and ceilings, as the chip builds its address map.
TEST(PodsimInfo, ShowsTheChipsBlocksAndAddressMap) {
  const auto r = podsim({"info", "--system", "hls1"});
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("8 with a QMAN each"));
  EXPECT_THAT(r.out, HasSubstr("4 x 2048 objects, 512 monitors"));  // [C2]
  EXPECT_THAT(r.out, HasSubstr("Gen4 x16, 24.83 GB/s DMA per direction"));
  EXPECT_THAT(r.out, HasSubstr("dma7_qman           0x007ffc5e8000"));
  EXPECT_THAT(r.out, HasSubstr("sync_manager_e_n    0x007ffc4f1000"));
  EXPECT_THAT(r.out, HasSubstr("host                0x008000000000  261632GiB"));
}

TEST(PodsimInfo, Hls1HasOneLinkPerPeer) {
  const auto r = podsim({"info", "--system", "hls1"});
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("28 in-box point-to-point"));
  EXPECT_THAT(r.out, HasSubstr("7 scale-up + 3 scale-out of 10"));
  EXPECT_THAT(r.out, HasSubstr("87.50 GB/s line"));  // [D] on [S3]: HLS-1 n = 8
}

TEST(PodsimInfo, CountsTheNetworkOfMultiBoxSystems) {
  const auto pod = podsim({"info", "--system", "hls2-pod128"});
  ASSERT_EQ(pod.exit_status, 0) << pod.err;
  EXPECT_THAT(pod.out, HasSubstr("128 (16 boxes of 8)"));
  EXPECT_THAT(pod.out,
              HasSubstr("1344 in-box point-to-point, 384 chip-to-switch, 0 switch-to-switch"));
  EXPECT_THAT(pod.out, HasSubstr("3 (3 leaf/edge, 0 spine/aggregation, 0 core)"));
  const auto tree = podsim({"info", "--system", "fattree-k16"});
  ASSERT_EQ(tree.exit_status, 0) << tree.err;
  EXPECT_THAT(tree.out, HasSubstr("320 (128 leaf/edge, 128 spine/aggregation, 64 core)"));
}

// An IPU system shows the IPU the roofline computes with, not the Gaudi stand-in's blocks.
TEST(PodsimInfo, ShowsAnIpuAsItsRooflineSeesIt) {
  test::TempDir dir;
  const auto file = dir / "info.json";
  const auto r = podsim({"info", "--system", "ipu-pod16", "--json", file.string()});
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("1472 tiles"));
  EXPECT_THAT(r.out, HasSubstr("(624KiB per tile)"));
  EXPECT_THAT(r.out, HasSubstr("10 x 16.00 GB/s each way"));
  EXPECT_THAT(r.out, HasSubstr("rings over neighbours' links"));
  EXPECT_THAT(r.out, Not(HasSubstr("TPC cores")));
  EXPECT_THAT(r.out, Not(HasSubstr("HBM")));
  EXPECT_THAT(r.out, Not(HasSubstr("in-box all-reduce algbw")));
  const auto j = nlohmann::json::parse(test::read_text(file));
  EXPECT_EQ(j["ipu"]["tiles"], 1472);
  EXPECT_EQ(j["ipu"]["memory_bytes"], 1472u * 624 * 1024);
}

TEST(PodsimInfo, WritesJson) {
  test::TempDir dir;
  const auto file = dir / "info.json";
  const auto r = podsim({"info", "--system", "hls2", "--json", file.string()});
  ASSERT_EQ(r.exit_status, 0) << r.err;
  const auto j = nlohmann::json::parse(test::read_text(file));
  EXPECT_EQ(j["topology"]["chips"], 8);
  EXPECT_EQ(j["topology"]["in_box_links"], 84);
  EXPECT_NEAR(j["ceilings_gbytes_per_second"]["scale_up_line_per_chip"].get<double>(), 262.5, 1e-9);
  EXPECT_NEAR(j["roce_efficiency"].get<double>(), 4096.0 / 4178.0, 1e-12);
}

TEST(PodsimConfig, PrintsTheChangedTree) {
  const auto r = podsim({"config", "--system", "hls2", "--set", "chip.nic.ports=20"});
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("  nic:\n    ports: 20\n    port_speed: 100Gbps\n"));
  EXPECT_THAT(r.out, HasSubstr("name: gaudi2"));
  // 20 ports cannot carry 21 scale-up + 3 scale-out links: inspection warns, simulation refuses.
  EXPECT_THAT(r.err, HasSubstr("warning: key 'chip.nic.ports': the system needs 24 NIC ports"));
  const auto info = podsim({"info", "--system", "hls2", "--set", "chip.nic.ports=20"});
  EXPECT_EQ(info.exit_status, 2);
  EXPECT_THAT(info.err, HasSubstr("command line (--set chip.nic.ports=20): error"));
}

TEST(PodsimConfig, OutputBindsBackToTheSameSystem) {
  test::TempDir dir;
  const auto r = podsim({"config", "--system", "hls1", "--set", "scale_out.ports_per_chip=2"});
  ASSERT_EQ(r.exit_status, 0) << r.err;
  const auto file = dir.write("resolved.yaml", r.out);
  const auto again = podsim({"config", "--system", file.string()});
  ASSERT_EQ(again.exit_status, 0) << again.err;
  EXPECT_THAT(again.out, HasSubstr("ports_per_chip: 2"));
  EXPECT_THAT(again.out, HasSubstr("name: gaudi1"));
}

TEST(PodsimConfig, ShowsDefaultsTheFilesLeaveOut) {
  test::TempDir dir;
  const auto file = dir.write("mine.yaml", "extends: hls2\nname: mine\nbox:\n  chips: 4\n");
  const auto r = podsim({"config", "--system", file.string()});
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("name: mine\n"));
  EXPECT_THAT(r.out, HasSubstr("  chips: 4\n"));
  EXPECT_THAT(r.out, HasSubstr("  links_per_peer: 3\n"));
}

TEST(PodsimBadConfig, UnknownKey) {
  test::TempDir dir;
  const auto file = dir.write("bad.yaml", "extends: hls2\nname: bad\nbox:\n  chipz: 4\n");
  expect_config_error(podsim({"info", "--system", file.string()}), "bad.yaml:4:3", "box.chipz",
                      "did you mean 'chips'?");
}

TEST(PodsimBadConfig, UnknownKeyFromTheCommandLine) {
  expect_config_error(podsim({"info", "--set", "chip.nic.portz=3"}),
                      "command line (--set chip.nic.portz=3)", "chip.nic.portz",
                      "did you mean 'ports'?");
}

TEST(PodsimBadConfig, BadUnit) {
  test::TempDir dir;
  const auto file =
      dir.write("bad.yaml", "extends: hls2\nname: bad\nchip:\n  nic:\n    port_speed: 100Gbs\n");
  expect_config_error(podsim({"info", "--system", file.string()}), "bad.yaml:5:17",
                      "chip.nic.port_speed", "unknown unit 'Gbs'");
}

TEST(PodsimBadConfig, MissingUnit) {
  expect_config_error(podsim({"config", "--set", "chip.hbm.bandwidth=2450"}), "--set",
                      "chip.hbm.bandwidth", "has no unit");
}

TEST(PodsimBadConfig, NegativeBandwidth) {
  test::TempDir dir;
  const auto file =
      dir.write("neg.yaml", "extends: hls1\nname: neg\nchip:\n  nic:\n    port_speed: -100Gbps\n");
  expect_config_error(podsim({"info", "--system", file.string()}), "neg.yaml:5:17",
                      "chip.nic.port_speed", "must be greater than zero");
}

TEST(PodsimBadConfig, WrongType) {
  expect_config_error(podsim({"info", "--set", "box.chips=eight"}), "--set", "box.chips",
                      "'eight' is not an integer");
}

TEST(PodsimBadConfig, OutOfRange) {
  expect_config_error(podsim({"info", "--set", "box.chips=0"}), "--set", "box.chips",
                      "must be at least 1");
}

TEST(PodsimBadConfig, MissingRequiredKey) {
  test::TempDir dir;
  const auto file = dir.write("chipless.yaml", "name: chipless\nchip:\n  name: x\n");
  const auto r = podsim({"info", "--system", file.string()});
  expect_config_error(r, "chipless.yaml:3:3", "chip.nic.ports", "required key is missing");
}

TEST(PodsimBadConfig, UnknownPreset) {
  expect_config_error(podsim({"info", "--system", "hls9"}), "--system hls9", "",
                      "unknown system preset 'hls9'; did you mean 'hls1'?");
}

TEST(PodsimBadConfig, UnknownChipPreset) {
  test::TempDir dir;
  const auto file = dir.write("c.yaml", "extends: hls2\nname: c\nchip: gaudi7\n");
  expect_config_error(podsim({"info", "--system", file.string()}), "c.yaml:3:7", "",
                      "unknown chip preset 'gaudi7'");
}

TEST(PodsimBadConfig, MalformedYaml) {
  test::TempDir dir;
  const auto file = dir.write("broken.yaml", "name: broken\nbox: {chips: 8\nscale_out: 1\n");
  const auto r = podsim({"info", "--system", file.string()});
  expect_config_error(r, "broken.yaml:", "", "malformed YAML");
}

TEST(PodsimBadConfig, EachProblemIsReportedOnce) {
  test::TempDir dir;
  const auto file =
      dir.write("many.yaml", "extends: hls2\nname: many\nbox:\n  chips: -1\n  wiring: ring\n");
  const auto r = podsim({"info", "--system", file.string()});
  EXPECT_EQ(r.exit_status, 2);
  const auto lines = std::count(r.err.begin(), r.err.end(), '\n');
  EXPECT_EQ(lines, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("many.yaml:4:10: error: key 'box.chips'"));
  EXPECT_THAT(r.err, HasSubstr("many.yaml:5:11: error: key 'box.wiring'"));
}

TEST(PodsimCli, HelpWorksForEveryCommand) {
  for (const std::vector<std::string>& args : {std::vector<std::string>{"--help"},
                                               {"info", "--help"},
                                               {"config", "--help"},
                                               {"selftest", "--help"}}) {
    const auto r = podsim(args);
    EXPECT_EQ(r.exit_status, 0) << args.front();
    EXPECT_THAT(r.out, HasSubstr("--system")) << args.front();
  }
}

TEST(PodsimCli, BadArgumentsExitWithStatus2) {
  EXPECT_EQ(podsim({}).exit_status, 2);
  EXPECT_EQ(podsim({"frobnicate"}).exit_status, 2);
  EXPECT_EQ(podsim({"info", "--no-such-flag"}).exit_status, 2);
  EXPECT_EQ(podsim({"info", "--seed", "abc"}).exit_status, 2);
  const auto log = podsim({"selftest", "--log", "hbm=loud"});
  EXPECT_EQ(log.exit_status, 2);
  EXPECT_THAT(log.err, HasSubstr("loud"));
  const auto size = podsim({"selftest", "--bytes", "12"});
  EXPECT_EQ(size.exit_status, 2);
  EXPECT_THAT(size.err, HasSubstr("--bytes 12: '12' has no unit"));
}

TEST(PodsimCli, StatsAndTraceNeedASimulation) {
  test::TempDir dir;
  const auto r = podsim({"info", "--stats", (dir / "s.json").string()});
  EXPECT_EQ(r.exit_status, 2);
  EXPECT_THAT(r.err, HasSubstr("'info' runs no simulation"));
  EXPECT_FALSE(fs::exists(dir / "s.json"));
}

TEST(PodsimCli, UnwritableOutputIsReportedAndLeavesNothing) {
  const auto r = podsim({"info", "--json", "/nonexistent-dir/info.json"});
  EXPECT_EQ(r.exit_status, 2);
  EXPECT_THAT(r.err, HasSubstr("/nonexistent-dir/info.json"));
}

TEST(PodsimSelftest, StatsAndTraceParseAndTheTraceIsValid) {
  test::TempDir dir;
  const auto stats = dir / "stats.json", trace = dir / "trace.json";
  const auto r = podsim({"selftest", "--bytes", "4MiB", "--chunk", "256KiB", "--stats",
                         stats.string(), "--trace", trace.string(), "-q"});
  ASSERT_EQ(r.exit_status, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("ok, every byte matches"));
  const auto s = nlohmann::json::parse(test::read_text(stats));
  EXPECT_EQ(s["stats"]["selftest_memory.bytes_written"]["value"], 4u << 20);
  EXPECT_EQ(s["stats"]["selftest_memory.bytes_read"]["value"], 4u << 20);
  EXPECT_EQ(s["stats"]["selftest_initiator.transactions"]["value"], 32);
  const auto t = nlohmann::json::parse(test::read_text(trace));
  EXPECT_THAT(test::check_chrome_trace(t), ::testing::IsEmpty());
  EXPECT_FALSE(fs::exists(stats.string() + ".tmp"));
  EXPECT_FALSE(fs::exists(trace.string() + ".tmp"));
}

TEST(PodsimSelftest, SameInputsGiveByteIdenticalOutputs) {
  test::TempDir dir;
  std::vector<std::string> stats, csv;
  for (int run = 0; run < 2; ++run) {
    const auto json = dir / ("s" + std::to_string(run) + ".json");
    const auto table = dir / ("s" + std::to_string(run) + ".csv");
    ASSERT_EQ(podsim({"selftest", "--bytes", "2MiB", "--seed", "7", "--stats", json.string()})
                  .exit_status,
              0);
    ASSERT_EQ(podsim({"selftest", "--bytes", "2MiB", "--seed", "7", "--stats", table.string()})
                  .exit_status,
              0);
    stats.push_back(test::read_text(json));
    csv.push_back(test::read_text(table));
  }
  EXPECT_EQ(stats[0], stats[1]);
  EXPECT_EQ(csv[0], csv[1]);
  EXPECT_THAT(csv[0], HasSubstr("name,kind,unit,field,value"));
}

TEST(PodsimSelftest, MemoryFollowsTheSystemsHbmBandwidth) {
  const auto slow = podsim({"selftest", "--bytes", "8MiB", "--latency", "0ns", "--set",
                            "chip.hbm.bandwidth=100GB/s", "-q"});
  ASSERT_EQ(slow.exit_status, 0) << slow.err;
  EXPECT_THAT(slow.out, HasSubstr("100.00 GB/s achieved of 100.00 GB/s configured (100.0%)"));
}

TEST(PodsimConfig, SchemaListsEveryKeyAsAMarkdownTable) {
  const auto r = podsim({"config", "--schema"});
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("| key | type | default | range | meaning | source |"));
  EXPECT_THAT(r.out, HasSubstr("| `chip.nic.roce.mtu` | integer | 4096 | >= 256, <= 4096 |"));
  EXPECT_THAT(r.out, HasSubstr("| `chip.nic.ports` | integer | required |"));
}

TEST(PodsimDocs, ConfigurationPageDescribesEveryKey) {
  const std::string page =
      test::read_text(fs::path(PODSIM_SOURCE_DIR) / "docs" / "configuration.md");
  for (const auto& row : core::config_schema<system::SystemConfig>()) {
    EXPECT_THAT(page, HasSubstr("`" + row.path + "`")) << "docs/configuration.md lacks a key";
  }
  const auto schema = podsim({"config", "--schema"});
  EXPECT_THAT(page, HasSubstr(schema.out))
      << "docs/configuration.md is stale: paste in the output of 'podsim config --schema'";
}

}  // namespace
}  // namespace podsim
