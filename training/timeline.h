// One data-parallel replica's step, as plain arithmetic over a compute profile (profile.h):
// the forward pass layer by layer, the backward pass in reverse with each layer's gradient
// ready at its end, the optimizer after every gradient is reduced; and the gradients gathered
// into the buckets a framework all-reduces (PyTorch DDP's: in the order they become ready, a
// bucket closing when the next gradient would take it past the cap).
// Captures: when each gradient is ready and how large it is. Ignores: the compute slowing while
// communication shares the chip's memory (the profile times compute alone).
#pragma once

#include <cstdint>
#include <vector>

#include "core/units.h"
#include "training/model.h"

namespace podsim::training {

// What one layer shape's compute takes on one chip.
struct LayerTiming {
  core::TimePs forward_ps = 0, backward_ps = 0, optimizer_ps = 0;
};

struct Gradient {
  int layer = 0;  // forward position
  std::uint64_t bytes = 0;
  core::TimePs ready_ps = 0;  // from the step's start
};

struct Timeline {
  int micro_batches = 1;             // gradient accumulation: passes per step
  core::TimePs accumulating_ps = 0;  // the micro-batches before the last, which keep gradients
  core::TimePs forward_ps = 0;       // the (last micro-batch's) forward pass ends
  core::TimePs backward_ps = 0;      // the backward pass ends (forward included)
  core::TimePs optimizer_ps = 0;     // the optimizer's own time, after the reduction
  // A replica pipelined over IPUs (ipu_pipeline.h): its stages and the schedule's slot, in which
  // each stage runs one micro-batch's forward and backward.
  int pipeline_stages = 1;
  core::TimePs slot_ps = 0;
  int stage_lag = 1;  // slots by which stage s + 1 trails stage s (0: they take turns in a slot)
  std::vector<Gradient> gradients;  // in the order they become ready
  core::TimePs compute_ps() const { return backward_ps + optimizer_ps; }
};

// `timing[s]` is shape s's; `gradient_bytes` per parameter (2 for bf16, 4 for fp32). With
// `micro_batches` > 1 the step accumulates gradients over that many forward and backward passes
// and only the last one's gradients are handed on (as DDP's no_sync, Horovod's
// backward_passes_per_step and PopDist's gradient accumulation do) [T1, T3, T4]. Throws
// std::invalid_argument when the profile does not cover every shape.
Timeline step_timeline(const Model& model, const std::vector<LayerTiming>& timing,
                       std::uint64_t gradient_bytes, int micro_batches = 1);

struct Bucket {
  std::uint64_t bytes = 0;
  core::TimePs ready_ps = 0;  // its last gradient's
  std::vector<int> layers;
};

// DDP's bucketing with a cap of `cap_bytes` (a gradient larger than the cap gets a bucket of its
// own); 0: one bucket of everything.
std::vector<Bucket> make_buckets(const std::vector<Gradient>& gradients, std::uint64_t cap_bytes);

}  // namespace podsim::training
