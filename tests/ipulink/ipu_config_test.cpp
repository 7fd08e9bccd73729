#include "hw/ipulink/ipu_config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "core/config_tree.h"
#include "hw/ipulink/ipu_wiring.h"

namespace podsim::ipulink {
namespace {

using ::testing::HasSubstr;

std::string validation_error(const IpuConfig& c) {
  try {
    core::validate_config(c);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(IpuConfig, Gc200IsTheDatasheet) {
  const IpuConfig c = gc200();
  EXPECT_EQ(c.tiles, 1472);
  EXPECT_EQ(c.memory_per_tile.bytes, 624u * 1024);
  // 897 MiB: the datasheets' "900 MB".
  EXPECT_EQ(c.memory_bytes(), 940572672u);
  EXPECT_EQ(c.memory_bytes() >> 20, 897u);
  EXPECT_DOUBLE_EQ(c.memory_bandwidth.bytes_per_second(), 47.5e12);
  EXPECT_DOUBLE_EQ(c.exchange_bandwidth.bytes_per_second(), 8e12);
  EXPECT_DOUBLE_EQ(c.peak_fp16.flops, 250e12);
  EXPECT_EQ(c.ipu_links, 10);
  EXPECT_DOUBLE_EQ(c.ipu_link_total().bytes_per_second(), 320e9);
  EXPECT_DOUBLE_EQ(c.ipu_link_rate_each_way().bytes_per_second(), 16e9);
  EXPECT_DOUBLE_EQ(c.host_link_rate.bytes_per_second(), 64e9);
  EXPECT_LT(c.sync_latency.ps, c.sync_link_latency.ps);
  EXPECT_NO_THROW(core::validate_config(c));
}

TEST(IpuConfig, BowIsTheGc200AtAFasterClock) {
  const IpuConfig bow = bow_ipu();
  const IpuConfig mk2 = gc200();
  EXPECT_DOUBLE_EQ(bow.peak_fp16.flops, 350e12);
  EXPECT_EQ(bow.tiles, mk2.tiles);
  EXPECT_EQ(bow.memory_bytes(), mk2.memory_bytes());
  EXPECT_DOUBLE_EQ(bow.memory_bandwidth.bytes_per_second(), 66.5e12);
  EXPECT_DOUBLE_EQ(bow.exchange_bandwidth.bytes_per_second(), 11.2e12);
  EXPECT_EQ(bow.ipu_links, mk2.ipu_links);
  EXPECT_NO_THROW(core::validate_config(bow));
}

TEST(IpuConfig, MachinesAreTheDatasheets) {
  const MachineConfig m = m2000();
  EXPECT_EQ(m.ipus, 4);
  EXPECT_EQ(m.ipu_link_ports, 8);
  EXPECT_EQ(m.gw_link_ports, 2);
  EXPECT_DOUBLE_EQ(m.gw_link_rate.bits_per_second, 100e9);
  EXPECT_EQ(m.sync_link_ports, 8);
  EXPECT_EQ(m.host_links, 2);
  EXPECT_DOUBLE_EQ(m.host_link_rate.bits_per_second, 100e9);
  EXPECT_EQ(m.streaming_memory.bytes, 450000000000u);
  EXPECT_EQ(bow2000().streaming_memory.bytes, 256000000000u);
  EXPECT_EQ(bow2000().ipus, 4);
}

TEST(IpuConfig, EveryKeyCitesASource) {
  const auto cited = [](const std::vector<core::SchemaRow>& rows) {
    EXPECT_FALSE(rows.empty());
    for (const auto& row : rows) {
      EXPECT_FALSE(row.source.empty()) << row.path;
      EXPECT_THAT(row.source, ::testing::ContainsRegex("\\[(S1[4-7]|D|U)\\]")) << row.path;
    }
  };
  cited(core::config_schema<IpuConfig>());
  cited(core::config_schema<MachineConfig>());
  cited(core::config_schema<Ladder>());
  cited(core::config_schema<GwFabric>());
}

TEST(IpuConfig, BadValuesNameTheirKey) {
  IpuConfig c;
  c.tiles = 0;
  EXPECT_THAT(validation_error(c), HasSubstr("tiles: must be at least 1"));
  c = IpuConfig{};
  c.peak_fp16 = core::ComputeRate{0};
  EXPECT_THAT(validation_error(c), HasSubstr("peak_fp16"));
  c = IpuConfig{};
  c.exchange_bandwidth = core::Bandwidth{c.memory_bandwidth.bits_per_second * 2};
  EXPECT_THAT(validation_error(c), HasSubstr("exchange_bandwidth: must not exceed"));
  c = IpuConfig{};
  c.sync_link_latency = core::Duration{c.sync_latency.ps - 1};
  EXPECT_THAT(validation_error(c), HasSubstr("sync_link_latency"));

  MachineConfig m;
  m.ipus = 3;
  EXPECT_THAT([&] { core::validate_config(m); },
              ::testing::ThrowsMessage<std::invalid_argument>(HasSubstr("ipus: must be even")));
}

TEST(IpuConfig, BindsFromYamlWithLocatedErrors) {
  const auto c = core::bind_config<IpuConfig>(core::parse_yaml(
      "tiles: 1216\nmemory_per_tile: 256KiB\npeak_fp16: 125TFLOPS\nsync_latency: 300ns\n",
      "ipu.yaml"));
  EXPECT_EQ(c.tiles, 1216);
  EXPECT_EQ(c.memory_bytes(), 1216u * 256 * 1024);
  EXPECT_DOUBLE_EQ(c.peak_fp16.flops, 125e12);
  EXPECT_EQ(c.sync_latency.ps, 300000);
  EXPECT_EQ(c.ipu_links, 10);  // untouched keys keep the GC200's values

  try {
    core::bind_config<IpuConfig>(core::parse_yaml("exchange_bandwidth: 100TB/s\n", "ipu.yaml"));
    FAIL() << "an exchange faster than the tiles' memory was accepted";
  } catch (const core::ConfigError& e) {
    ASSERT_EQ(e.diagnostics().size(), 1u);
    EXPECT_EQ(e.diagnostics()[0].key_path, "exchange_bandwidth");
    EXPECT_THAT(e.what(), HasSubstr("ipu.yaml:1:"));
  }
  EXPECT_THROW(core::bind_config<IpuConfig>(core::parse_yaml("tile: 4\n", "ipu.yaml")),
               core::ConfigError);
}

}  // namespace
}  // namespace podsim::ipulink
