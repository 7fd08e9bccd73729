// `podsim sweep`'s plain logic, without processes or the kernel: reading a sweep file into its
// points (the cross product of its axes, each point a podsim command line), and gathering the
// points' results into one table of rows.
//
// A sweep file (YAML):
//   command: collective --op all_reduce --timing-only   # a podsim command and its options
//   axes:                                               # every combination is one point
//     system: [hls2, hls1]                              # an option: --system hls2, ...
//     sizes: [1MiB, 64MiB]
//     algo: [ring, mesh]
//     set:                                              # configuration keys: --set KEY=VALUE
//       chip.nic.ports: [20, 24]
// Points run in the order of the axes as written, the last axis varying fastest.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

namespace podsim::sims {

struct SweepAxis {
  std::string name;                 // the column: "system", "chip.nic.ports"
  std::string flag;                 // "--system", or "--set" for a configuration key
  std::vector<std::string> values;  // as written
};

struct SweepSpec {
  std::vector<std::string> command;  // the podsim command and its fixed options
  std::vector<SweepAxis> axes;
};

struct SweepPoint {
  int index = 0;
  std::vector<std::pair<std::string, std::string>> values;  // axis name, value
  std::vector<std::string> args;                            // the podsim command line
  std::string describe() const;                             // "system=hls2 sizes=1MiB"
};

// Throws std::runtime_error naming the file, line and key of what is wrong.
SweepSpec load_sweep(const std::string& file);
SweepSpec parse_sweep(const std::string& text, const std::string& file);
std::vector<SweepPoint> sweep_points(const SweepSpec& spec);

// A point's rows: each row of its JSON results ("rows"), or the whole result as one row when it
// has none; each row led by the point's index and axis values and with the result's top-level
// scalars ("system", "ranks", ...) it does not have itself, but for the simulator's CPU seconds,
// so that a sweep run twice gives the same rows byte for byte.
std::vector<nlohmann::ordered_json> point_rows(const SweepPoint& point,
                                               const nlohmann::ordered_json& result);

// The rows as CSV: every column any row has, in first-seen order; an empty cell where a row has
// none. Cells with commas or quotes are quoted.
std::string rows_to_csv(const std::vector<nlohmann::ordered_json>& rows);
// The CSV back as rows (every cell a string, or a number where it reads as one).
std::vector<nlohmann::ordered_json> rows_from_csv(const std::string& text, const std::string& file);

}  // namespace podsim::sims
