#include "training/data_parallel.h"

#include <fmt/format.h>

#include <algorithm>

#include "hw/core/kernel.h"
#include "hw/core/trace.h"

namespace podsim::training {

DataParallelRun::DataParallelRun(sc_core::sc_module_name name, collectives::Communicator& comm,
                                 Timeline timeline, DataParallelOptions options)
    : sc_module(name),
      comm_(comm),
      timeline_(std::move(timeline)),
      options_(options),
      buckets_(make_buckets(timeline_.gradients, options_.bucket_bytes)) {
  SC_THREAD(run);
}

void DataParallelRun::run() {
  try {
    if (!options_.ideal_network) comm_.open();
    for (int i = 0; i < options_.steps; ++i) steps_.push_back(step(i == 0));
  } catch (const std::exception& e) {
    failure_ = e.what();
  }
}

void DataParallelRun::wait_until(core::TimePs t) {
  const core::TimePs now = core::now_ps();
  if (t > now) sc_core::wait(sc_core::sc_time::from_value(t - now));
}

StepResult DataParallelRun::step(bool first) {
  StepResult r;
  r.start_ps = core::now_ps();
  if (first && !options_.ideal_network) r.broadcast_ps = broadcast();
  const core::TimePs compute_start = core::now_ps();
  trace_compute(compute_start);
  for (const Bucket& b : buckets_) {
    wait_until(compute_start + (options_.overlap ? b.ready_ps : timeline_.backward_ps));
    if (!options_.ideal_network) r.comm_ps += collective(collectives::Op::kAllReduce, b.bytes);
    ++r.buckets;
  }
  wait_until(compute_start + timeline_.backward_ps);
  const core::TimePs optimizer_start = core::now_ps();
  sc_core::wait(sc_core::sc_time::from_value(timeline_.optimizer_ps));
  r.end_ps = core::now_ps();
  trace_span("optimizer", optimizer_start, r.end_ps);
  return r;
}

core::TimePs DataParallelRun::broadcast() {
  const core::TimePs start = core::now_ps();
  const std::uint64_t total = options_.parameters * options_.parameter_bytes;
  for (std::uint64_t sent = 0; sent < total; sent += kBroadcastBucket) {
    collective(collectives::Op::kBroadcast, std::min(kBroadcastBucket, total - sent));
  }
  return core::now_ps() - start;
}

core::TimePs DataParallelRun::collective(collectives::Op op, std::uint64_t bytes) {
  collectives::Spec spec;
  spec.op = op;
  spec.type = options_.gradient_bytes == 4 ? core::DataType::kFp32 : core::DataType::kBf16;
  if (op == collectives::Op::kBroadcast) {
    spec.type = options_.parameter_bytes == 4 ? core::DataType::kFp32 : core::DataType::kBf16;
  }
  const std::uint64_t element = core::size_of(spec.type);
  // Operations that split over the ranks take whole elements per rank: padded up, as HCCL pads.
  const auto ranks = static_cast<std::uint64_t>(comm_.size());
  std::uint64_t count = std::max<std::uint64_t>(1, (bytes + element - 1) / element);
  if (op != collectives::Op::kAllReduce) count = (count + ranks - 1) / ranks * ranks;
  spec.count = count;
  spec.base = options_.base;
  const core::TimePs start = core::now_ps();
  auto handle = comm_.start(spec);
  handle->wait_done();
  if (!handle->ok) {
    throw std::runtime_error(
        fmt::format("a {} of {} bytes failed", collectives::to_string(op), bytes));
  }
  return core::now_ps() - start;
}

core::TrackId DataParallelRun::track(int rank) const {
  return core::trace_writer().track(
      fmt::format("{}.training", comm_.model().chip(comm_.chip(rank)).name()));
}

void DataParallelRun::trace_span(const char* name, core::TimePs start, core::TimePs end) const {
  if (!core::trace_writer().enabled()) return;
  for (int r = 0; r < comm_.size(); ++r) core::trace_writer().span(track(r), name, start, end);
}

// Every replica's compute on its chip's "training" row: the passes and the buckets' ready times.
void DataParallelRun::trace_compute(core::TimePs start) const {
  core::TraceWriter& trace = core::trace_writer();
  if (!trace.enabled()) return;
  trace_span("forward", start, start + timeline_.forward_ps);
  trace_span("backward", start + timeline_.forward_ps, start + timeline_.backward_ps);
  for (int r = 0; r < comm_.size(); ++r) {
    for (std::size_t b = 0; b < buckets_.size(); ++b) {
      trace.instant(track(r), fmt::format("bucket {} ready ({} bytes)", b, buckets_[b].bytes),
                    start + (options_.overlap ? buckets_[b].ready_ps : timeline_.backward_ps));
    }
  }
}

}  // namespace podsim::training
