// libpodsim-accel.so preloaded into a plain C program written for the Linux driver: it opens the
// nodes, reads INFO, creates and maps a CB, submits it and waits, all served by the modeled Gaudi.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <future>
#include <thread>

#include "tests/support/test_support.h"

extern char** environ;

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

// Regression: threads retrying CSs the driver refused for a full queue (hl-thunk's submission
// helper retries EAGAIN at once) kept the model busy with calls, and simulated time stood still:
// the queue never drained and hl-thunk's 512-thread DMA test hung. Time now moves between calls.
TEST(Shim, SubmissionsRetriedOnAFullQueueEnd) {
  const auto r = test::run_program(
      "/usr/bin/env", {std::string("LD_PRELOAD=") + PODSIM_ACCEL_BINARY, "PODSIM_SYSTEM=hls1",
                       SHIM_CLIENT_BINARY, "--retry-storm"});
  EXPECT_EQ(r.exit_status, 0) << r.out << r.err;
  EXPECT_THAT(r.out, ::testing::HasSubstr("512 CSs submitted behind a full queue"));
}

// Regression: a CS that timed out with no call waiting for it never did: simulated time crossed
// a gap (its deadline, then the reset's end) only while a call waited, so a program polling the
// device between sleeps, as hl-thunk does before each test, waited forever (under a server, every
// test after one that left a CS stuck). Now time follows the wall clock across such gaps.
TEST(Shim, ADeviceResetGoesOnWhileTheProgramOnlyPolls) {
  const auto r =
      test::run_program("/usr/bin/env", {std::string("LD_PRELOAD=") + PODSIM_ACCEL_BINARY,
                                         "PODSIM_SYSTEM=hls1", SHIM_CLIENT_BINARY, "--reset-poll"});
  EXPECT_EQ(r.exit_status, 0) << r.out << r.err;
  EXPECT_THAT(r.out, ::testing::HasSubstr("operational again after the reset"));
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

// `podsim serve` in the background for one test: stopped (SIGTERM) and waited for at the end.
class Server {
 public:
  explicit Server(const std::vector<std::string>& args) : socket_((dir_ / "podsim.sock").string()) {
    std::vector<std::string> all = {PODSIM_BINARY, "serve", "--socket", socket_};
    all.insert(all.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& a : all) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    const std::string log = (dir_ / "log").string();
    posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT, 0600);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    if (posix_spawn(&pid_, PODSIM_BINARY, &actions, nullptr, argv.data(), environ) != 0) pid_ = 0;
    posix_spawn_file_actions_destroy(&actions);
    for (int i = 0; i < 600 && pid_ != 0 && !std::filesystem::exists(socket_); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  ~Server() { stop(); }
  // SIGTERM, then the exit status (0: a clean stop).
  int stop() {
    if (pid_ == 0) return status_;
    kill(pid_, SIGTERM);
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = 0;
    status_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return status_;
  }
  bool listening() const { return std::filesystem::exists(socket_); }
  const std::string& socket() const { return socket_; }
  std::string log() const { return test::read_text(dir_ / "log"); }

 private:
  test::TempDir dir_;
  std::string socket_;
  pid_t pid_ = 0;
  int status_ = -1;
};

test::RunResult run_client(const Server& server, std::vector<std::string> args) {
  std::vector<std::string> env = {std::string("LD_PRELOAD=") + PODSIM_ACCEL_BINARY,
                                  "PODSIM_SERVER=" + server.socket(), SHIM_CLIENT_BINARY};
  env.insert(env.end(), args.begin(), args.end());
  return test::run_program("/usr/bin/env", env);
}

// The same program as above, its model in a podsim server: the ioctls' arguments, the CB it
// maps and the memory it maps for DMA all cross into the server's process.
TEST(ShimServer, AProgramRunsOnAServersModel) {
  Server server({"--devices", "2"});
  ASSERT_TRUE(server.listening()) << server.log();
  const auto r = run_client(server, {});
  EXPECT_EQ(r.exit_status, 0) << r.out << r.err << server.log();
  EXPECT_THAT(r.out, ::testing::HasSubstr("device id 0x1000"));
  EXPECT_THAT(r.out, ::testing::HasSubstr("host memory round trip ok"));
  EXPECT_THAT(r.out, ::testing::HasSubstr("ok"));
  EXPECT_EQ(server.stop(), 0) << server.log();
  EXPECT_FALSE(std::filesystem::exists(server.socket()));
}

// Two client processes at once, each on its own device of the one simulated box; a process
// that exits holding a device has its files closed, so the next one can open it.
TEST(ShimServer, SeveralProcessesShareOneSimulation) {
  Server server({"--devices", "2"});
  ASSERT_TRUE(server.listening()) << server.log();
  auto first = std::async(std::launch::async, [&] {
    return run_client(server, {"--device", "0"});
  });
  auto second = std::async(std::launch::async, [&] {
    return run_client(server, {"--device", "1"});
  });
  for (auto* f : {&first, &second}) {
    const auto r = f->get();
    EXPECT_EQ(r.exit_status, 0) << r.out << r.err << server.log();
    EXPECT_THAT(r.out, ::testing::HasSubstr("host memory round trip ok"));
  }
  const auto holder = run_client(server, {"--exit-open"});
  EXPECT_EQ(holder.exit_status, 0) << holder.err;
  const auto after = run_client(server, {"--device", "0"});
  EXPECT_EQ(after.exit_status, 0) << after.out << after.err << server.log();
  // A device reset by a CS's timeout goes on for the processes after it.
  const auto reset = run_client(server, {"--reset-poll"});
  EXPECT_EQ(reset.exit_status, 0) << reset.out << reset.err << server.log();
  const auto next = run_client(server, {"--device", "0"});
  EXPECT_EQ(next.exit_status, 0) << next.out << next.err << server.log();
}

// Regression: pages lent to a server were lent anew with each MAP USERPTR, so a buffer sharing a
// page with one mapped after it (buffers from malloc) kept the old copy on the server's side:
// 13 of hl-thunk's tests failed through a server that passed in-process.
TEST(ShimServer, BuffersSharingAPageShareItWithTheDevice) {
  Server server({});
  ASSERT_TRUE(server.listening()) << server.log();
  const auto r = run_client(server, {"--shared-page"});
  EXPECT_EQ(r.exit_status, 0) << r.out << r.err << server.log();
  EXPECT_THAT(r.out, ::testing::HasSubstr("shared page ok"));
}

TEST(ShimServer, BadSocketsAreReported) {
  const auto r =
      test::run_program(PODSIM_BINARY, {"serve", "--socket", "/nonexistent-folder/podsim.sock"});
  EXPECT_EQ(r.exit_status, 2);
  EXPECT_THAT(r.err,
              ::testing::HasSubstr("--socket: socket path '/nonexistent-folder/podsim.sock'"));
  test::TempDir dir;
  const auto client = test::run_program(
      "/usr/bin/env", {std::string("LD_PRELOAD=") + PODSIM_ACCEL_BINARY,
                       "PODSIM_SERVER=" + (dir / "nobody.sock").string(), SHIM_CLIENT_BINARY});
  EXPECT_NE(client.exit_status, 0);
  EXPECT_THAT(client.err, ::testing::HasSubstr("podsim shim: the podsim server at"));
}

}  // namespace
}  // namespace podsim
