#include "training/ipu_profile.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "hw/ipulink/bsp_roofline.h"
#include "training/layer_work.h"

namespace podsim::training {
namespace {

// Matmuls (or convolutions) per layer shape: what its supersteps follow.
int matmuls(const LayerShape& s) {
  switch (s.kind) {
    case LayerKind::kTransformer:
      return 6;  // QKV, scores, weighted sum, output projection, two FFN
    case LayerKind::kLmHead:
      return 1;
    case LayerKind::kConv:
      return s.conv.kind == workloads::ConvUnitKind::kBottleneck ? 4 : 1;
  }
  return 1;
}

// One pass over a layer: `scale` 1 forward, 2 backward.
ipulink::PhaseWork pass(const LayerShape& s, const LayerWork& w, const IpuWorkModel& m,
                        double scale) {
  ipulink::PhaseWork p;
  p.flops = scale * w.forward_flops;
  // The weights read, the activations written (forward) or read and written again (backward).
  p.memory_bytes = scale * (2 * w.parameters + w.activation_bytes);
  p.exchange_bytes = scale * w.activation_bytes;
  p.supersteps = static_cast<int>(scale) * m.supersteps_per_matmul * matmuls(s);
  p.efficiency = m.matmul_efficiency;
  return p;
}

core::TimePs time(const ipulink::IpuConfig& ipu, const ipulink::PhaseWork& p) {
  return ipulink::bsp_time(ipu, p).total_ps();
}

}  // namespace

IpuFootprint ipu_footprint(const Model& model, const std::vector<int>& layers,
                           const IpuWorkModel& m) {
  IpuFootprint f;
  for (int layer : layers) {
    const LayerWork w = layer_work(model.shapes[static_cast<std::size_t>(layer)]);
    f.resident += 4 * w.parameters;
    f.activations += m.recompute ? w.output_bytes : w.activation_bytes;
    if (m.recompute) f.recomputed = std::max(f.recomputed, w.activation_bytes);
    f.state += m.state_bytes * w.parameters;
  }
  return f;
}

core::TimePs ipu_streaming_ps(const ipulink::IpuConfig& ipu, double parameters,
                              const IpuWorkModel& m) {
  const double bytes = 2 * m.state_bytes * parameters;  // read and written back
  return static_cast<core::TimePs>(bytes * 8e12 / ipu.streaming_memory_bandwidth.bits_per_second);
}

StepProfile ipu_profile(const Model& model, const ipulink::IpuConfig& ipu, const std::string& chip,
                        const IpuWorkModel& m, bool check_memory) {
  // What one replica holds: bf16 weights and gradients and the code, and what grows with the
  // batch: every layer's activations (recomputing: their outputs and one layer's activations).
  const IpuFootprint f = ipu_footprint(model, model.layers, m);
  const double memory = static_cast<double>(ipu.memory_bytes());
  const double code = m.code_share * memory;
  const double fixed = code + f.resident;
  const double batched = f.activations + f.recomputed;
  if (check_memory && fixed + batched > memory) {
    const double per_sample = batched / model.batch;
    const double room = memory - fixed;
    const std::string advice =
        room >= per_sample
            ? fmt::format("a per-worker batch of at most {} fits{}",
                          static_cast<long long>(std::floor(room / per_sample)),
                          m.recompute ? "" : " (more with recomputation: --recompute)")
            : fmt::format(
                  "its weights and gradients alone do not fit: pipeline each replica over at "
                  "least {} IPUs (--pipeline)",
                  static_cast<int>(std::ceil(f.resident / (memory - code))));
    throw std::invalid_argument(fmt::format(
        "{} with batch {} holds {:.0f} MB per IPU (weights, gradients, activations, code) but "
        "an IPU has {:.0f} MB of In-Processor-Memory; {}",
        model.name, model.batch, (fixed + batched) / 1e6, memory / 1e6, advice));
  }
  StepProfile p;
  p.chip = chip;
  for (const LayerShape& s : model.shapes) {
    const LayerWork w = layer_work(s);
    LayerTiming t;
    t.forward_ps = time(ipu, pass(s, w, m, 1));
    t.backward_ps = time(ipu, pass(s, w, m, 2)) + (m.recompute ? t.forward_ps : 0);
    ipulink::PhaseWork update;
    update.flops = 10 * w.parameters;
    update.memory_bytes = m.update_bytes * w.parameters;
    update.efficiency = 1;
    t.optimizer_ps = time(ipu, update);
    p.keys.push_back(s.key());
    p.shapes.push_back(t);
  }
  return p;
}

}  // namespace podsim::training
