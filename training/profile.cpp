#include "training/profile.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <stdexcept>

#include "synapse/session.h"
#include "workloads/values.h"

namespace podsim::training {
namespace {

using tpc::Dtype;

void line_up(ReplicaBarrier* barrier) {
  if (barrier) barrier->arrive_and_wait();
}

// Device time of `launches` (which record and end a step on `session`), started with the other
// replicas'.
template <class F>
core::TimePs device_time(synapse::Session& session, ReplicaBarrier* barrier, F&& launches) {
  line_up(barrier);
  const core::TimePs before = session.stats().device_time;
  launches();
  return session.stats().device_time - before;
}

// The forward and the backward pass of a layer shape; `step(backward)` runs one.
template <class Layer>
LayerTiming time_passes(synapse::Session& session, Layer& layer, ReplicaBarrier* barrier) {
  line_up(barrier);
  // Compiles and uploads both recipes without running them, so what is timed is the launch.
  // Twice: the backward step's larger workspace moves the forward's, and the command buffers
  // are uploaded for the addresses the timed launches use.
  session.set_compile_only(true);
  for (int round = 0; round < 2; ++round) {
    layer.step(false);
    layer.step(true);
  }
  session.set_compile_only(false);
  LayerTiming t;
  t.forward_ps = device_time(session, barrier, [&] { layer.step(false); });
  const core::TimePs both = device_time(session, barrier, [&] { layer.step(true); });
  t.backward_ps = both > t.forward_ps ? both - t.forward_ps : 0;
  return t;
}

// The model's optimizer over `parameters` fp32 master weights from a bf16 gradient, the bf16
// weights written back: what a mixed-precision optimizer step does per parameter. LAMB's and
// LARS's trust ratios are taken over the layer's parameters as one tensor (the real ones take a
// ratio per weight tensor: more, smaller norm reductions, the same element-wise traffic).
// Hyperparameters are the public runs' (MLPerf's BERT: LAMB at lr 4e-4 (about), wd 0.01; its
// ResNet-50: LARS, momentum 0.9, eta 0.001, wd 5e-5 [T16]); they change values, not time.
core::TimePs optimizer_time(synapse::Session& s, std::uint64_t parameters, Optimizer optimizer,
                            ReplicaBarrier* barrier) {
  if (parameters > 0xffffffffull) {
    throw std::invalid_argument(
        fmt::format("a layer of {} parameters: at most 2^32 per layer", parameters));
  }
  const std::vector<std::uint32_t> shape{static_cast<std::uint32_t>(parameters)};
  const auto w = s.persistent("opt.w", Dtype::kF32, shape);
  const auto m = s.persistent("opt.m", Dtype::kF32, shape);
  const auto v = s.persistent("opt.v", Dtype::kF32, shape);
  const auto g = s.persistent("opt.g", Dtype::kBf16, shape);
  const auto weights = s.persistent("opt.weights", Dtype::kBf16, shape);
  const auto update = [&] {
    const auto g32 = s.temporary("opt.g32", Dtype::kF32, shape);
    tpc::KernelRequest up = workloads::request("cast", Dtype::kBf16, shape);
    up.to = Dtype::kF32;
    s.kernel("opt.cast_up", up, {g, g32});
    const std::map<std::string, double> adam_params = {{"lr", 1e-4},           {"beta1", 0.9},
                                                       {"beta2", 0.999},       {"eps", 1e-6},
                                                       {"weight_decay", 0.01}, {"step", 1}};
    switch (optimizer) {
      case Optimizer::kAdamW:
        s.kernel("opt.adam", workloads::request("adam", Dtype::kF32, shape, adam_params),
                 {w, g32, m, v});
        break;
      case Optimizer::kLamb:
        s.kernel("opt.lamb", workloads::request("lamb", Dtype::kF32, shape, adam_params),
                 {w, g32, m, v});
        break;
      case Optimizer::kLars:
        s.kernel("opt.lars",
                 workloads::request(
                     "lars", Dtype::kF32, shape,
                     {{"lr", 0.1}, {"momentum", 0.9}, {"weight_decay", 5e-5}, {"eta", 0.001}}),
                 {w, g32, m});
        break;
      case Optimizer::kSgd:
        s.kernel("opt.sgd",
                 workloads::request("sgd_momentum", Dtype::kF32, shape,
                                    {{"lr", 0.1}, {"momentum", 0.9}, {"weight_decay", 5e-5}}),
                 {w, g32, m});
        break;
    }
    tpc::KernelRequest down = workloads::request("cast", Dtype::kF32, shape);
    down.to = Dtype::kBf16;
    s.kernel("opt.cast_down", down, {w, weights});
    s.mark_step();
  };
  line_up(barrier);
  s.set_compile_only(true);  // compiles and uploads
  update();
  s.set_compile_only(false);
  return device_time(s, barrier, update);
}

LayerTiming measure_shape(synapse::Runtime& runtime, const LayerShape& shape, Optimizer optimizer,
                          ReplicaBarrier* barrier) {
  synapse::Session session(runtime, synapse::Mode::kLazy);
  LayerTiming t;
  if (shape.kind == LayerKind::kTransformer) {
    workloads::TransformerBlock layer(session, shape.transformer);
    t = time_passes(session, layer, barrier);
  } else if (shape.kind == LayerKind::kConv) {
    workloads::ConvUnitStep unit(session, shape.conv, false, shape.input_gradient);
    t = time_passes(session, unit, barrier);
  } else {
    workloads::LmHead head(session, shape.head);
    t = time_passes(session, head, barrier);
  }
  t.optimizer_ps = optimizer_time(session, shape.parameters(), optimizer, barrier);
  return t;
}

}  // namespace

StepProfile measure_profile(synapse::Runtime& runtime, const Model& model, const std::string& chip,
                            const std::function<void(int, int)>& progress,
                            ReplicaBarrier* barrier) {
  StepProfile p;
  p.chip = chip;
  p.optimizer = to_string(model.optimizer);
  synapse::Session(runtime, synapse::Mode::kLazy).warm_up();
  // Shapes that differ only in parameters without compute (tables) share the passes' timing;
  // the optimizer's is per parameter count.
  std::map<std::pair<std::string, std::uint64_t>, LayerTiming> measured;
  const int total = static_cast<int>(model.shapes.size());
  for (int i = 0; i < total; ++i) {
    const LayerShape& shape = model.shapes[static_cast<std::size_t>(i)];
    const auto key = std::make_pair(shape.key(), shape.parameters());
    auto it = measured.find(key);
    if (it == measured.end())
      it = measured.emplace(key, measure_shape(runtime, shape, model.optimizer, barrier)).first;
    p.keys.push_back(shape.key());
    p.shapes.push_back(it->second);
    if (progress) progress(i + 1, total);
  }
  return p;
}

void ReplicaBarrier::arrive_and_wait() {
  if (++arrived_ == replicas_) {
    arrived_ = 0;
    all_arrived_.notify(sc_core::SC_ZERO_TIME);
  }
  sc_core::wait(all_arrived_);
}

StepProfile slowest_replica(const std::vector<StepProfile>& replicas) {
  if (replicas.empty()) throw std::invalid_argument("no replicas' profiles");
  StepProfile p = replicas.front();
  for (const StepProfile& r : replicas) {
    if (r.keys != p.keys) throw std::invalid_argument("replicas measured different models");
    for (std::size_t s = 0; s < p.shapes.size(); ++s) {
      p.shapes[s].forward_ps = std::max(p.shapes[s].forward_ps, r.shapes[s].forward_ps);
      p.shapes[s].backward_ps = std::max(p.shapes[s].backward_ps, r.shapes[s].backward_ps);
      p.shapes[s].optimizer_ps = std::max(p.shapes[s].optimizer_ps, r.shapes[s].optimizer_ps);
    }
  }
  p.replicas = static_cast<int>(replicas.size());
  return p;
}

nlohmann::json StepProfile::to_json() const {
  nlohmann::json shapes_json = nlohmann::json::array();
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    shapes_json.push_back({{"shape", keys[i]},
                           {"forward_ps", shapes[i].forward_ps},
                           {"backward_ps", shapes[i].backward_ps},
                           {"optimizer_ps", shapes[i].optimizer_ps}});
  }
  return {
      {"chip", chip}, {"replicas", replicas}, {"optimizer", optimizer}, {"shapes", shapes_json}};
}

