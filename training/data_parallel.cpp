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
  if (first && options_.broadcast && !options_.ideal_network) r.broadcast_ps = broadcast();
  const core::TimePs compute_start = core::now_ps();
  trace_compute(compute_start);
  if (options_.strategy == Strategy::kHorovod) {
    reduce_fused(compute_start, r);
  } else {
    reduce_buckets(compute_start, r);
  }
  wait_until(compute_start + timeline_.backward_ps);
  const core::TimePs optimizer_start = core::now_ps();
  sc_core::wait(sc_core::sc_time::from_value(timeline_.optimizer_ps));
  r.end_ps = core::now_ps();
  trace_span("optimizer", optimizer_start, r.end_ps);
  return r;
}

// When a gradient is handed to the strategy: as it is ready, or at the backward pass's end.
core::TimePs DataParallelRun::handed_ps(core::TimePs ready_ps) const {
  return options_.overlap ? ready_ps : timeline_.backward_ps;
}

void DataParallelRun::all_reduce(std::uint64_t bytes, StepResult& r) {
  if (!options_.ideal_network) r.comm_ps += collective(collectives::Op::kAllReduce, bytes);
  ++r.all_reduces;
}

// hccl: each bucket's all-reduce as soon as it is ready, one after another.
void DataParallelRun::reduce_buckets(core::TimePs compute_start, StepResult& r) {
  for (const Bucket& b : buckets_) {
    wait_until(compute_start + handed_ps(b.ready_ps));
    all_reduce(b.bytes, r);
  }
}

// horovod: a background loop that wakes once per cycle, takes the gradients handed to it since
// the last cycle and all-reduces them fused into buffers of at most the fusion threshold; a
// cycle starts a cycle time after the one before, or when the one before is done if it took
// longer (Horovod's RunLoopOnce) [T3].
void DataParallelRun::reduce_fused(core::TimePs compute_start, StepResult& r) {
  const std::vector<Gradient>& g = timeline_.gradients;
  std::size_t next = 0;
  core::TimePs cycle_start = compute_start;
  while (next < g.size()) {
    wait_until(cycle_start + options_.cycle_ps);
    cycle_start = core::now_ps();
    std::size_t end = next;
    while (end < g.size() && compute_start + handed_ps(g[end].ready_ps) <= cycle_start) ++end;
    if (end == next) continue;
    trace_instant(fmt::format("fusion cycle {}: {} tensors", r.cycles, end - next), cycle_start);
    ++r.cycles;
    for (std::size_t i = next; i < end;) {
      std::uint64_t bytes = 0;
      for (; i < end && (bytes == 0 || bytes + g[i].bytes <= options_.fusion_bytes); ++i) {
        bytes += g[i].bytes;
      }
      all_reduce(bytes, r);
    }
    next = end;
  }
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
  // Horovod reduces with its ring all-reduce, HCCL picks by its tuning table; the broadcast is a
  // ring (a chain from rank 0) either way.
  if (op == collectives::Op::kBroadcast ||
      (op == collectives::Op::kAllReduce && options_.strategy == Strategy::kHorovod)) {
    spec.algorithm = collectives::Algorithm::kRing;
  }
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

void DataParallelRun::trace_instant(const std::string& name, core::TimePs at) const {
  if (!core::trace_writer().enabled()) return;
  for (int r = 0; r < comm_.size(); ++r) core::trace_writer().instant(track(r), name, at);
}

// Every replica's compute on its chip's "training" row: the passes and the buckets' ready times.
void DataParallelRun::trace_compute(core::TimePs start) const {
  core::TraceWriter& trace = core::trace_writer();
  if (!trace.enabled()) return;
  const core::TimePs pass =
      timeline_.micro_batches > 1 ? timeline_.accumulating_ps / (timeline_.micro_batches - 1) : 0;
  for (int m = 0; m + 1 < timeline_.micro_batches; ++m) {
    trace_span(fmt::format("micro-batch {} (accumulating)", m).c_str(), start + m * pass,
               start + (m + 1) * pass);
  }
  trace_span("forward", start + timeline_.accumulating_ps, start + timeline_.forward_ps);
  trace_span("backward", start + timeline_.forward_ps, start + timeline_.backward_ps);
  if (options_.strategy != Strategy::kHccl) return;
  for (std::size_t b = 0; b < buckets_.size(); ++b) {
    trace_instant(fmt::format("bucket {} ready ({} bytes)", b, buckets_[b].bytes),
                  start + handed_ps(buckets_[b].ready_ps));
  }
}

}  // namespace podsim::training
