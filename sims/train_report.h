// What `podsim train` prints and writes beside a step's table: a scaling study's table, CSV,
// SVG plot and JSON from its points' results, and an IPU replica's plan (its pipeline stages and
// where its optimizer state lives).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "training/ipu_pipeline.h"
#include "training/model.h"
#include "training/profile.h"
#include "training/timeline.h"

namespace podsim::sims {

// What a scaling study's report names, and the files it writes (empty: not written).
struct ScaleReport {
  std::string system, strategy;
  bool ideal_network = false;
  std::string csv_file, plot_file, json_file;
};

// The table of `points` (each point's `--json` result, in order), and the files `report` names.
void report_scale(const ScaleReport& report, const training::Model& model,
                  const training::StepProfile& profile, const std::vector<nlohmann::json>& points);

// An IPU replica's plan: its stages' lines when pipelined, and, with `optimizer_on_chip` (not
// ipu-multiworker, whose update runs on the hosts), where its optimizer state lives.
void print_ipu_plan(const training::Model& model, const training::IpuPipeline& pipeline,
                    const training::Timeline& timeline, bool optimizer_on_chip);
nlohmann::json ipu_plan_json(const training::IpuPipeline& pipeline);

}  // namespace podsim::sims
