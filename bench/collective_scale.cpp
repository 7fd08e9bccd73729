// Collective speed at scale: a 1 GiB all-reduce (timing only, the algorithm `auto` picks) on
// hls2 (8 chips), hls2-pod128 (128) and hls2-rack16x (1024), packet by packet and with the
// flow-level network (--network flow), with detailed chips and, in flow mode, coarse ones
// (--chips coarse), each in its own podsim process; prints the simulated time and bus bandwidth
// next to the wall time and peak memory of the run, and for flow runs the CPU time per message
// (flow).
//
//   bench/collective_scale [--podsim PATH] [--json FILE] [--bytes SIZE] [--systems A,B,...]
//                          [--networks packet,flow] [--chips detailed,coarse]
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/podsim_run.h"

namespace {

using Run = podsim::bench::PodsimRun;
using podsim::bench::run_podsim;

struct Case {
  std::string system;
  int chips;
  std::string network;
  std::string chip_model;
  double wall_goal_seconds;
};

// The goal for the CPU time of one message in flow mode (a flow-level MPI simulator
// measured for it cost 10-20 us).
constexpr double kMessageGoalMicroseconds = 2;

}  // namespace

int main(int argc, char** argv) {
  std::string podsim = PODSIM_BINARY, json_file, bytes = "1GiB";
  std::vector<Case> cases = {{"hls2", 8, "packet", "detailed", 5},
                             {"hls2-pod128", 128, "packet", "detailed", 120},
                             {"hls2-rack16x", 1024, "packet", "detailed", 1800},
                             {"hls2", 8, "flow", "detailed", 1},
                             {"hls2-pod128", 128, "flow", "detailed", 10},
                             {"hls2-rack16x", 1024, "flow", "detailed", 3},
                             {"hls2", 8, "flow", "coarse", 1},
                             {"hls2-pod128", 128, "flow", "coarse", 10},
                             {"hls2-rack16x", 1024, "flow", "coarse", 3}};
  std::string systems, networks, chip_models;
  constexpr const char* kUsage =
      "usage: collective_scale [--podsim PATH] [--json FILE] [--bytes SIZE] "
      "[--systems hls2,hls2-pod128,hls2-rack16x] [--networks packet,flow] "
      "[--chips detailed,coarse]";
  if (!podsim::bench::read_flags(argc, argv,
                                 {{"--podsim", &podsim},
                                  {"--json", &json_file},
                                  {"--bytes", &bytes},
                                  {"--systems", &systems},
                                  {"--networks", &networks},
                                  {"--chips", &chip_models}},
                                 kUsage)) {
    return 2;
  }
  const auto keep = [&](const std::string& list, const char* flag,
                        std::string Case::*field) -> bool {
    if (list.empty()) return true;
    std::vector<Case> chosen;
    std::stringstream names(list);
    for (std::string name; std::getline(names, name, ',');) {
      bool found = false;
      for (const Case& c : cases) {
        if (c.*field != name) continue;
        chosen.push_back(c);
        found = true;
      }
      if (!found) {
        std::fprintf(stderr, "collective_scale: %s: no case '%s'\n%s\n", flag, name.c_str(),
                     kUsage);
        return false;
      }
    }
    cases = chosen;
    return true;
  };
  if (!keep(systems, "--systems", &Case::system) || !keep(networks, "--networks", &Case::network) ||
      !keep(chip_models, "--chips", &Case::chip_model)) {
    return 2;
  }
  try {
    nlohmann::json out;
    fmt::print("{:<14} {:>6} {:>7} {:>9} {:>13} {:>14} {:>12} {:>9} {:>9} {:>8} {:>11}\n", "system",
               "chips", "network", "chip model", "algo", "sim time (us)", "busbw (GB/s)",
               "wall (s)", "goal (s)", "RSS GiB", "us/message");
    for (const auto& c : cases) {
      const Run r = run_podsim(podsim, {"collective", "--system", c.system, "--op", "all_reduce",
                                        "--sizes", bytes, "--timing-only", "--place", "out",
                                        "--network", c.network, "--chips", c.chip_model});
      const auto& row = r.result["rows"][0];
      const double messages = r.result["fabric"].value("flows", 0.0);
      const double per_message =
          messages > 0 ? r.result["cpu_seconds"].get<double>() / messages * 1e6 : 0;
      fmt::print(
          "{:<14} {:>6} {:>7} {:>9} {:>13} {:>14.1f} {:>12.2f} {:>9.1f} {:>9.0f} {:>8.2f} {:>11}\n",
          c.system, c.chips, c.network, c.chip_model, row["algo"].get<std::string>(),
          row["time_us"].get<double>(), row["busbw_gbps"].get<double>(), r.wall_seconds,
          c.wall_goal_seconds, r.max_rss_gib,
          messages > 0 ? fmt::format("{:.1f}", per_message) : std::string("-"));
      const std::string what = fmt::format("{} ({} chips) {} all-reduce, {} network, {} chips",
                                           c.system, c.chips, bytes, c.network, c.chip_model);
      if (messages > 0) {
        out["figures"].push_back({{"name", what + " CPU time per message"},
                                  {"value", per_message},
                                  {"unit", "us"},
                                  {"goal", fmt::format("< {}", kMessageGoalMicroseconds)}});
      }
      out["figures"].push_back({{"name", what + " wall time"},
                                {"value", r.wall_seconds},
                                {"unit", "s"},
                                {"goal", fmt::format("< {}", c.wall_goal_seconds)}});
      out["figures"].push_back({{"name", what + " bus bandwidth"},
                                {"value", row["busbw_gbps"].get<double>()},
                                {"unit", "GB/s"},
                                {"goal", "-"}});
      out["figures"].push_back({{"name", what + " simulated time"},
                                {"value", row["time_us"].get<double>()},
                                {"unit", "us"},
                                {"goal", "-"}});
      out["figures"].push_back({{"name", what + " peak memory"},
                                {"value", r.max_rss_gib},
                                {"unit", "GiB"},
                                {"goal", "-"}});
    }
    if (!json_file.empty()) std::ofstream(json_file) << out.dump(2) << "\n";
  } catch (const std::exception& e) {
    std::fprintf(stderr, "collective_scale: %s\n", e.what());
    return 1;
  }
  return 0;
}
