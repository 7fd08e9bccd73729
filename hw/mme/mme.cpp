#include "hw/mme/mme.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "core/bulk_transfer.h"
#include "core/config_binding.h"
#include "core/kernel.h"
#include "hw/mme/mme_registers.h"
#include "hw/tpc/numerics.h"
#include "hw/tpc/vpu.h"
#include "podsim/spec/gaudi1.h"

namespace podsim::mme {
namespace {

float to_float(const std::uint8_t* element, Dtype t) {
  return tpc::float_of(tpc::element_to_scalar(element, t));
}

}  // namespace

// An operation as EXECUTE found it.
struct Mme::Job {
  MmeOperation op;
  std::uint64_t sync_address = 0;
  std::uint32_t sync_message = 0;
  core::TimePs at = 0;
};

// A block's results on their way out.
struct Mme::Results {
  Step step;
  std::vector<float> values;  // functional mode: (m - m0) * width + (n - n0)
};

Mme::Mme(sc_core::sc_module_name name, const MmeConfig& config, bool functional)
    : EngineShell(name, kRegisterSpan),
      config_(core::validate_config(config)),
      functional_(functional),
      cycle_(static_cast<core::TimePs>(config_.clock.period().ps)),
      stats_{
          core::StatsGroup(this->name())
              .counter("operations", "1", "operations run (failed ones included)"),
          core::StatsGroup(this->name())
              .counter("failed", "1", "operations stopped by a bad descriptor or access"),
          core::StatsGroup(this->name()).counter("busy_ps", "ps", "time operations ran"),
          core::StatsGroup(this->name()).counter("array_cycles", "1", "cycles the array computed"),
          core::StatsGroup(this->name())
              .counter("operand_stall_ps", "ps", "array waiting for operand panels"),
          core::StatsGroup(this->name())
              .counter("bytes_read", "B", "operand (and accumulated result) bytes read"),
          core::StatsGroup(this->name()).counter("bytes_written", "B", "result bytes written"),
          core::StatsGroup(this->name())
              .counter("flops", "1", "floating-point operations (2 per multiply-accumulate)")} {}

Mme::~Mme() = default;

std::uint32_t Mme::read_word(std::uint64_t offset) const {
  if (offset == PODSIM_GAUDI1_MME_DESC_STATUS_OFFSET) {
    return podsim_gaudi1_make_tpc_status(busy() ? 1u : 0u, error_ ? 1u : 0u);
  }
  return word(offset);
}

void Mme::write_word(std::uint64_t offset, std::uint32_t value, core::TimePs at) {
  if (offset == PODSIM_GAUDI1_MME_DESC_STATUS_OFFSET) return;  // read-only
  word(offset) = value;
  if (offset == PODSIM_GAUDI1_MME_DESC_EXECUTE_OFFSET && (value & 1)) {
    Job j = latch();
    j.at = at;
    queued_.push_back(std::move(j));
    queue_job(at);
  }
}

Mme::Job Mme::latch() const {
  OperationRegisters r = mme::latch(words());
  Job j;
  j.op = r.op;
  j.sync_address = r.sync_object;
  j.sync_message = r.sync_message;
  return j;
}

// ---------------------------------------------------------------- running an operation

void Mme::on_fire(std::uint32_t t) {
  const auto kind = static_cast<Tag>(t & 3);
  if ((t >> 2) != (generation_ & 0xFFFFF)) return;  // a failed operation's
  switch (kind) {
    case kStart:
      return;
    case kFetch:
      return fetch();
    case kWrite:
      return write_results();
    case kEnd:
      return finish();
  }
}

void Mme::start_job() {
  job_ = std::make_unique<Job>(std::move(queued_.front()));
  queued_.pop_front();
  ++generation_;
  start_ = compute_end_ = before_last_end_ = writes_done_ = core::now_ps();
  error_ = false;
  results_.clear();
  if (auto problem = job_->op.problem()) {
    raise(core::ErrorEvent::Kind::kMalformed, PODSIM_GAUDI1_MME_DESC_EXECUTE_OFFSET,
          fmt::format("{} rejected: {}", to_string(job_->op.op), *problem));
    return end(false);
  }
  if (auto problem = geometry_problem(config_, job_->op)) {
    raise(core::ErrorEvent::Kind::kMalformed, PODSIM_GAUDI1_MME_DESC_EXECUTE_OFFSET,
          fmt::format("{} rejected: {}", to_string(job_->op.op), *problem));
    return end(false);
  }
  view_ = std::make_unique<GemmView>(job_->op);
  steps_ = schedule(shaped(config_, job_->op), *view_, job_->op.in);
  next_ = 0;
  stats_.flops.add(static_cast<std::uint64_t>(
      2.0 * static_cast<double>(view_->batch()) *
      static_cast<double>(view_->m_end() - view_->m_begin()) *
      static_cast<double>(view_->n_end() - view_->n_begin()) * static_cast<double>(view_->k())));
  fetch();
}

bool Mme::read_panel(const std::vector<Run>& runs, std::uint64_t base, std::vector<float>& panel,
                     core::TimePs& ready) {
  const int elem = tpc::info(job_->op.in).bytes;
  for (const Run& r : runs) {
    const std::uint32_t bytes = r.count * static_cast<std::uint32_t>(elem);
    if (functional_) staging_.resize(bytes);
    core::TimePs done = 0;
    const std::uint64_t address = base + r.offset * static_cast<std::uint64_t>(elem);
    if (!transfer(tlm::TLM_READ_COMMAND, address, functional_ ? staging_.data() : nullptr, bytes,
                  done)) {
      raise(core::ErrorEvent::Kind::kAddressError, address,
            fmt::format("{}: operand read of {} bytes at {:#x} rejected", to_string(job_->op.op),
                        bytes, address));
      return false;
    }
    ready = std::max(ready, done);
    if (!functional_) continue;
    for (std::uint32_t i = 0; i < r.count; ++i) {
      panel[r.first + i * r.step] =
          to_float(staging_.data() + i * static_cast<std::uint32_t>(elem), job_->op.in);
    }
  }
  return true;
}

// Step next_'s operands go out now; its compute follows them and the step before it.
void Mme::fetch() {
  const Step& s = steps_[next_];
  const std::uint64_t kk = s.k1 - s.k0, rows = s.m1 - s.m0, cols = s.n1 - s.n0;
  if (functional_) {
    a_panel_.assign(rows * kk, 0.0f);
    b_panel_.assign(kk * cols, 0.0f);
  }
  core::TimePs ready = core::now_ps();
  if (!read_panel(a_runs(*view_, s.batch, s.m0, s.m1, s.k0, s.k1), job_->op.a, a_panel_, ready) ||
      !read_panel(b_runs(*view_, s.batch, s.k0, s.k1, s.n0, s.n1), job_->op.b, b_panel_, ready)) {
    return end(false);
  }
  const core::TimePs start = std::max(ready, compute_end_);
  if (next_ > 0) stats_.operand_stall_ps.add(start - compute_end_);
  before_last_end_ = compute_end_;
  compute_end_ = start + s.cycles * cycle_;
  stats_.array_cycles.add(s.cycles);
  if (functional_) compute(s);
  if (s.last_k) {
    results_.push_back(Results{s, functional_ ? acc_ : std::vector<float>{}});
    core::event_queue().schedule(compute_end_, *this, tag(kWrite));
  }
  if (++next_ < steps_.size()) {
    // The panel set the step before this one used is free once it has computed.
    core::event_queue().schedule(std::max(core::now_ps(), before_last_end_), *this, tag(kFetch));
  }
}

// The array's arithmetic: f32 products of the panels added in k order to the block's results.
void Mme::compute(const Step& s) {
  const std::uint64_t kk = s.k1 - s.k0, rows = s.m1 - s.m0, cols = s.n1 - s.n0;
  if (s.first_k) acc_.assign(rows * cols, 0.0f);
  for (std::uint64_t m = 0; m < rows; ++m) {
    float* out = acc_.data() + m * cols;
    for (std::uint64_t k = 0; k < kk; ++k) {
      const float a = a_panel_[m * kk + k];
      const float* b = b_panel_.data() + k * cols;
      for (std::uint64_t n = 0; n < cols; ++n) out[n] += a * b[n];
    }
  }
}

void Mme::write_results() {
  if (results_.empty()) return;
  Results r = std::move(results_.front());
  results_.pop_front();
  const Step& s = r.step;
  const Dtype out = job_->op.out;
  const int elem = tpc::info(out).bytes;
  for (const Run& run : c_runs(*view_, s.batch, s.m0, s.m1, s.n0, s.n1)) {
    const std::uint32_t bytes = run.count * static_cast<std::uint32_t>(elem);
    const std::uint64_t address = job_->op.c + run.offset * static_cast<std::uint64_t>(elem);
    if (functional_) staging_.assign(bytes, 0);
    core::TimePs done = 0;
    if (job_->op.accumulate && !transfer(tlm::TLM_READ_COMMAND, address,
                                         functional_ ? staging_.data() : nullptr, bytes, done)) {
      raise(core::ErrorEvent::Kind::kAddressError, address,
            fmt::format("result read at {:#x} rejected", address));
      return end(false);
    }
    for (std::uint32_t i = 0; functional_ && i < run.count; ++i) {
      std::uint8_t* element = staging_.data() + i * static_cast<std::uint32_t>(elem);
      const float previous = job_->op.accumulate ? to_float(element, out) : 0.0f;
      const float value = previous + r.values[run.first + i * run.step];
      tpc::scalar_to_element(tpc::bits_of(value), out, element);
    }
    if (!transfer(tlm::TLM_WRITE_COMMAND, address, functional_ ? staging_.data() : nullptr, bytes,
                  done)) {
      raise(core::ErrorEvent::Kind::kAddressError, address,
            fmt::format("{}: result write of {} bytes at {:#x} rejected", to_string(job_->op.op),
                        bytes, address));
      return end(false);
    }
    writes_done_ = std::max(writes_done_, done);
  }
  if (next_ == steps_.size() && results_.empty()) end(true);
}

void Mme::end(bool ok) {
  error_ = !ok;
  results_.clear();
  steps_.clear();
  const core::TimePs at =
      ok ? std::max({writes_done_, compute_end_, core::now_ps()}) : core::now_ps();
  core::TimePs done = at;
  if (ok && job_->sync_address != 0) {
    std::uint32_t message = job_->sync_message;
    if (!core::bulk_transfer(memory_socket, trans_, tlm::TLM_WRITE_COMMAND, job_->sync_address,
                             reinterpret_cast<std::uint8_t*>(&message), 4, at, done)) {
      raise(core::ErrorEvent::Kind::kAddressError, job_->sync_address,
            fmt::format("the operation's sync object at {:#x} could not be written",
                        job_->sync_address));
      error_ = true;
    }
  }
  stats_.operations.add();
  if (error_) stats_.failed.add();
  core::event_queue().schedule(std::max(done, core::now_ps()), *this, tag(kEnd));
}

void Mme::finish() {
  stats_.busy_ps.add(core::now_ps() - start_);
  account(to_string(job_->op.op), start_, core::now_ps(), [this] {
    return nlohmann::json{{"ok", !error_}};
  });
  job_.reset();
  view_.reset();
  job_done();
}

bool Mme::transfer(tlm::tlm_command command, std::uint64_t address, std::uint8_t* data,
                   std::uint32_t bytes, core::TimePs& done) {
  (command == tlm::TLM_READ_COMMAND ? stats_.bytes_read : stats_.bytes_written).add(bytes);
  return core::bulk_transfer(memory_socket, trans_, command, address, data, bytes, core::now_ps(),
                             done);
}

}  // namespace podsim::mme
