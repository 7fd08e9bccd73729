// A replica pipelined over several IPUs, as Graphcore trains models whose weights do not fit one
// IPU (BERT-Large over four) [T4, T10]: the layers cut into consecutive stages, one IPU each, and a
// step's micro-batches flowing through them. Plain arithmetic over the IPU roofline's per-shape
// times (ipu_profile.h).
// Captures: the cut that balances the stages' forward and backward time while each stage fits
// its IPU (its weights and gradients, the activations of the micro-batches in flight on it, the
// code; its optimizer state moved to Streaming Memory when that alone does not fit); each
// boundary's activations forward and their gradients back over a link, with a sync across IPUs;
// the schedule's ramp: a step of N micro-batches over K stages takes N + K - 1 slots of the
// slowest stage's forward and backward of one micro-batch (the one-forward-one-backward schedule,
// whose stage s holds K - s micro-batches' activations). The stages' optimizers run in parallel.
// Replicated tensor sharding (Graphcore's, for the optimizer state [T11]): each of R replicas keeps
// and updates 1/R of every tensor's state, so a stage holds and streams 1/R of its state and its
// update takes 1/R of the time (the reduce-scatter and all-gather around it: data_parallel.h).
// A plan of one stage is an unpipelined replica: where its optimizer state lives, and its update.
// Ignores: recomputation, the transfers overlapping compute, stages of unequal slots filling the
// bubbles, the hops between stages that are not directly linked.
#pragma once

#include <cstdint>
#include <vector>

#include "hw/core/units.h"
#include "hw/ipulink/ipu_config.h"
#include "training/ipu_profile.h"
#include "training/model.h"
#include "training/timeline.h"

namespace podsim::training {

struct PipelineStage {
  int first = 0, end = 0;                        // positions [first, end) of model.layers
  core::TimePs forward_ps = 0, backward_ps = 0;  // one micro-batch's
  core::TimePs optimizer_ps = 0;                 // its update, per step (streaming included)
  std::uint64_t parameters = 0;
  double memory_bytes = 0;  // held on its IPU (the optimizer state only when on chip)
  bool offloaded = false;   // its optimizer state in Streaming Memory
};

struct IpuPipeline {
  std::vector<PipelineStage> stages;
  int state_shards = 1;          // replicas sharing each stage's optimizer state
  core::TimePs transfer_ps = 0;  // the largest boundary's activations over the link, and a sync
  core::TimePs slot_ps = 0;      // the slowest stage's forward and backward, and two transfers
};

// The cut of `model` (per-shape times `timing`) into `stages` stages for a step of
// `micro_batches` that minimizes the slowest stage's forward and backward (ties: the earliest
// cuts). Throws
// std::invalid_argument when stages < 1, there are more stages than layers, or no cut fits every
// stage into an IPU (naming how much the tightest cut needs). Each boundary is timed over
// `boundary_link` (the slowest link between neighbouring stages) with a sync across IPUs. The
// optimizer state is sharded over `state_shards` replicas (1: each replica keeps all of it).
IpuPipeline plan_ipu_pipeline(const Model& model, const std::vector<LayerTiming>& timing,
                              const ipulink::IpuConfig& ipu, int stages, int micro_batches,
                              core::Bandwidth boundary_link, int state_shards = 1,
                              const IpuWorkModel& work = {});

// The step of one pipelined replica: N + K - 1 slots, the last micro-batch's forward through every
// stage, the optimizer the slowest stage's; every gradient ready at the backward pass's end.
Timeline pipeline_timeline(const Model& model, const IpuPipeline& pipeline, int micro_batches,
                           std::uint64_t gradient_bytes);

// One replica's step on IPUs as `pipeline` plans it: pipelined over its stages, or, with one
// stage, layer by layer (step_timeline) with that stage's optimizer.
Timeline replica_timeline(const Model& model, const std::vector<LayerTiming>& timing,
                          const IpuPipeline& pipeline, int micro_batches,
                          std::uint64_t gradient_bytes);

}  // namespace podsim::training
