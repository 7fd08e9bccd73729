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
  bundles_ = 0;
  next_load_ = next_store_ = 0;
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
  const core::TimePs slot = consumed_[next_load_];
  bundle_front_ = std::max(bundle_front_, slot);
  if (++next_load_ == consumed_.size()) next_load_ = 0;
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
  // The bundle's loads are the ring's last bundle_loads_ entries, before next_load_.
  std::size_t slot = next_load_;
  for (int i = 0; i < bundle_loads_; ++i) {
    slot = slot == 0 ? consumed_.size() - 1 : slot - 1;
    consumed_[slot] = vector_;
  }
  vector_fixed_ = true;
  return vector_;
}

core::TimePs PipelineTimer::store_issue_time() {
  const core::TimePs at = vector_time();
  const core::TimePs slot = stores_[next_store_];
  if (slot > at) {
    store_stall_ += slot - at;
    vector_ = slot;
  }
  return vector_;
}

void PipelineTimer::store_done(core::TimePs done) {
  stores_[next_store_] = done;
  if (++next_store_ == stores_.size()) next_store_ = 0;
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
