// Collective speed at scale: a 1 GiB all-reduce (timing only, packet by packet, the algorithm
// `auto` picks) on hls2 (8 chips), hls2-pod128 (128) and hls2-rack16x (1024), each in its own
// podsim process; prints the simulated time and bus bandwidth next to the wall time and peak
// memory of the run.
//
//   bench/collective_scale [--podsim PATH] [--json FILE] [--bytes SIZE] [--systems A,B,...]
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
  double wall_goal_seconds;
};

}  // namespace

int main(int argc, char** argv) {
  std::string podsim = PODSIM_BINARY, json_file, bytes = "1GiB";
  std::vector<Case> cases = {
      {"hls2", 8, 5}, {"hls2-pod128", 128, 120}, {"hls2-rack16x", 1024, 1800}};
  std::string systems;
  constexpr const char* kUsage =
      "usage: collective_scale [--podsim PATH] [--json FILE] [--bytes SIZE] "
      "[--systems hls2,hls2-pod128,hls2-rack16x]";
  if (!podsim::bench::read_flags(argc, argv,
                                 {{"--podsim", &podsim},
                                  {"--json", &json_file},
                                  {"--bytes", &bytes},
                                  {"--systems", &systems}},
                                 kUsage)) {
    return 2;
  }
  if (!systems.empty()) {
    std::vector<Case> chosen;
    std::stringstream list(systems);
    for (std::string name; std::getline(list, name, ',');) {
      const auto it = std::find_if(cases.begin(), cases.end(),
                                   [&name](const Case& c) { return c.system == name; });
      if (it == cases.end()) {
        std::fprintf(stderr, "collective_scale: --systems: no case '%s'\n%s\n", name.c_str(),
                     kUsage);
        return 2;
      }
      chosen.push_back(*it);
    }
    cases = chosen;
  }
  try {
    nlohmann::json out;
    fmt::print("{:<14} {:>6} {:>6} {:>14} {:>12} {:>10} {:>10} {:>8}\n", "system", "chips", "algo",
               "sim time (us)", "busbw (GB/s)", "wall (s)", "goal (s)", "RSS GiB");
    for (const auto& c : cases) {
      const Run r = run_podsim(podsim, {"collective", "--system", c.system, "--op", "all_reduce",
                                        "--sizes", bytes, "--timing-only", "--place", "out"});
      const auto& row = r.result["rows"][0];
      fmt::print("{:<14} {:>6} {:>6} {:>14.1f} {:>12.2f} {:>10.1f} {:>10.0f} {:>8.2f}\n", c.system,
                 c.chips, row["algo"].get<std::string>(), row["time_us"].get<double>(),
                 row["busbw_gbps"].get<double>(), r.wall_seconds, c.wall_goal_seconds,
                 r.max_rss_gib);
      const std::string what = fmt::format("{} ({} chips) {} all-reduce", c.system, c.chips, bytes);
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
