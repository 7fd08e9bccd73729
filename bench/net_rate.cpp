// Packet-level network speed: how many packet-hops podsim simulates per second of CPU on a
// permutation over a k=16 fat tree (1024 hosts) and a k=32 one (8192 hosts), on one link
// between two chips (for context: the same per-hop work with everything in cache), and how long
// and how much memory elaborating the 2048-chip hls2-rack32x system takes. Each case runs the
// podsim binary in its own process (a SystemC kernel elaborates once per process) and reads its
// --json output; peak memory comes from the child's rusage.
//
//   bench/net_rate [--podsim PATH] [--json FILE] [--bytes SIZE]

#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
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

double hops_per_cpu_second(const Run& r) {
  return r.result["fabric"]["packet_hops"].get<double>() /
         r.result["simulator"]["run_cpu_seconds"].get<double>();
}

struct Figure {
  std::string name;
  double value;
  std::string unit;
  std::string goal;
};

}  // namespace

int main(int argc, char** argv) {
  std::string podsim = PODSIM_BINARY, json_file, bytes = "1MiB";
  if (!podsim::bench::read_flags(
          argc, argv, {{"--podsim", &podsim}, {"--json", &json_file}, {"--bytes", &bytes}},
          "usage: net_rate [--podsim PATH] [--json FILE] [--bytes SIZE]")) {
    return 2;
  }
  try {
    const std::vector<std::string> permutation = {"net",     "--pattern", "permutation",
                                                  "--bytes", bytes,       "--timing-only"};
    auto k16_args = permutation;
    k16_args.insert(k16_args.end(), {"--system", "fattree-k16"});
    auto k32_args = permutation;
    k32_args.insert(k32_args.end(), {"--system", "fattree-k16", "--set", "network.fat_tree_k=32",
                                     "--set", "boxes=8192"});
    const Run k16 = run_podsim(podsim, k16_args);
    const Run k32 = run_podsim(podsim, k32_args);
    const Run pair = run_podsim(podsim, {"net", "--system", "hls2", "--pattern", "pair", "--bytes",
                                         "1GiB", "--timing-only"});
    const Run rack = run_podsim(podsim, {"net", "--system", "hls2-rack32x", "--pattern", "pair",
                                         "--bytes", "8B", "--timing-only"});
    const double rate16 = hops_per_cpu_second(k16), rate32 = hops_per_cpu_second(k32);
    const std::vector<Figure> figures = {
        {"fattree-k16 permutation packet-hops per cpu second", rate16 / 1e6, "M/s", ">= 3"},
        {"fattree-k32 (8192 hosts) permutation packet-hops per cpu second", rate32 / 1e6, "M/s",
         ">= 0.7 x the k16 rate"},
        {"fattree-k32 rate relative to fattree-k16", rate32 / rate16, "ratio", ">= 0.7"},
        {"fattree-k16 permutation peak memory", k16.max_rss_gib, "GiB", "-"},
        {"single-link pair (cache-resident) packet-hops per cpu second",
         hops_per_cpu_second(pair) / 1e6, "M/s", "- (context)"},
        {"hls2-rack32x (2048 chips) elaboration cpu time",
         rack.result["simulator"]["elaboration_cpu_seconds"].get<double>(), "s", "< 10"},
        {"hls2-rack32x (2048 chips) peak memory", rack.max_rss_gib, "GiB", "< 2"},
    };
    fmt::print("{:<66} {:>10} {:>6}  {}\n", "figure", "value", "unit", "goal");
    nlohmann::json out;
    for (const auto& f : figures) {
      fmt::print("{:<66} {:>10.3f} {:>6}  {}\n", f.name, f.value, f.unit, f.goal);
      out["figures"].push_back(
          {{"name", f.name}, {"value", f.value}, {"unit", f.unit}, {"goal", f.goal}});
    }
    if (!json_file.empty()) std::ofstream(json_file) << out.dump(2) << "\n";
  } catch (const std::exception& e) {
    std::fprintf(stderr, "net_rate: %s\n", e.what());
    return 1;
  }
  return 0;
}
