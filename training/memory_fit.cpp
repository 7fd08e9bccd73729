#include "training/memory_fit.h"

#include <fmt/format.h>

#include "training/layer_work.h"

namespace podsim::training {
namespace {

std::string gb(double bytes) { return fmt::format("{:.1f} GB", bytes / 1e9); }

}  // namespace

std::string ReplicaMemory::describe() const {
  return fmt::format(
      "weights {} (bf16), gradients {} (bf16), fp32 master weights {}, optimizer state {} "
      "({}), activations {}: {} in all",
      gb(weights), gb(gradients), gb(master_weights), gb(optimizer_state), state, gb(activations),
      gb(total()));
}

ReplicaMemory replica_memory(const Model& model) {
  ReplicaMemory m;
  const double params = static_cast<double>(model.parameters());
  m.weights = 2 * params;
  m.gradients = 2 * params;
  m.master_weights = 4 * params;
  m.optimizer_state = state_bytes(model.optimizer) * params;
  m.state = state_bytes(model.optimizer) == 8 ? "two fp32 moments" : "one fp32 momentum";
  for (const int layer : model.layers)
    m.activations += layer_work(model.shapes[static_cast<std::size_t>(layer)]).activation_bytes;
  return m;
}

}  // namespace podsim::training
