// What moving, reducing and checking real bytes costs over timing alone: the 128-rank
// halving-doubling fp16 all-reduce of 1 and 2 MiB on hls2-pod128 (the rack-scale speed issue's
// case), run functional and checked, functional unchecked (-c 0) and timing-only, in turn, each
// in its own podsim process; prints each run's wall time and peak memory and the ratio of the
// medians, functional over timing-only, pair by pair (ratios in one run hold on a noisy machine;
// single times do not).
//
//   bench/functional_cost [--podsim PATH] [--json FILE] [--runs N] [--system S] [--ranks N]
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench/podsim_run.h"

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

struct Mode {
  const char* name;
  std::vector<std::string> extra;
  std::vector<double> wall, rss;
};

}  // namespace

int main(int argc, char** argv) {
  std::string podsim = PODSIM_BINARY, json_file, runs_text = "3", system = "hls2-pod128",
              ranks = "128";
  if (!podsim::bench::read_flags(argc, argv,
                                 {{"--podsim", &podsim},
                                  {"--json", &json_file},
                                  {"--runs", &runs_text},
                                  {"--system", &system},
                                  {"--ranks", &ranks}},
                                 "usage: functional_cost [--podsim PATH] [--json FILE] [--runs N] "
                                 "[--system S] [--ranks N]")) {
    return 2;
  }
  int runs = 0;
  try {
    std::size_t used = 0;
    runs = std::stoi(runs_text, &used);
    if (used != runs_text.size()) runs = 0;
  } catch (const std::exception&) {
  }
  if (runs < 1) {
    std::fprintf(stderr, "functional_cost: --runs %s: must be a whole number of at least 1\n",
                 runs_text.c_str());
    return 2;
  }
  const std::vector<std::string> base = {
      "collective", "--system", system, "--ranks", ranks, "--algo", "halving_doubling",
      "-d",         "half",     "-b",   "1M",      "-e",  "2M",     "--place",
      "out"};
  std::vector<Mode> modes = {{"functional, checked", {}, {}, {}},
                             {"functional, unchecked", {"-c", "0"}, {}, {}},
                             {"timing only", {"--timing-only"}, {}, {}}};
  std::vector<double> checked_ratio, unchecked_ratio;
  try {
    for (int r = 0; r < runs; ++r) {
      for (Mode& m : modes) {
        auto args = base;
        args.insert(args.end(), m.extra.begin(), m.extra.end());
        const auto run = podsim::bench::run_podsim(podsim, args);
        m.wall.push_back(run.wall_seconds);
        m.rss.push_back(run.max_rss_gib);
      }
      checked_ratio.push_back(modes[0].wall.back() / modes[2].wall.back());
      unchecked_ratio.push_back(modes[1].wall.back() / modes[2].wall.back());
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "functional_cost: %s\n", e.what());
    return 1;
  }
  fmt::print("# {} ranks of {}, halving-doubling fp16 all-reduce of 1 and 2 MiB, {} runs each\n",
             ranks, system, runs);
  fmt::print("{:<24} {:>16} {:>14} {:>16}\n", "mode", "wall (s), median", "peak GiB",
             "x timing only");
  const double timing = median(modes[2].wall);
  const std::vector<double> ratios[] = {checked_ratio, unchecked_ratio, {1.0}};
  for (std::size_t i = 0; i < modes.size(); ++i) {
    fmt::print("{:<24} {:>16.2f} {:>14.2f} {:>16.2f}\n", modes[i].name, median(modes[i].wall),
               median(modes[i].rss), median(ratios[i]));
  }
  if (!json_file.empty()) {
    const std::string what =
        fmt::format("{}-rank {} halving-doubling fp16 all-reduce 1-2 MiB", ranks, system);
    nlohmann::json out;
    out["figures"] = {{{"name", what + " functional and checked over timing-only wall time"},
                       {"value", median(checked_ratio)},
                       {"unit", "x"},
                       {"goal", "<= 3"}},
                      {{"name", what + " functional unchecked over timing-only wall time"},
                       {"value", median(unchecked_ratio)},
                       {"unit", "x"},
                       {"goal", "-"}},
                      {{"name", what + " timing-only wall time"},
                       {"value", timing},
                       {"unit", "s"},
                       {"goal", "-"}},
                      {{"name", what + " functional peak memory"},
                       {"value", median(modes[0].rss)},
                       {"unit", "GiB"},
                       {"goal", "-"}}};
    std::ofstream(json_file) << out.dump(2) << "\n";
  }
  return 0;
}
