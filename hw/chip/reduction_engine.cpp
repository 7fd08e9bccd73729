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
}

ReductionEngine::Stats ReductionEngine::make_stats() {
  core::StatsGroup g(name());
  return {g.counter("jobs", "1", "reductions and copies done"),
          g.counter("bytes", "B", "bytes of results written"),
          g.counter("busy_ps", "ps", "time spent on jobs")};
}

void ReductionEngine::submit(const Job& job, std::function<void(bool)> done) {
  jobs_.push_back({job, std::move(done)});
  if (!busy_) begin_next();
}

// A job's first memory access waits out the start latency; its tiles follow one another.
void ReductionEngine::begin_next() {
  busy_ = !jobs_.empty();
  if (!busy_) return;
  current_ = std::move(jobs_.front());
  jobs_.pop_front();
  offset_ = 0;
  job_start_ = core::now_ps();
  core::event_queue().schedule(job_start_ + static_cast<core::TimePs>(config_.latency.ps), *this,
                               0);
}

void ReductionEngine::fire(std::uint32_t /*tag*/) {
  const Job& job = current_.job;
  const std::uint64_t bytes = job.count * core::size_of(job.type);
  if (offset_ >= bytes) return finish(true);  // the last tile's write has drained
  const auto n = static_cast<std::uint32_t>(std::min(config_.tile.bytes, bytes - offset_));
  core::TimePs next = 0;
  if (!tile(job, offset_, n, next)) return finish(false);
  offset_ += n;
  core::event_queue().schedule(next, *this, 0);
}

void ReductionEngine::finish(bool ok) {
  if (ok) stats_.bytes.add(offset_);
  stats_.jobs.add();
  stats_.busy_ps.add(core::now_ps() - job_start_);
  trace_job(current_.job, job_start_);
  // The engine stays busy while `done` runs, so a job it submits queues behind the others.
  const auto done = std::move(current_.done);
  if (done) done(ok);
  begin_next();
}

void ReductionEngine::trace_job(const Job& job, core::TimePs start) {
  core::TraceWriter& trace = core::trace_writer();
  if (!trace.enabled()) return;
  if (track_.tid == 0) track_ = trace.track(name());
  trace.span(track_, job.kind == Job::Kind::kCopy ? "copy" : "reduce", start, core::now_ps(),
             {{"bytes", job.count * core::size_of(job.type)}});
}

// One tile: operands read as soon as the engine gets to it, the combine at the compute rate
// overlapping the reads of a steady stream, then the write; the engine moves on when the tile's
// inputs are in and combined, and the write drains behind it.
bool ReductionEngine::tile(const Job& job, std::uint64_t offset, std::uint32_t bytes,
                           core::TimePs& next) {
  const core::TimePs start = core::now_ps();
  std::uint8_t* a = functional_ ? a_.data() : nullptr;
  std::uint8_t* b = functional_ ? b_.data() : nullptr;
  core::TimePs read_a = start, read_b = start, written = start;
  if (!core::bulk_transfer(memory_socket, trans_, tlm::TLM_READ_COMMAND, job.a + offset, a, bytes,
                           start, read_a)) {
    return false;
  }
  const bool reduce = job.kind == Job::Kind::kReduce;
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
  next = last ? written : combined;
  return true;
}

}  // namespace podsim::chip
