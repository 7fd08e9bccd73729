#include "hw/tpc/pipeline_timer.h"

#include <algorithm>

namespace podsim::tpc {

PipelineTimer::PipelineTimer(const PipelineTiming& timing)
    : timing_(timing),
      consumed_(static_cast<std::size_t>(timing.load_queue), 0),
      stores_(static_cast<std::size_t>(timing.store_queue), 0) {}

void PipelineTimer::start(core::TimePs at) {
  // The first bundle issues at `at`: both pipes stand one cycle before it.
  front_ = vector_ = at - std::min(at, timing_.cycle);
  last_store_ = at;
  std::fill(consumed_.begin(), consumed_.end(), 0);
  std::fill(stores_.begin(), stores_.end(), 0);
  loads_ = store_count_ = bundles_ = 0;
  load_stall_ = store_stall_ = 0;
}

void PipelineTimer::begin_bundle() {
  front_fixed_ = vector_fixed_ = false;
  bundle_ready_ = 0;
  bundle_loads_ = 0;
}

core::TimePs PipelineTimer::load_issue_time() {
  if (!front_fixed_) {
    bundle_front_ = front_ + timing_.cycle;
    front_fixed_ = true;
  }
  // The queue holds load_queue loads between issue and use: this one waits for the oldest.
  const core::TimePs slot = consumed_[loads_ % consumed_.size()];
  bundle_front_ = std::max(bundle_front_, slot);
  ++loads_;
  ++bundle_loads_;
  return bundle_front_;
}

void PipelineTimer::load_data_at(core::TimePs ready) {
  bundle_ready_ = std::max(bundle_ready_, ready);
}

core::TimePs PipelineTimer::vector_time() {
  if (vector_fixed_) return vector_;
  if (!front_fixed_) bundle_front_ = front_ + timing_.cycle;
  front_ = bundle_front_;
  const core::TimePs in_order = std::max(vector_ + timing_.cycle, front_);
  vector_ = std::max(in_order, bundle_ready_);
  load_stall_ += vector_ - in_order;
  for (int i = 1; i <= bundle_loads_; ++i)
    consumed_[(loads_ - static_cast<std::uint64_t>(i)) % consumed_.size()] = vector_;
  vector_fixed_ = true;
  return vector_;
}

core::TimePs PipelineTimer::store_issue_time() {
  const core::TimePs at = vector_time();
  const core::TimePs slot = stores_[store_count_ % stores_.size()];
  if (slot > at) {
    store_stall_ += slot - at;
    vector_ = slot;
  }
  return vector_;
}

void PipelineTimer::store_done(core::TimePs done) {
  stores_[store_count_ % stores_.size()] = done;
  ++store_count_;
  last_store_ = std::max(last_store_, done);
}

void PipelineTimer::fence() {
  const core::TimePs at = vector_time();
  if (last_store_ > at) {
    store_stall_ += last_store_ - at;
    vector_ = last_store_;
  }
}

void PipelineTimer::end_bundle() {
  vector_time();
  ++bundles_;
}

void PipelineTimer::skip_bundles(std::uint64_t n) {
  // Without loads and stores both pipes advance a cycle a bundle.
  vector_ += n * timing_.cycle;
  front_ += n * timing_.cycle;
  bundles_ += n;
}

core::TimePs PipelineTimer::end_time() const {
  return std::max(vector_ + static_cast<core::TimePs>(timing_.drain) * timing_.cycle, last_store_);
}

}  // namespace podsim::tpc
