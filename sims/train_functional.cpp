// `podsim train --functional`: the workers' replicas of the MNIST net and, on the first chip no
// worker uses, one chip on their whole batch, both trained for real in one simulation
// (training/functional.h); prints both losses per step and how far the replicas end from the one
// chip.
#include "sims/train_functional.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <nlohmann/json.hpp>

#include "core/kernel.h"
#include "training/functional.h"

namespace podsim::sims {
namespace {

void report(const GlobalOptions& options, const training::Model& model,
            const training::Placement& placement, const training::FunctionalOptions& o,
            const std::string& strategy, const training::FunctionalResult& r,
            const training::FunctionalResult* single, int single_chip) {
  fmt::print("model      {}\n", model.description);
  fmt::print("placement  {}; functional: replicas really train, gradients really averaged\n",
             placement.description);
  fmt::print("strategy   {}: {} all-reduce{} per step{}{}\n", strategy, r.all_reduces,
             r.all_reduces == 1 ? "" : "s",
             o.broadcast ? ", rank 0's parameters broadcast first" : "",
             r.hosts > 1 ? fmt::format(", between {} hosts over their network", r.hosts) : "");
  if (single) {
    fmt::print("compare    chip {} alone on the global batch of {}\n", single_chip,
               o.batch * static_cast<std::uint32_t>(o.replicas));
  }
  fmt::print("{:>5} {:>14} {:>14}\n", "step", "loss", single ? "one_chip_loss" : "");
  nlohmann::json steps = nlohmann::json::array();
  for (std::size_t s = 0; s < r.losses.size(); ++s) {
    if (single) {
      fmt::print("{:>5} {:>14.6f} {:>14.6f}\n", s, r.losses[s], single->losses[s]);
    } else {
      fmt::print("{:>5} {:>14.6f}\n", s, r.losses[s]);
    }
    steps.push_back({{"step", s}, {"loss", r.losses[s]}});
    if (single) steps.back()["one_chip_loss"] = single->losses[s];
  }
  bool identical = true;
  for (const auto& p : r.parameters) identical = identical && p == r.parameters.front();
  fmt::print("replicas   {}\n",
             identical ? "end with identical parameters" : "end with DIFFERENT parameters");
  nlohmann::json j{{"model", model.name}, {"strategy", strategy},   {"replicas", o.replicas},
                   {"steps", steps},      {"identical", identical}, {"all_reduces", r.all_reduces},
                   {"hosts", r.hosts}};
  if (single) {
    double worst = 0, scale = 0;
    const auto& a = r.parameters.front();
    const auto& b = single->parameters.front();
    for (std::size_t i = 0; i < a.size(); ++i) {
      worst = std::max(worst, std::abs(a[i] - b[i]));
      scale = std::max(scale, std::abs(b[i] - single->initial[i]));
    }
    fmt::print(
        "one chip   the replicas' parameters differ from its by {:.2g} of its largest "
        "update (bf16 weights: a few hundredths)\n",
        worst / scale);
    j["difference_from_one_chip"] = worst / scale;
  }
  if (!options.json_file.empty()) write_output_file(options.json_file, j.dump(2) + "\n");
}

}  // namespace

int train_functionally(const GlobalOptions& options, const collectives::LoadedSystemFile& system,
                       system::Topology topology, const training::Model& model,
                       const training::Placement& placement, const training::FunctionalOptions& o,
                       const std::string& strategy) {
  const int chips = topology.chips;
  system::SystemModel sim("system", system.config, std::move(topology),
                          options.model_options(true));
  std::unique_ptr<training::FunctionalRun> replicas;
  try {
    replicas = std::make_unique<training::FunctionalRun>(sim, o, placement.chips);
  } catch (const std::invalid_argument& e) {
    throw UsageError(fmt::format("train --functional: {}", e.what()));
  }
  training::FunctionalRun& run = *replicas;
  std::unique_ptr<training::FunctionalRun> single;
  int free_chip = 0;
  while (free_chip < chips &&
         std::count(placement.chips.begin(), placement.chips.end(), free_chip) > 0) {
    ++free_chip;
  }
  if (free_chip < chips) {
    training::FunctionalOptions one = o;
    one.replicas = 1;
    one.batch = o.batch * static_cast<std::uint32_t>(o.replicas);
    single = std::make_unique<training::FunctionalRun>(sim, one, std::vector<int>{free_chip});
  }
  sc_core::sc_start();
  if (!run.failure().empty() || (single && !single->failure().empty())) {
    fmt::print(stderr, "podsim: train --functional failed: {}\n",
               run.failure().empty() ? single->failure() : run.failure());
    return 1;
  }
  report(options, model, placement, o, strategy, run.result(), single ? &single->result() : nullptr,
         free_chip);
  return 0;
}

}  // namespace podsim::sims
