// MPI-parallel packet-level speed: `podsim net` and `podsim collective` run in one process and
// split among 2 processes under mpirun (docs/parallel.md), each case timed as a whole (wall time,
// elaboration included) and its rows checked equal to the single process's.
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
  std::string name, size;
  std::vector<std::string> args;  // the podsim command line
};

// The goal for two processes on a two-core machine.
constexpr double kSpeedupGoal = 1.6;

// The JSON but for each process's own figures (CPU time, callbacks).
nlohmann::json rows_of(nlohmann::json result) {
  for (const char* own : {"simulator", "cpu_seconds", "event_queue"}) result.erase(own);
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
  const auto net = [](const std::string& system, const std::string& pattern,
                      const std::string& size) {
    return std::vector<std::string>{"net",   "--system", system, "--pattern",
                                    pattern, "--bytes",  size,   "--timing-only"};
  };
  // The all-to-all moves a flow per pair: an eighth of the permutation's bytes per flow.
  const std::vector<Case> cases = {
      {"hls2-rack16x (1024 chips) net permutation", bytes,
       net("hls2-rack16x", "permutation", bytes)},
      {"hls2-pod128 net all-to-all", "256KiB", net("hls2-pod128", "all-to-all", "256KiB")},
      {"hls2-rack16x (1024 chips) hierarchical all_reduce",
       "4MiB",
       {"collective", "--system", "hls2-rack16x", "--algo", "hierarchical", "--sizes", "4MiB", "-n",
        "1", "-w", "0", "--timing-only"}}};
  nlohmann::json figures = nlohmann::json::array();
  fmt::print("{:<52} {:>10} {:>12} {:>12} {:>9} {:>6} {:>10}\n", "case", "bytes", "1 process",
             fmt::format("{} processes", processes), "speed-up", "goal", "same rows");
  for (const Case& c : cases) {
    const std::vector<std::string>& args = c.args;
    const auto one = podsim::bench::run_podsim(podsim, args);
    std::vector<std::string> split = {"--oversubscribe", "-np", processes, podsim};
    if (::geteuid() == 0) split.insert(split.begin(), "--allow-run-as-root");
    split.insert(split.end(), args.begin(), args.end());
    const auto many = podsim::bench::run_podsim(mpirun, split);
    const double speedup = one.wall_seconds / many.wall_seconds;
    const bool same = rows_of(one.result) == rows_of(many.result);
    fmt::print("{:<52} {:>10} {:>10.2f} s {:>10.2f} s {:>8.2f}x {:>5.1f}x {:>10}\n", c.name, c.size,
               one.wall_seconds, many.wall_seconds, speedup, kSpeedupGoal, same ? "yes" : "NO");
    figures.push_back({{"name", fmt::format("{} speed-up on {} processes", c.name, processes)},
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
