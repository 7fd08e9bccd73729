#include "hw/chip/address_map.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <stdexcept>

namespace podsim::chip {
namespace {

using ::testing::HasSubstr;

AddressMap two_regions() {
  AddressMap map;
  map.add("sram", 0x7ff0000000, 20 << 20, 1);
  map.add("hbm", 0, 32ull << 30, 0);
  return map;
}

TEST(AddressMap, DecodesAWholeAccessToItsRegion) {
  const AddressMap map = two_regions();
  ASSERT_NE(map.decode(0, 64), nullptr);
  EXPECT_EQ(map.decode(0, 64)->name, "hbm");
  EXPECT_EQ(map.decode((32ull << 30) - 64, 64)->name, "hbm");  // the last bytes
  EXPECT_EQ(map.decode(0x7ff0000000 + 100, 4096)->port, 1);
  EXPECT_EQ(map.regions().front().name, "hbm");  // sorted by base
}

TEST(AddressMap, RejectsAccessesOutsideOrAcrossRegions) {
  const AddressMap map = two_regions();
  EXPECT_EQ(map.decode(32ull << 30, 1), nullptr);           // just past HBM
  EXPECT_EQ(map.decode((32ull << 30) - 64, 128), nullptr);  // runs off the end
  EXPECT_EQ(map.decode(0x7fefffffff, 2), nullptr);          // straddles the gap into SRAM
  EXPECT_EQ(map.decode(~0ull, 1), nullptr);
  EXPECT_EQ(map.decode(0x7ff0000000, (20 << 20) + 1), nullptr);
}

TEST(AddressMap, RefusesOverlapsEmptyRegionsAndWraps) {
  AddressMap map = two_regions();
  try {
    map.add("cfg", 0x7ff0000000 + (10 << 20), 4096, 2);
    FAIL() << "overlap accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("cfg"));
    EXPECT_THAT(e.what(), HasSubstr("overlaps sram"));
  }
  EXPECT_THROW(map.add("low", 0x100, 4096, 2), std::invalid_argument);  // inside HBM
  EXPECT_THROW(map.add("empty", 0x7ffc000000, 0, 2), std::invalid_argument);
  EXPECT_THROW(map.add("wrap", ~0ull - 10, 100, 2), std::invalid_argument);
  map.add("cfg", 0x7ffc000000, 64 << 20, 2);  // beside, not over
  EXPECT_EQ(map.find("cfg")->port, 2);
  EXPECT_EQ(map.find("nothing"), nullptr);
}

}  // namespace
}  // namespace podsim::chip
