// podsim under mpirun: `net` and `collective` with the system split among 1, 2 and 3 processes
// give the rows and statistics of one process byte for byte, `sweep` shares its points among the
// processes, and what cannot be split is refused.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "tests/support/test_support.h"

namespace podsim {
namespace {

using ::testing::HasSubstr;

class MpiCli : public ::testing::Test {
 protected:
  struct Output {
    nlohmann::json rows;  // --json, but for the simulator's own figures (CPU time, callbacks)
    std::string stats;    // --stats, as written
  };

  // podsim net ARGS, alone (np 0) or under mpirun -np N.
  test::RunResult run(int np, const std::string& command, std::vector<std::string> args) {
    args.insert(args.begin(), command);
    args.push_back("-q");
    if (np == 0) return test::run_program(PODSIM_BINARY, args);
    std::vector<std::string> mpi = {"--allow-run-as-root", "--oversubscribe", "-np",
                                    std::to_string(np), PODSIM_BINARY};
    mpi.insert(mpi.end(), args.begin(), args.end());
    return test::run_program(MPIRUN, mpi);
  }

  // podsim COMMAND ARGS with --json and --stats, alone (np 0) or under mpirun -np N; the JSON
  // without the simulator's own figures (CPU time, callbacks), which are each process's.
  Output simulate(int np, const std::string& command, std::vector<std::string> args) {
    const auto json = dir_ / (command + std::to_string(np) + ".json");
    const auto stats = dir_ / ("stats" + std::to_string(np) + ".json");
    args.insert(args.end(), {"--json", json.string(), "--stats", stats.string()});
    const auto r = run(np, command, args);
    EXPECT_EQ(r.exit_status, 0) << r.out << r.err;
    if (np > 1) {
      EXPECT_THAT(r.out, HasSubstr(partition_line(np)));
    }
    Output o{nlohmann::json::parse(test::read_text(json)), test::read_text(stats)};
    for (const char* own : {"simulator", "cpu_seconds", "event_queue"}) o.rows.erase(own);
    return o;
  }
  static std::string partition_line(int np) {
    return "partition  " + std::to_string(np) + " processes";
  }

  void expect_same_as_one_process(const std::vector<std::string>& args, std::vector<int> nps,
                                  const std::string& command = "net") {
    const Output one = simulate(0, command, args);
    for (int np : nps) {
      const Output split = simulate(np, command, args);
      EXPECT_EQ(split.rows, one.rows) << "-np " << np;
      EXPECT_TRUE(split.stats == one.stats) << "-np " << np << ": the statistics differ";
    }
  }

