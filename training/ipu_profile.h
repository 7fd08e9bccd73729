// A step's compute on one IPU, for systems whose compute is the IPU roofline: each layer shape's
// work (layer_work.h) timed by the bulk-synchronous roofline of hw/ipulink/bsp_roofline.h, since
// the IPU's internals are not public. Forward is one pass of supersteps; backward twice its
// FLOPs, bytes and supersteps; the optimizer AdamW over fp32 master weights [T7], its update on
// chip. What must stay in In-Processor-Memory (weights, gradients, activations, code) is checked
// up front. Where the optimizer's state lives (on chip, or in Streaming Memory when it does not
// fit, as Graphcore's offloading does) depends on how the replicas share it, which the replica's
// plan decides (ipu_pipeline.h); ipu_streaming_ps prices the streaming.
// Recomputation (IpuWorkModel::recompute, as Graphcore's recompute checkpoints [T11]): each
// layer keeps only its output through the forward pass and recomputes the rest of its
// activations in the backward pass, one layer at a time: a forward pass more, for activations of
// one layer's outputs each instead of all it writes.
// Captures: FLOPs at a fraction of the FP16.16 peak, tile-memory and exchange bytes, one sync
// per superstep, the memory limit and the streaming cost. Ignores: the exchange's code size
// growing with it.
#pragma once

#include <string>
#include <vector>

#include "hw/ipulink/ipu_config.h"
#include "training/model.h"
#include "training/profile.h"

namespace podsim::training {

// The roofline's assumptions, each [U] (docs/training.md says how they were chosen).
struct IpuWorkModel {
  double matmul_efficiency = 0.5;  // of the FP16.16 peak
  int supersteps_per_matmul = 2;   // a compute and an exchange phase, each ending in a sync
  double code_share = 0.1;         // of In-Processor-Memory: programs and exchange buffers
  double update_bytes = 30;        // per parameter: the AdamW update's reads and writes [T7]
  double state_bytes = 12;         // per parameter: fp32 master weight and two moments
  bool recompute = false;          // keep each layer's output only; recompute the rest backward
};

// What a set of layers holds in In-Processor-Memory, in bytes.
struct IpuFootprint {
  double resident = 0;     // bf16 weights and gradients (the code share is the caller's)
  double activations = 0;  // one micro-batch's, every layer's (recomputing: their outputs)
  double state = 0;        // the optimizer's fp32 master weights and moments
  double recomputed = 0;   // recomputing: the largest layer's activations, one micro-batch's
};
IpuFootprint ipu_footprint(const Model& model, const std::vector<int>& layers,
                           const IpuWorkModel& work = {});
// The optimizer's state of `parameters` read from and written back to Streaming Memory, per step.
core::TimePs ipu_streaming_ps(const ipulink::IpuConfig& ipu, double parameters,
                              const IpuWorkModel& work = {});

// Throws std::invalid_argument when a replica's weights, gradients, activations and code do not
// fit the IPU's memory, with the largest per-worker batch that would (or, when not even the
// weights fit, the pipelining that would); not with `check_memory` false (a pipelined replica,
// whose stages check their own: ipu_pipeline.h). Each shape's optimizer time is its update's on
// chip, the state's streaming not included.
StepProfile ipu_profile(const Model& model, const ipulink::IpuConfig& ipu, const std::string& chip,
                        const IpuWorkModel& work = {}, bool check_memory = true);

}  // namespace podsim::training
