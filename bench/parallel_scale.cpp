// MPI-parallel packet-level speed: `podsim net` runs in one process and split among 2 processes
// under mpirun (docs/parallel.md), each case timed as a whole (wall time, elaboration included)
// and its rows checked equal to the single process's.
//
//   bench/parallel_scale [--podsim PATH] [--mpirun PATH] [--json FILE] [--processes N]
//                        [--bytes SIZE]
#include <fmt/format.h>
#include <unistd.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench/podsim_run.h"

namespace {

struct Case {
  std::string name, system, pattern;
};

// The goal for two processes on a two-core machine.
constexpr double kSpeedupGoal = 1.6;

nlohmann::json rows_of(nlohmann::json result) {
  result.erase("simulator");
  return result;
}

}  // namespace

int main(int argc, char** argv) {
  std::string podsim = PODSIM_BINARY, mpirun = MPIRUN, json_file, processes = "2", bytes = "8MiB";
  constexpr const char* kUsage =
      "usage: parallel_scale [--podsim PATH] [--mpirun PATH] [--json FILE] [--processes N] "
      "[--bytes SIZE]";
  if (!podsim::bench::read_flags(argc, argv,
                                 {{"--podsim", &podsim},
                                  {"--mpirun", &mpirun},
                                  {"--json", &json_file},
                                  {"--processes", &processes},
                                  {"--bytes", &bytes}},
                                 kUsage)) {
    return 2;
  }
  const bool whole = !processes.empty() &&
                     processes.find_first_not_of("0123456789") == std::string::npos &&
                     processes.size() < 4;
  if (!whole || std::stoi(processes) < 2) {
    fmt::print(stderr, "--processes {}: must be a whole number of at least 2\n", processes);
    return 2;
  }
  const std::vector<Case> cases = {
      {"hls2-rack16x (1024 chips) permutation", "hls2-rack16x", "permutation"},
      {"hls2-pod128 all-to-all", "hls2-pod128", "all-to-all"}};
  nlohmann::json figures = nlohmann::json::array();
  fmt::print("{:<40} {:>10} {:>12} {:>12} {:>9} {:>6} {:>10}\n", "case", "bytes", "1 process",
             fmt::format("{} processes", processes), "speed-up", "goal", "same rows");
  for (const Case& c : cases) {
    // The all-to-all moves a flow per pair: an eighth of the permutation's bytes per flow.
    const std::string size = c.pattern == "all-to-all" ? "256KiB" : bytes;
    const std::vector<std::string> args = {"net",     "--system", c.system, "--pattern",
                                           c.pattern, "--bytes",  size,     "--timing-only"};
    const auto one = podsim::bench::run_podsim(podsim, args);
    std::vector<std::string> split = {"--oversubscribe", "-np", processes, podsim};
    if (::geteuid() == 0) split.insert(split.begin(), "--allow-run-as-root");
    split.insert(split.end(), args.begin(), args.end());
    const auto many = podsim::bench::run_podsim(mpirun, split);
    const double speedup = one.wall_seconds / many.wall_seconds;
    const bool same = rows_of(one.result) == rows_of(many.result);
    fmt::print("{:<40} {:>10} {:>10.2f} s {:>10.2f} s {:>8.2f}x {:>5.1f}x {:>10}\n", c.name, size,
               one.wall_seconds, many.wall_seconds, speedup, kSpeedupGoal, same ? "yes" : "NO");
    figures.push_back({{"name", fmt::format("{} net speed-up on {} processes", c.name, processes)},
                       {"value", speedup},
                       {"unit", "x"},
                       {"goal", kSpeedupGoal}});
    figures.push_back({{"name", fmt::format("{} rows equal to one process's", c.name)},
                       {"value", same ? 1 : 0},
                       {"unit", "bool"},
                       {"goal", 1}});
  }
  if (!json_file.empty()) std::ofstream(json_file) << nlohmann::json{{"figures", figures}}.dump(2);
  return 0;
}
