// What a data-parallel replica keeps in its chip's memory through a step, estimated from the
// model's layers before anything is measured, so that a job that cannot fit is refused with the
// sizes rather than "trained": the bf16 weights and gradients, the fp32 master weights and the
// optimizer's state (mixed-precision training with AdamW or LAMB: 16 bytes a parameter [T7];
// Rajbhandari et al.'s count for Adam [T14]; with LARS or SGD one momentum: 12), and the
// activations each layer's forward pass keeps for its backward pass (layer_work.h), at the
// replica's batch. Captures: every layer's share. Ignores: the compiler's temporaries and
// workspaces (a layer's at a time), fragmentation, and what recomputation would free (the Gaudi
// recipes keep them).
#pragma once

#include <cstdint>
#include <string>

#include "training/model.h"

namespace podsim::training {

struct ReplicaMemory {
  double weights = 0, gradients = 0, master_weights = 0, optimizer_state = 0, activations = 0;
  std::string state = "two fp32 moments";  // what the optimizer state is
  double total() const {
    return weights + gradients + master_weights + optimizer_state + activations;
  }
  // "weights 0.7 GB (bf16), gradients ..., 4.1 GB in all".
  std::string describe() const;
};

ReplicaMemory replica_memory(const Model& model);

}  // namespace podsim::training
