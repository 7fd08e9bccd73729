#include "training/timeline.h"

#include <fmt/format.h>

#include <stdexcept>

namespace podsim::training {

Timeline step_timeline(const Model& model, const std::vector<LayerTiming>& timing,
                       std::uint64_t gradient_bytes, int micro_batches) {
  if (timing.size() != model.shapes.size()) {
    throw std::invalid_argument(fmt::format("the profile has {} layer shapes, the model {}",
                                            timing.size(), model.shapes.size()));
  }
  if (micro_batches < 1) throw std::invalid_argument("at least one micro-batch per step");
  Timeline t;
  core::TimePs pass = 0;  // one micro-batch's forward and backward
  for (int s : model.layers) {
    const LayerTiming& l = timing[static_cast<std::size_t>(s)];
    t.forward_ps += l.forward_ps;
    t.optimizer_ps += l.optimizer_ps;
    pass += l.forward_ps + l.backward_ps;
  }
  t.micro_batches = micro_batches;
  t.accumulating_ps = static_cast<core::TimePs>(micro_batches - 1) * pass;
  t.forward_ps += t.accumulating_ps;
  core::TimePs at = t.forward_ps;
  for (auto i = model.layers.size(); i-- > 0;) {
    const auto s = static_cast<std::size_t>(model.layers[i]);
    at += timing[s].backward_ps;
    t.gradients.push_back({static_cast<int>(i), model.shapes[s].parameters() * gradient_bytes, at});
  }
  t.backward_ps = at;
  return t;
}

std::vector<Bucket> make_buckets(const std::vector<Gradient>& gradients, std::uint64_t cap_bytes) {
  std::vector<Bucket> buckets;
  for (const Gradient& g : gradients) {
    if (buckets.empty() || (cap_bytes != 0 && buckets.back().bytes + g.bytes > cap_bytes)) {
      buckets.emplace_back();
    }
    Bucket& b = buckets.back();
    b.bytes += g.bytes;
    b.ready_ps = g.ready_ps;
    b.layers.push_back(g.layer);
  }
  return buckets;
}

}  // namespace podsim::training
