// libpodsim-accel.so preloaded into a plain C program written for the Linux driver: it opens the
// nodes, reads INFO, creates and maps a CB, submits it and waits, all served by the modeled Gaudi.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/support/test_support.h"

namespace podsim {
namespace {

TEST(Shim, AProgramForTheLinuxDriverRunsOnTheModel) {
  const auto r = test::run_program(
      "/usr/bin/env",
      {std::string("LD_PRELOAD=") + PODSIM_ACCEL_BINARY, "PODSIM_SYSTEM=hls1", SHIM_CLIENT_BINARY});
  EXPECT_EQ(r.exit_status, 0) << r.out << r.err;
  EXPECT_THAT(r.out, ::testing::HasSubstr("device id 0x1000"));
  EXPECT_THAT(r.out, ::testing::HasSubstr("CS 1 completed"));
  EXPECT_THAT(r.out, ::testing::HasSubstr("host memory round trip ok"));
  EXPECT_THAT(r.out, ::testing::HasSubstr("ok"));
}

// Two devices of the box at once (PODSIM_DEVICES=2), each its own node, minor, bus and
// completions; a third does not exist.
TEST(Shim, SeveralDevicesOfTheBoxAreServed) {
  const auto r = test::run_program(
      "/usr/bin/env", {std::string("LD_PRELOAD=") + PODSIM_ACCEL_BINARY, "PODSIM_SYSTEM=hls1",
                       "PODSIM_DEVICES=2", SHIM_CLIENT_BINARY, "--devices"});
  EXPECT_EQ(r.exit_status, 0) << r.out << r.err;
  EXPECT_THAT(r.out, ::testing::HasSubstr("device 1 at 0000:02:00.0"));
}

// A bad PODSIM_DEVICES makes every call fail with EIO and says why once.
TEST(Shim, ABadDeviceCountIsReported) {
  const auto r = test::run_program(
      "/usr/bin/env", {std::string("LD_PRELOAD=") + PODSIM_ACCEL_BINARY, "PODSIM_SYSTEM=hls1",
                       "PODSIM_DEVICES=9", SHIM_CLIENT_BINARY});
  EXPECT_NE(r.exit_status, 0);
  EXPECT_THAT(r.err, ::testing::HasSubstr("PODSIM_DEVICES=9: 1 to 8 (the box's chips)"));
}

// Regression: a program that exited with a node open crashed in the shim's static destructors,
// which closed the file outside the simulation.
TEST(Shim, AProgramMayExitWithItsNodesOpen) {
  const auto r =
      test::run_program("/usr/bin/env", {std::string("LD_PRELOAD=") + PODSIM_ACCEL_BINARY,
                                         "PODSIM_SYSTEM=hls1", SHIM_CLIENT_BINARY, "--exit-open"});
  EXPECT_EQ(r.exit_status, 0) << r.out << r.err;
  EXPECT_THAT(r.out, ::testing::HasSubstr("exiting with the node open"));
}

}  // namespace
}  // namespace podsim