  test::TempDir dir_;
};

// Contended: every chip writes to every other across the three rail leaves, with PFC pauses
// and DCQCN's CNPs on the way.
TEST_F(MpiCli, AllToAllOnThePodIsTheSameOnOneTwoAndThreeProcesses) {
  expect_same_as_one_process(
      {"--system", "hls2-pod128", "--pattern", "all-to-all", "--bytes", "32K", "--timing-only"},
      {1, 2, 3});
}

// Functional: the payload crosses between processes and is checked where it lands.
TEST_F(MpiCli, FunctionalPermutationMovesTheSameBytes) {
  expect_same_as_one_process(
      {"--system", "hls2-pod128", "--pattern", "permutation", "--bytes", "64K"}, {2});
}

// A latency run: one sender in the first process, its receiver in the last.
TEST_F(MpiCli, PairLatencyAcrossProcesses) {
  expect_same_as_one_process({"--system", "hls2-pod128", "--pattern", "pair", "--from", "0", "--to",
                              "100", "--iters", "5", "--bytes", "4K"},
                             {2, 3});  // on 3, the middle process has nothing to do
}

// Collectives: the pod cut to three boxes, one per process on three, so every collective's ranks
// span the processes; they wait for each other only through the network and the hosts' notices
// (a rank's end, a hierarchical all-reduce's phases), and each process checks its own ranks.
TEST_F(MpiCli, CollectivesAreTheSameOnOneTwoAndThreeProcesses) {
  const std::vector<std::string> three_boxes = {
      "--system", "hls2-pod128", "--set", "boxes=3", "--set", "network.leaf_down_ports=24"};
  const auto with = [&](std::vector<std::string> args) {
    args.insert(args.begin(), three_boxes.begin(), three_boxes.end());
    return args;
  };
  expect_same_as_one_process(
      with({"--algo", "hierarchical", "--sizes", "256KiB,1MiB", "-n", "2", "-w", "1"}), {1, 2, 3},
      "collective");
  expect_same_as_one_process(
      with({"--algo", "ring", "--sizes", "64KiB", "--dtype", "bf16", "--chips", "coarse"}), {3},
      "collective");
  expect_same_as_one_process(with({"--op", "all_to_all", "--sizes", "96KiB", "--timing-only"}), {2},
                             "collective");
  // A functional run checked piecewise: each process checks its own box's ranks, and the sums
  // of their wrong elements make the row.
  const Output split = simulate(3, "collective", with({"--algo", "mesh", "--sizes", "48KiB"}));
  EXPECT_EQ(split.rows["out_of_bounds"], 0);
  EXPECT_TRUE(split.rows["checked"].get<bool>());
}

// A sweep's points shared among the processes: the rows of a sweep in one process, the bad point
// reported by rank 0 and the exit status 1.
TEST_F(MpiCli, ASweepSharesItsPointsAmongTheProcesses) {
  const auto file = dir_.write("s.yaml",
                               "command: collective --timing-only --place out\n"
                               "axes:\n"
                               "  sizes: [1K, 2K, 4K, 8K, 16K, 32K, 64K, 128K, 256K, 512K, 1M, "
                               "lots]\n");
  std::string csv[2];
  for (int np : {0, 2}) {
    const auto out = dir_ / ("rows" + std::to_string(np) + ".csv");
    const auto r = run(np, "sweep", {file.string(), "--csv", out.string()});
    EXPECT_EQ(r.exit_status, 1) << r.out << r.err;
    EXPECT_THAT(r.out, HasSubstr("point 11 (sizes=lots) failed, exit status 2"));
    EXPECT_THAT(r.out, HasSubstr("11 of 12 points ran, 11 rows, 1 failed"));
    csv[np / 2] = test::read_text(out);
  }
  EXPECT_EQ(csv[1], csv[0]);
  EXPECT_EQ(std::count(csv[0].begin(), csv[0].end(), '\n'), 12);  // a header and eleven rows
}

TEST_F(MpiCli, MoreProcessesThanBoxesIsRefused) {
  const auto r = run(2, "net", {"--system", "hls2"});
  EXPECT_EQ(r.exit_status, 2) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("mpirun -np 2: 2 processes: the system has 1 box"));
}

// Every process builds the whole system: two on this machine need twice the memory of one.
TEST_F(MpiCli, TheMemoryOfEveryProcessOnTheMachineCounts) {
  const std::vector<std::string> mpi = {"--allow-run-as-root",
                                        "--oversubscribe",
                                        "-x",
                                        "PODSIM_MEMORY_LIMIT=600MiB",
                                        "-np",
                                        "2",
                                        PODSIM_BINARY,
                                        "net",
                                        "--system",
                                        "hls2-pod128",
                                        "-q"};
  const auto r = test::run_program(MPIRUN, mpi);
  EXPECT_EQ(r.exit_status, 2) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("2 processes each building a system of 128 chips would hold"));
}

TEST_F(MpiCli, TheFlowNetworkAndLockStepAreRefused) {
  auto r = run(2, "net", {"--system", "hls2-pod128", "--network", "flow"});
  EXPECT_EQ(r.exit_status, 2) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("--network flow runs in one process"));
  r = run(2, "net", {"--system", "hls2-pod128", "--lock-step"});
  EXPECT_EQ(r.exit_status, 2) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("--lock-step: a run split among processes runs in windows"));
}

TEST_F(MpiCli, CommandsThatDoNotSplitAreRefused) {
  const auto r = run(2, "kernel", {"--system", "hls2-pod128", "--list"});
  EXPECT_EQ(r.exit_status, 2) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("'kernel' runs in one process; under mpirun only 'net' and "
                               "'collective' split their system"));
  const auto trace =
      run(2, "collective", {"--system", "hls2-pod128", "--trace", (dir_ / "t.json").string()});
  EXPECT_EQ(trace.exit_status, 2) << trace.out << trace.err;
  EXPECT_THAT(trace.err, HasSubstr("--trace: a run split among processes writes no trace"));
}

}  // namespace
}  // namespace podsim
