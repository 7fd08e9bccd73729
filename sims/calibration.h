// The calibration table (configs/calibration.yaml): public measurements of real machines, each
// with its conditions and source, and the podsim run that models it. Plain data, read and
// checked with file:line errors; `podsim validate` runs it.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace podsim::sims {

struct CalibrationRow {
  std::string name, what, source, conditions;
  double measured = 0;
  std::string unit;  // TFLOP/s, samples/s or ms
  // The run: "gemm" (podsim kernel gemm), "train" (podsim train), or "" with `blocked` saying
  // why podsim cannot run it yet.
  std::string kind, blocked;
  std::string system;
  std::vector<std::uint32_t> shape;  // gemm: M, N, K
  std::string dtype = "bf16";
  std::vector<std::string> args;  // train: its options
  int line = 0;                   // where the row starts in the file

  // The podsim command line (without the program name) that models the row, --json FILE last.
  std::vector<std::string> command(const std::string& json_file) const;
  // The row's figure from that command's JSON output, in the row's unit. Throws
  // std::runtime_error when the output lacks it.
  double model_value(const std::string& json_text) const;
};

struct CalibrationTable {
  std::string file;
  std::vector<CalibrationRow> rows;
};

// Throws std::invalid_argument naming file:line and what is wrong.
CalibrationTable load_calibration(const std::string& path);
// configs/calibration.yaml in the first configuration directory that has one.
std::string default_calibration_path();

}  // namespace podsim::sims
