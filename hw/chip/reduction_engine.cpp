#include "hw/chip/reduction_engine.h"

#include <algorithm>

#include "hw/core/bulk_transfer.h"
#include "hw/core/kernel.h"
#include "hw/core/trace.h"

namespace podsim::chip {

void ReductionEngineConfig::check(core::ConfigChecks& c) const {
  if (tile.bytes % 4 != 0) c.fail("tile", "must be a multiple of 4 bytes (whole elements)");
}

ReductionEngine::ReductionEngine(sc_core::sc_module_name name, const ReductionEngineConfig& config,
                                 bool functional)
    : sc_module(name),
      memory_socket("memory_socket"),
      config_(config),
      functional_(functional),
      stats_(make_stats()) {
  core::validate_config(config_);
  if (functional_) {
    a_.resize(config_.tile.bytes);
    b_.resize(config_.tile.bytes);
  }
  SC_THREAD(run);
}

ReductionEngine::Stats ReductionEngine::make_stats() {
  core::StatsGroup g(name());
  return {g.counter("jobs", "1", "reductions and copies done"),
          g.counter("bytes", "B", "bytes of results written"),
          g.counter("busy_ps", "ps", "time spent on jobs")};
}

void ReductionEngine::submit(const ReductionJob& job, std::function<void(bool)> done) {
  jobs_.push_back({job, std::move(done)});
  job_event_.notify(sc_core::SC_ZERO_TIME);
}

void ReductionEngine::run() {
  while (true) {
    while (jobs_.empty()) wait(job_event_);
    const Queued q = std::move(jobs_.front());
    jobs_.pop_front();
    const core::TimePs start = core::now_ps();
    const bool ok = process(q.job);
    stats_.jobs.add();
    stats_.busy_ps.add(core::now_ps() - start);
    trace_job(q.job, start);
    if (q.done) q.done(ok);
  }
}

void ReductionEngine::trace_job(const ReductionJob& job, core::TimePs start) {
  core::TraceWriter& trace = core::trace_writer();
  if (!trace.enabled()) return;
  if (track_.tid == 0) track_ = trace.track(name());
  trace.span(track_, job.kind == ReductionJob::Kind::kCopy ? "copy" : "reduce", start,
             core::now_ps(), {{"bytes", job.count * core::size_of(job.type)}});
}

bool ReductionEngine::process(const ReductionJob& job) {
  wait(core::to_sc_time(config_.latency));
  const std::uint64_t bytes = job.count * core::size_of(job.type);
  for (std::uint64_t offset = 0; offset < bytes; offset += config_.tile.bytes) {
    const auto n = static_cast<std::uint32_t>(std::min(config_.tile.bytes, bytes - offset));
    if (!tile(job, offset, n)) return false;
  }
  stats_.bytes.add(bytes);
  return true;
}

// One tile: operands read as soon as the engine gets to it, the combine at the compute rate
// overlapping the reads of a steady stream, then the write; the engine moves on when the tile's
// inputs are in and combined, and the write drains behind it.
bool ReductionEngine::tile(const ReductionJob& job, std::uint64_t offset, std::uint32_t bytes) {
  const core::TimePs start = core::now_ps();
  std::uint8_t* a = functional_ ? a_.data() : nullptr;
  std::uint8_t* b = functional_ ? b_.data() : nullptr;
  core::TimePs read_a = start, read_b = start, written = start;
  if (!core::bulk_transfer(memory_socket, trans_, tlm::TLM_READ_COMMAND, job.a + offset, a, bytes,
                           start, read_a)) {
    return false;
  }
  const bool reduce = job.kind == ReductionJob::Kind::kReduce;
  if (reduce && !core::bulk_transfer(memory_socket, trans_, tlm::TLM_READ_COMMAND, job.b + offset,
                                     b, bytes, start, read_b)) {
    return false;
  }
  if (reduce && functional_) {
    core::reduce_into(job.type, job.op, a, b, bytes / core::size_of(job.type));
  }
  const auto compute = static_cast<core::TimePs>(config_.throughput.time_for(bytes).ps);
  const core::TimePs combined = std::max({read_a, read_b, start + compute});
  if (!core::bulk_transfer(memory_socket, trans_, tlm::TLM_WRITE_COMMAND, job.dst + offset, a,
                           bytes, combined, written)) {
    return false;
  }
  const bool last = offset + bytes >= job.count * core::size_of(job.type);
  wait(sc_core::sc_time::from_value((last ? written : combined) - start));
  return true;
}

}  // namespace podsim::chip
