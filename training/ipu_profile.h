// A step's compute on one IPU, for systems whose compute is the IPU roofline: each layer shape's
// work (layer_work.h) timed by the bulk-synchronous roofline of hw/ipulink/bsp_roofline.h, since
// the IPU's internals are not public. Forward is one pass of supersteps; backward twice its
// FLOPs, bytes and supersteps; the optimizer AdamW over fp32 master weights [T7]. What must stay
// in In-Processor-Memory (weights, gradients, activations, code) is checked up front; the
// optimizer's state moves to Streaming Memory when it does not fit beside them (as Graphcore's
// offloading does), each step reading and writing it there.
// Captures: FLOPs at a fraction of the FP16.16 peak, tile-memory and exchange bytes, one sync
// per superstep, the memory limit and the streaming cost. Ignores: pipelining a model over
// several IPUs (a replica is one IPU), recomputation, the exchange's code size growing with it.
#pragma once

#include <string>

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
};

// Throws std::invalid_argument when a replica's weights, gradients, activations and code do not
// fit the IPU's memory, with the largest per-worker batch that would.
StepProfile ipu_profile(const Model& model, const ipulink::IpuConfig& ipu, const std::string& chip,
                        const IpuWorkModel& work = {});

}  // namespace podsim::training
