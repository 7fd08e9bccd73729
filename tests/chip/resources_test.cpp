// The chip's resource table (hw/chip/resources.h): the presets' default splits the chip without
// overlap, the driver's share is what Linux's driver keeps, and an overlap is refused naming
// the key and the share it overlaps.
#include "hw/chip/resources.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/config_binding.h"
#include "core/config_tree.h"
#include "drm/habanalabs_accel.h"

namespace podsim::chip {
namespace {

using ::testing::HasSubstr;

TEST(Resources, TheDefaultTableSplitsTheChipWithoutOverlap) {
  EXPECT_NO_THROW(core::validate_config(default_resources()));
  const ResourceShare& d = default_resources().driver;
  EXPECT_EQ((d.first_sob + d.sobs) % kObjectsPerManager,
            static_cast<std::uint32_t>(GAUDI_FIRST_AVAILABLE_W_S_SYNC_OBJECT));
  EXPECT_EQ(d.first_monitor + d.monitors,
            static_cast<std::uint32_t>(GAUDI_FIRST_AVAILABLE_W_S_MONITOR));
  EXPECT_EQ(default_resources().runtime.stream(0), 0);
  const ResourceShare& c = default_resources().collectives;
  ASSERT_EQ(c.stream_count(), 3);
  EXPECT_EQ(c.stream(0), 1);
  EXPECT_EQ(c.stream(2), 3);
  EXPECT_EQ(c.stream(3), -1);
}

std::string refusal(const std::string& yaml) {
  try {
    core::bind_config<ResourcesConfig>(core::parse_yaml(yaml, "chip.yaml"));
  } catch (const core::ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(Resources, AnOverlapIsRefusedNamingTheKey) {
  EXPECT_THAT(refusal("collectives: {first_sob: 6000}\n"),
              HasSubstr("key 'collectives.sobs': sync objects overlap the driver share's (6144 "
                        "to 6287)"));
  EXPECT_THAT(refusal("runtime: {engine_streams: 3}\n"),
              HasSubstr("key 'collectives.engine_streams': streams 0x2 are the runtime share's "
                        "too"));
  EXPECT_THAT(refusal("collectives: {sram_from: 0.25}\n"),
              HasSubstr("key 'collectives.sram_from': its SRAM overlaps the runtime share's"));
  EXPECT_THAT(refusal("runtime: {first_monitor: 500, monitors: 20}\n"),
              HasSubstr("key 'runtime.monitors': monitors 500 to 519 pass a manager's 512"));
  EXPECT_EQ(refusal(""), "");
}

}  // namespace
}  // namespace podsim::chip
