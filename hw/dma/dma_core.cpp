#include "hw/dma/dma_core.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "core/bulk_transfer.h"
#include "core/kernel.h"
#include "hw/dma/dma_descriptor.h"

namespace podsim::dma {

DmaCore::DmaCore(sc_core::sc_module_name name, const DmaConfig& config, bool functional)
    : EngineShell(name, regs::kBlockSize, false),
      config_(core::validate_config(config)),
      functional_(functional),
      window_(config_.outstanding, config_.bandwidth),
      bursts_(static_cast<std::size_t>(config_.outstanding)),
      stats_(make_stats()) {}

DmaCore::Stats DmaCore::make_stats() {
  core::StatsGroup g(name());
  return {g.counter("jobs", "1", "jobs done (failed ones included)"),
          g.counter("failed", "1", "jobs ended by a rejected access"),
          g.counter("bytes_read", "B", "bytes read (both sources of a reduction)"),
          g.counter("bytes_written", "B", "bytes written, completion writes aside"),
          g.counter("busy_ps", "ps", "time spent on jobs")};
}

void DmaCore::submit(const DmaJob& job, std::function<void(bool)> done) {
  check_job(job);
  enqueue({job, std::move(done), core::now_ps()});
}

void DmaCore::enqueue(Queued queued) {
  jobs_.push_back(std::move(queued));
  if (!busy()) begin_next();
}

void DmaCore::begin_next() {
  set_busy(!jobs_.empty());
  if (!busy()) return;
  current_ = std::move(jobs_.front());
  carries_data_ = functional_ || current_.job.src >= host_base_;
  jobs_.pop_front();
  failed_ = issue_pending_ = slot_wait_ = ending_ = false;
  DmaShape shape = current_.job.shape;
  // A memset reads nothing; walking it with the destination's strides keeps rows foldable.
  if (current_.job.kind == DmaKind::kMemset) shape.src_stride = shape.dst_stride;
  walker_.emplace(shape);
  job_start_ = std::max(core::now_ps(), current_.ready_at);
  window_.start(job_start_);
  schedule_issue();
}

void DmaCore::on_fire(std::uint32_t tag) {
  switch (tag) {
    case kIssue:
      issue_pending_ = false;
      if (failed_) return try_end();
      return issue_burst();
    case kEnd:
      return end_job();
    case kFinish:
      return finish();
    default:
      return write_burst(static_cast<int>(tag - kWrite));
  }
}

void DmaCore::schedule_issue() {
  const auto at = window_.earliest();
  if (!at) {
    slot_wait_ = true;
    return;
  }
  issue_pending_ = true;
  core::event_queue().schedule(std::max(*at, core::now_ps()), *this, kIssue);
}

// A burst's reads go out now; its write waits in the event queue until they have returned.
void DmaCore::issue_burst() {
  const int slot = window_.next_slot();
  Burst& burst = bursts_[static_cast<std::size_t>(slot)];
  burst.runs.clear();
  burst.stream_offset = walker_->position();
  burst.bytes = 0;
  const std::uint64_t size = config_.burst.bytes;
  while (burst.bytes < size && !walker_->done()) {
    burst.runs.push_back(walker_->next(size - burst.bytes));
    burst.bytes += burst.runs.back().bytes;
  }
  const core::TimePs now = core::now_ps();
  core::TimePs ready = now;
  if (!read_burst(burst, ready)) return try_end();
  window_.issue(now, burst.bytes);
  core::event_queue().schedule(ready, *this, kWrite + static_cast<std::uint32_t>(slot));
  if (!walker_->done()) schedule_issue();
}

std::uint8_t* DmaCore::payload(std::vector<std::uint8_t>& buffer, std::uint64_t offset) const {
  if (!carries_data_) return nullptr;
  if (buffer.size() < config_.burst.bytes) buffer.resize(config_.burst.bytes);
  return buffer.data() + offset;
}

bool DmaCore::read_burst(Burst& burst, core::TimePs& ready) {
  const DmaJob& job = current_.job;
  if (job.kind == DmaKind::kMemset) {
    fill_pattern(burst);
    return true;
  }
  const bool reduce = job.kind == DmaKind::kReduce;
  for (const Segment& run : burst.runs) {
    const std::uint64_t at = run.stream_offset - burst.stream_offset;
    core::TimePs done = 0;
    if (!access(tlm::TLM_READ_COMMAND, job.src + run.src_offset, payload(burst.data, at), run.bytes,
                done)) {
      return false;
    }
    ready = std::max(ready, done);
    if (!reduce) continue;
    if (!access(tlm::TLM_READ_COMMAND, job.src2 + run.src_offset, payload(burst.data2, at),
                run.bytes, done)) {
      return false;
    }
    ready = std::max(ready, done);
  }
  if (reduce && carries_data_) {
    core::reduce_into(job.type, job.op, burst.data.data(), burst.data2.data(),
                      burst.bytes / core::size_of(job.type));
  }
  stats_.bytes_read.add(reduce ? 2 * burst.bytes : burst.bytes);
  return true;
}

// Byte p of the job's stream is byte p mod 8 of the 64-bit value, least significant first.
void DmaCore::fill_pattern(Burst& burst) const {
  if (!functional_) return;
  std::uint8_t* out = payload(burst.data, 0);
  const std::uint64_t pattern = current_.job.src;
  for (std::uint64_t i = 0; i < burst.bytes; ++i) {
    out[i] = static_cast<std::uint8_t>(pattern >> (8 * ((burst.stream_offset + i) % 8)));
  }
}

void DmaCore::write_burst(int slot) {
  Burst& burst = bursts_[static_cast<std::size_t>(slot)];
  const core::TimePs now = core::now_ps();
  core::TimePs written = now;
  bool ok = !failed_;
  for (auto run = burst.runs.begin(); ok && run != burst.runs.end(); ++run) {
    core::TimePs done = 0;
    ok = access(tlm::TLM_WRITE_COMMAND, current_.job.dst + run->dst_offset,
                payload(burst.data, run->stream_offset - burst.stream_offset), run->bytes, done);
    written = std::max(written, done);
  }
  window_.written(slot, written);
  if (ok) stats_.bytes_written.add(burst.bytes);
  if (ok && slot_wait_) {
    slot_wait_ = false;
    schedule_issue();
  }
  try_end();
}

// The job ends once nothing is left to issue and every write has gone out: at once after a
// failure (in-flight bursts drain without writing), through the completion write otherwise.
void DmaCore::try_end() {
  if (ending_ || issue_pending_ || window_.reading() > 0) return;
  if (!failed_ && !walker_->done()) return;
  ending_ = true;
  core::event_queue().schedule(std::max(core::now_ps(), window_.last_done()), *this,
                               failed_ ? kFinish : kEnd);
}

void DmaCore::end_job() {
  const DmaCompletion& completion = current_.job.completion;
  if (!completion.enabled) return finish();
  // The value always travels, even in timing-only mode: it may land in a sync object.
  std::uint8_t value[4];
  for (int i = 0; i < 4; ++i) value[i] = static_cast<std::uint8_t>(completion.value >> (8 * i));
  core::TimePs done = 0;
  if (!access(tlm::TLM_WRITE_COMMAND, completion.address, value, sizeof value, done)) {
    return finish();
  }
  core::event_queue().schedule(done, *this, kFinish);
}

void DmaCore::finish() {
  stats_.jobs.add();
  if (failed_) stats_.failed.add();
  stats_.busy_ps.add(core::now_ps() - job_start_);
  trace_job(job_start_);
  // The engine stays busy while `done` runs, so a job it submits queues behind the others.
  const auto done = std::move(current_.done);
  if (done) done(!failed_);
  begin_next();
}

bool DmaCore::access(tlm::tlm_command command, std::uint64_t address, std::uint8_t* data,
                     std::uint64_t bytes, core::TimePs& done) {
  if (core::bulk_transfer(memory_socket, trans_, command, address, data,
                          static_cast<std::uint32_t>(bytes), core::now_ps(), done)) {
    return true;
  }
  const bool address_error = trans_.get_response_status() == tlm::TLM_ADDRESS_ERROR_RESPONSE;
  fail(address_error ? core::ErrorEvent::Kind::kAddressError : core::ErrorEvent::Kind::kMalformed,
       address,
       fmt::format("{} job: {} of {} bytes at {:#x} rejected ({})", to_string(current_.job.kind),
                   command == tlm::TLM_READ_COMMAND ? "read" : "write", bytes, address,
                   trans_.get_response_string()));
  return false;
}

void DmaCore::fail(core::ErrorEvent::Kind kind, std::uint64_t address, std::string detail) {
  failed_ = true;
  report(kind, address, std::move(detail));
}

void DmaCore::report(core::ErrorEvent::Kind kind, std::uint64_t address, std::string detail) {
  raise(kind, address, std::move(detail));
}

void DmaCore::trace_job(core::TimePs start) {
  account(to_string(current_.job.kind), start, core::now_ps(), [this] {
    return nlohmann::json{{"bytes", current_.job.shape.total_bytes()}, {"ok", !failed_}};
  });
}

std::uint32_t DmaCore::status_word() const {
  return podsim_gaudi1_make_dma_sts0(static_cast<std::uint32_t>(window_.reading()),
                                     static_cast<std::uint32_t>(window_.writing(core::now_ps())),
                                     busy() ? 1u : 0u);
}

// Registers are 32 bits wide; an access may cover several consecutive ones (WREG_BULK's pairs),
// applied in address order, so a COMMIT in it sees the registers written before it.
bool DmaCore::mapped(std::uint64_t offset) const { return DmaRegisters::is_register(offset); }

std::uint32_t DmaCore::read_word(std::uint64_t offset) const {
  return offset == PODSIM_GAUDI1_DMA_CORE_STS0_OFFSET ? status_word() : registers_.read(offset);
}

void DmaCore::write_word(std::uint64_t offset, std::uint32_t value, core::TimePs at) {
  if (offset == regs::kExtDescPost) {
    post_descriptor(value, at);
  } else if (registers_.write(offset, value)) {
    commit(at);
  }
}

void DmaCore::commit(core::TimePs at) {
  std::string problem;
  auto job = registers_.take_commit(problem);
  if (!job) {
    return report(core::ErrorEvent::Kind::kMalformed, PODSIM_GAUDI1_DMA_CORE_COMMIT_OFFSET,
                  "COMMIT rejected: " + problem);
  }
  enqueue({*job, nullptr, at});
}

void DmaCore::post_descriptor(std::uint32_t index, core::TimePs at) {
  const std::uint64_t base = static_cast<std::uint64_t>(registers_.read(regs::kExtDescBaseHi))
                                 << 32 |
                             registers_.read(regs::kExtDescBaseLo);
  const std::uint64_t address = base + kDescriptorBytes * index;
  std::uint8_t bytes[kDescriptorBytes] = {};
  tlm::tlm_generic_payload fetch;
  core::TimePs ready = 0;
  if (!core::bulk_transfer(memory_socket, fetch, tlm::TLM_READ_COMMAND, address, bytes,
                           kDescriptorBytes, at, ready)) {
    return report(core::ErrorEvent::Kind::kAddressError, address,
                  fmt::format("descriptor {} at {:#x} could not be read ({})", index, address,
                              fetch.get_response_string()));
  }
  std::string problem;
  const auto writes = decode_descriptor(bytes, problem);
  DmaRegisters file;
  bool committed = false;
  for (std::size_t i = 0; writes && i < writes->size() && !committed; ++i) {
    const auto [offset, value] = (*writes)[i];
    committed = offset != regs::kExtDescPost && file.write(offset, value);
  }
  std::optional<DmaJob> job;
  if (writes && !committed) problem = "descriptor does not end in a COMMIT";
  if (committed) job = file.take_commit(problem);
  if (!job) {
    return report(core::ErrorEvent::Kind::kMalformed, address,
                  fmt::format("descriptor {} at {:#x} rejected: {}", index, address, problem));
  }
  enqueue({*job, nullptr, ready});
}

}  // namespace podsim::dma
