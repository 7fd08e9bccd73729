// A replica pipelined over several IPUs, as Graphcore trains models whose weights do not fit one
// IPU (BERT-Large over four) [T4, T10]: the layers cut into consecutive stages, one IPU each, and a
// step's micro-batches flowing through them. Plain arithmetic over the IPU roofline's per-shape
// times (ipu_profile.h).
//
// Captures: the cut that balances the stages' forward and backward time while each stage fits
// its IPU (its weights and gradients, the activations of the micro-batches in flight on it, the
// code; its optimizer state moved to Streaming Memory when that alone does not fit); each
// boundary's activations forward and their gradients back over a link, with a sync across IPUs;
// the stages' optimizers in parallel.
//
// Graphcore's three schedules [T13], their times read off the bulk-synchronous execution (every
// IPU of the replica syncs at the end of each compute phase, so a phase lasts its slowest IPU's
// work). Grouped (the default) runs every stage's forward in one phase and every stage's backward
// in the next: a slot is the slowest forward plus the slowest backward, and stage s holds
// 2(K - s) - 1 micro-batches' activations (a micro-batch's forward reaches the last stage and its
// backward comes back). Interleaved runs a backward as soon as its activations are made, so stage
// s holds K - s, but a phase mixes forwards and backwards and lasts the slowest of either: a slot
// is two such phases. Both take N + K - 1 slots for N micro-batches over K stages (the ramp of
// [T10]; grouped has exactly N + K - 1 forward phases and as many backward phases, the first
// K - 1 steps holding only forwards and the last K - 1 only backwards). Sequential runs one
// micro-batch through every stage and back before the next (a sharded model), one activation set
// per stage.
//
// Replicated tensor sharding (Graphcore's, for the optimizer state [T11]): each of R replicas
// keeps and updates 1/R of every tensor's state, so a stage holds and streams 1/R of its state and
// its update takes 1/R of the time (the reduce-scatter and all-gather around it:
// data_parallel.h). A plan of one stage is an unpipelined replica: where its optimizer state
// lives, and its update.
//
// Ignores: the transfers overlapping compute; phases in the ramps being shorter when the slowest
// stage idles in them (and interleaved's ramp phases holding only forwards or only backwards);
// the hops between stages that are not directly linked.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/units.h"
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

enum class PipelineSchedule { kGrouped, kInterleaved, kSequential };
const char* schedule_name(PipelineSchedule schedule);
// The schedule named `name` (grouped, interleaved, sequential); throws std::invalid_argument.
PipelineSchedule parse_schedule(const std::string& name);
// The micro-batches whose activations stage `s` of `stages` holds at once in a step of
// `micro_batches`.
int micro_batches_held(PipelineSchedule schedule, int s, int stages, int micro_batches);

struct IpuPipeline {
  PipelineSchedule schedule = PipelineSchedule::kGrouped;
  std::vector<PipelineStage> stages;
  int state_shards = 1;          // replicas sharing each stage's optimizer state
  core::TimePs transfer_ps = 0;  // the largest boundary's activations over the link, and a sync
  core::TimePs slot_ps = 0;      // the schedule's slot: every stage's share of it, and transfers
  // Slots a step of `micro_batches` takes: N + K - 1, or N when the stages take turns.
  int slots(int micro_batches) const;
};

// The cut of `model` (per-shape times `timing`) into `stages` stages for a step of
// `micro_batches` under `schedule` that minimizes the slowest stage's forward and backward (ties:
// the earliest cuts). Throws
// std::invalid_argument when stages < 1, there are more stages than layers, or no cut fits every
// stage into an IPU (naming how much the tightest cut needs). Each boundary is timed over
// `boundary_link` (the slowest link between neighbouring stages) with a sync across IPUs. The
// optimizer state is sharded over `state_shards` replicas (1: each replica keeps all of it).
IpuPipeline plan_ipu_pipeline(const Model& model, const std::vector<LayerTiming>& timing,
                              const ipulink::IpuConfig& ipu, int stages, int micro_batches,
                              core::Bandwidth boundary_link, int state_shards = 1,
                              const IpuWorkModel& work = {},
                              PipelineSchedule schedule = PipelineSchedule::kGrouped);

// The step of one pipelined replica: its schedule's slots, the last micro-batch's forward through
// every stage, the optimizer the slowest stage's; every gradient ready at the backward pass's end.
Timeline pipeline_timeline(const Model& model, const IpuPipeline& pipeline, int micro_batches,
                           std::uint64_t gradient_bytes);

// One replica's step on IPUs as `pipeline` plans it: pipelined over its stages, or, with one
// stage, layer by layer (step_timeline) with that stage's optimizer.
Timeline replica_timeline(const Model& model, const std::vector<LayerTiming>& timing,
                          const IpuPipeline& pipeline, int micro_batches,
                          std::uint64_t gradient_bytes);

}  // namespace podsim::training
