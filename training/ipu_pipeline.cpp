#include "training/ipu_pipeline.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <stdexcept>

#include "training/layer_work.h"

namespace podsim::training {
namespace {

// Per position of model.layers: what a cut needs summed over a range of positions.
struct Prefix {
  std::vector<core::TimePs> pass;  // forward and backward of one micro-batch
  std::vector<double> resident, activations, state;
  std::vector<double> recomputed;  // per position, not summed: its layer's (IpuFootprint)

  // Recomputing, the most any layer of positions [first, end) recomputes at once.
  double most_recomputed(int first, int end) const {
    double most = 0;
    for (int i = first; i < end; ++i)
      most = std::max(most, recomputed[static_cast<std::size_t>(i)]);
    return most;
  }

  template <class V>
  static double between(const std::vector<V>& sums, int first, int end) {
    return static_cast<double>(sums[static_cast<std::size_t>(end)] -
                               sums[static_cast<std::size_t>(first)]);
  }
};

Prefix prefix_sums(const Model& model, const std::vector<LayerTiming>& timing,
                   const IpuWorkModel& work) {
  Prefix p;
  p.pass.push_back(0);
  p.resident.push_back(0);
  p.activations.push_back(0);
  p.state.push_back(0);
  for (int layer : model.layers) {
    const LayerTiming& t = timing[static_cast<std::size_t>(layer)];
    const IpuFootprint f = ipu_footprint(model, {layer}, work);
    p.pass.push_back(p.pass.back() + t.forward_ps + t.backward_ps);
    p.resident.push_back(p.resident.back() + f.resident);
    p.activations.push_back(p.activations.back() + f.activations);
    p.state.push_back(p.state.back() + f.state);
    p.recomputed.push_back(f.recomputed);
  }
  return p;
}

// What stage `s` of `stages` holds without its optimizer state: the code, its weights and
// gradients, the activations of the micro-batches in flight on it (recomputing: their layers'
// outputs, and one layer's activations recomputed at a time).
double held_bytes(const Prefix& p, int first, int end, int s, int stages, int micro_batches,
                  double code, PipelineSchedule schedule) {
  const int in_flight = micro_batches_held(schedule, s, stages, micro_batches);
  return code + Prefix::between(p.resident, first, end) +
         in_flight * Prefix::between(p.activations, first, end) + p.most_recomputed(first, end);
}

// The slot of `schedule` over stages of these times, transfers not included.
core::TimePs schedule_slot(PipelineSchedule schedule, const std::vector<PipelineStage>& stages) {
  core::TimePs forward = 0, backward = 0, both = 0;
  for (const PipelineStage& s : stages) {
    forward = std::max(forward, s.forward_ps);
    backward = std::max(backward, s.backward_ps);
    both += s.forward_ps + s.backward_ps;
  }
  switch (schedule) {
    case PipelineSchedule::kGrouped:
      return forward + backward;
    case PipelineSchedule::kInterleaved:
      return 2 * std::max(forward, backward);
    case PipelineSchedule::kSequential:
      return both;
  }
  return both;
}

}  // namespace

const char* schedule_name(PipelineSchedule schedule) {
  switch (schedule) {
    case PipelineSchedule::kGrouped:
      return "grouped";
    case PipelineSchedule::kInterleaved:
      return "interleaved";
    case PipelineSchedule::kSequential:
      return "sequential";
  }
  return "grouped";
}

PipelineSchedule parse_schedule(const std::string& name) {
  for (PipelineSchedule s : {PipelineSchedule::kGrouped, PipelineSchedule::kInterleaved,
                             PipelineSchedule::kSequential}) {
    if (name == schedule_name(s)) return s;
  }
  throw std::invalid_argument(
      fmt::format("pipeline schedule '{}': not one of grouped, interleaved, sequential", name));
}

int micro_batches_held(PipelineSchedule schedule, int s, int stages, int micro_batches) {
  switch (schedule) {
    case PipelineSchedule::kGrouped:
      return std::min(micro_batches, 2 * (stages - s) - 1);
    case PipelineSchedule::kInterleaved:
      return std::min(micro_batches, stages - s);
    case PipelineSchedule::kSequential:
      return 1;
  }
  return micro_batches;
}

int IpuPipeline::slots(int micro_batches) const {
  const int ramp =
      schedule == PipelineSchedule::kSequential ? 0 : static_cast<int>(stages.size()) - 1;
  return micro_batches + ramp;
}

IpuPipeline plan_ipu_pipeline(const Model& model, const std::vector<LayerTiming>& timing,
                              const ipulink::IpuConfig& ipu, int stages, int micro_batches,
                              core::Bandwidth boundary_link, int state_shards,
                              const IpuWorkModel& work, PipelineSchedule schedule) {
  const int layers = static_cast<int>(model.layers.size());
  if (stages < 1) throw std::invalid_argument("a pipeline needs at least one stage");
  if (stages > layers) {
    throw std::invalid_argument(
        fmt::format("{} pipeline stages for the {} layers of {}: at most one stage per layer",
                    stages, layers, model.name));
  }
  if (micro_batches < 1) throw std::invalid_argument("at least one micro-batch per step");
  if (state_shards < 1) throw std::invalid_argument("the optimizer state needs at least one shard");
  if (timing.size() != model.shapes.size()) {
    throw std::invalid_argument(fmt::format("the profile has {} layer shapes, the model {}",
                                            timing.size(), model.shapes.size()));
  }
  const Prefix p = prefix_sums(model, timing, work);
  const double memory = static_cast<double>(ipu.memory_bytes());
  const double code = work.code_share * memory;
  // slowest[s][j]: the least slowest-stage time over cuts of positions [0, j) into stages 0..s;
  // from[s][j]: where that cut's stage s starts.
  constexpr core::TimePs kNone = std::numeric_limits<core::TimePs>::max();
  const auto n = static_cast<std::size_t>(layers) + 1;
  std::vector<std::vector<core::TimePs>> slowest(static_cast<std::size_t>(stages),
                                                 std::vector<core::TimePs>(n, kNone));
  std::vector<std::vector<int>> from(static_cast<std::size_t>(stages), std::vector<int>(n, -1));
  for (int s = 0; s < stages; ++s) {
    auto& row = slowest[static_cast<std::size_t>(s)];
    for (int end = s + 1; end <= layers - (stages - 1 - s); ++end) {
      // Stage 0 starts at the first layer; stage s after at least s layers.
      for (int first = s; first < (s == 0 ? 1 : end); ++first) {
        const core::TimePs before =
            s == 0 ? 0 : slowest[static_cast<std::size_t>(s) - 1][static_cast<std::size_t>(first)];
        if (before == kNone) continue;
        if (held_bytes(p, first, end, s, stages, micro_batches, code, schedule) > memory) {
          continue;
        }
        const core::TimePs slot = std::max(before, p.pass[static_cast<std::size_t>(end)] -
                                                       p.pass[static_cast<std::size_t>(first)]);
        if (slot < row[static_cast<std::size_t>(end)]) {
          row[static_cast<std::size_t>(end)] = slot;
          from[static_cast<std::size_t>(s)][static_cast<std::size_t>(end)] = first;
        }
      }
    }
  }
  if (slowest.back().back() == kNone) {
    // Even the lightest stage's share: the weights spread evenly, the activations of the first.
    const double need = code + Prefix::between(p.resident, 0, layers) / stages +
                        micro_batches_held(schedule, 0, stages, micro_batches) *
                            Prefix::between(p.activations, 0, layers) / stages;
    throw std::invalid_argument(fmt::format(
        "{} with batch {} does not fit {} pipeline stages: each IPU would hold about {:.0f} MB "
        "(weights, gradients, the activations in flight, code) of its {:.0f} MB; use more "
        "stages or a smaller batch{}",
        model.name, model.batch, stages, need / 1e6, memory / 1e6,
        work.recompute ? "" : ", or recompute activations (--recompute)"));
  }
  IpuPipeline pipeline;
  pipeline.schedule = schedule;
  pipeline.state_shards = state_shards;
  pipeline.stages.resize(static_cast<std::size_t>(stages));
  for (int s = stages - 1, end = layers; s >= 0; --s) {
    PipelineStage& stage = pipeline.stages[static_cast<std::size_t>(s)];
    stage.first = from[static_cast<std::size_t>(s)][static_cast<std::size_t>(end)];
    stage.end = end;
    end = stage.first;
  }
  double boundary = 0;
  for (int s = 0; s < stages; ++s) {
    PipelineStage& stage = pipeline.stages[static_cast<std::size_t>(s)];
    for (int i = stage.first; i < stage.end; ++i) {
      const int layer = model.layers[static_cast<std::size_t>(i)];
      const LayerTiming& t = timing[static_cast<std::size_t>(layer)];
      stage.forward_ps += t.forward_ps;
      stage.backward_ps += t.backward_ps;
      stage.optimizer_ps += t.optimizer_ps;
      stage.parameters += model.shapes[static_cast<std::size_t>(layer)].parameters();
    }
    stage.optimizer_ps /= static_cast<core::TimePs>(state_shards);
    stage.memory_bytes =
        held_bytes(p, stage.first, stage.end, s, stages, micro_batches, code, schedule);
    const double state = Prefix::between(p.state, stage.first, stage.end) / state_shards;
    stage.offloaded = stage.memory_bytes + state > memory;
    if (stage.offloaded) {
      stage.optimizer_ps +=
          ipu_streaming_ps(ipu, static_cast<double>(stage.parameters) / state_shards, work);
    } else {
      stage.memory_bytes += state;
    }
    if (s + 1 < stages) {
      const int last = model.layers[static_cast<std::size_t>(stage.end) - 1];
      boundary =
          std::max(boundary, layer_work(model.shapes[static_cast<std::size_t>(last)]).output_bytes);
    }
  }
  if (stages > 1) {
    pipeline.transfer_ps =
        static_cast<core::TimePs>(boundary * 8e12 / boundary_link.bits_per_second) +
        static_cast<core::TimePs>(ipu.sync_link_latency.ps);
  }
  // Each phase ends in a transfer across the boundaries; sequentially, every boundary's twice.
  const core::TimePs transfers = schedule == PipelineSchedule::kSequential
                                     ? 2 * static_cast<core::TimePs>(stages - 1)
                                     : (stages > 1 ? 2 : 0);
  pipeline.slot_ps = schedule_slot(schedule, pipeline.stages) + transfers * pipeline.transfer_ps;
  return pipeline;
}

Timeline pipeline_timeline(const Model& model, const IpuPipeline& pipeline, int micro_batches,
                           std::uint64_t gradient_bytes) {
  if (micro_batches < 1) throw std::invalid_argument("at least one micro-batch per step");
  const auto stages = static_cast<core::TimePs>(pipeline.stages.size());
  Timeline t;
  t.micro_batches = micro_batches;
  t.pipeline_stages = static_cast<int>(pipeline.stages.size());
  t.slot_ps = pipeline.slot_ps;
  t.accumulating_ps = static_cast<core::TimePs>(micro_batches - 1) * pipeline.slot_ps;
  t.forward_ps = t.accumulating_ps;
  for (const PipelineStage& s : pipeline.stages) {
    t.forward_ps += s.forward_ps;
    t.optimizer_ps = std::max(t.optimizer_ps, s.optimizer_ps);
  }
  t.forward_ps += (stages - 1) * pipeline.transfer_ps;
  t.backward_ps = static_cast<core::TimePs>(pipeline.slots(micro_batches)) * pipeline.slot_ps;
  t.stage_lag = pipeline.schedule == PipelineSchedule::kSequential ? 0 : 1;
  for (auto i = model.layers.size(); i-- > 0;) {
    const auto s = static_cast<std::size_t>(model.layers[i]);
    t.gradients.push_back(
        {static_cast<int>(i), model.shapes[s].parameters() * gradient_bytes, t.backward_ps});
  }
  return t;
}

Timeline replica_timeline(const Model& model, const std::vector<LayerTiming>& timing,
                          const IpuPipeline& pipeline, int micro_batches,
                          std::uint64_t gradient_bytes) {
  if (pipeline.stages.size() != 1) {
    return pipeline_timeline(model, pipeline, micro_batches, gradient_bytes);
  }
  Timeline t = step_timeline(model, timing, gradient_bytes, micro_batches);
  t.optimizer_ps = pipeline.stages.front().optimizer_ps;
  return t;
}

}  // namespace podsim::training