StepProfile StepProfile::from_json(const nlohmann::json& j, const std::string& where) {
  StepProfile p;
  try {
    p.chip = j.at("chip").get<std::string>();
    for (const auto& s : j.at("shapes")) {
      p.keys.push_back(s.at("shape").get<std::string>());
      LayerTiming t;
      t.forward_ps = s.at("forward_ps").get<core::TimePs>();
      t.backward_ps = s.at("backward_ps").get<core::TimePs>();
      t.optimizer_ps = s.at("optimizer_ps").get<core::TimePs>();
      p.shapes.push_back(t);
    }
    p.replicas = j.value("replicas", 1);
    p.optimizer = j.value("optimizer", std::string());
  } catch (const nlohmann::json::exception& e) {
    throw std::invalid_argument(fmt::format("{}: not a training profile: {}", where, e.what()));
  }
  return p;
}

void StepProfile::check_matches(const Model& model, const std::string& where) const {
  bool same = keys.size() == model.shapes.size();
  for (std::size_t i = 0; same && i < keys.size(); ++i) same = keys[i] == model.shapes[i].key();
  if (!same) {
    throw std::invalid_argument(fmt::format(
        "{}: the profile was measured for other layer shapes than {}'s (it has '{}'); measure "
        "it again for this model and batch",
        where, model.name, keys.empty() ? "" : keys.front()));
  }
  if (!optimizer.empty() && optimizer != to_string(model.optimizer)) {
    throw std::invalid_argument(
        fmt::format("{}: the profile's optimizer steps were measured with {}, not {} as asked; "
                    "measure it again, or pass --optimizer {}",
                    where, optimizer, to_string(model.optimizer), optimizer));
  }
}

}  // namespace podsim::training
