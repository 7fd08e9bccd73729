// What the chip's engines (DMA, MME, TPC) share, written once. An engine is a block of the chip
// with a register socket its QMAN (or the host) writes and a memory socket onto the NoC. The
// shell owns both sockets; the register block behind the first (its words, or the engine's own
// decoding of them) with the one answer a bad access gets (core/register_access.h: the response,
// and an error event from this block); the side band a QMAN watches the engine by (busy, when
// idle); the queue of jobs an EXECUTE write latched, each started at the later of its latch time
// and the end of the job before; the error events the engine raises; and each job's account: its
// trace span and the first start and last end of the engine's work (what a caller measures an
// engine's part of a run by).
// Captures: the above. Ignores: what an engine does with a job (the engines' own models), and
// time inside the register block (an access costs the initiator's delay only).
#pragma once

#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include <cstdint>
#include <deque>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <systemc>
#include <vector>

#include "core/engine_status.h"
#include "core/error_event.h"
#include "core/event_queue.h"
#include "core/trace.h"

namespace podsim::engine {

class EngineShell : public sc_core::sc_module, public core::EngineStatus, protected core::Timed {
 public:
  // Operands, results, binaries and sync objects: absolute chip addresses through the NoC.
  tlm_utils::simple_initiator_socket<EngineShell> memory_socket;
  // The registers, at offsets from the block's base.
  tlm_utils::simple_target_socket<EngineShell> register_socket;

  ~EngineShell() override;

  bool busy() const override { return busy_; }
  void when_idle(std::function<void()> then) override;
  void set_error_sink(core::ErrorSink sink) { error_sink_ = std::move(sink); }
  // The register at `offset` as software reads it.
  std::uint32_t read_register(std::uint64_t offset) const { return read_word(offset); }
  std::uint64_t register_span() const { return span_; }

  // When the engine's first job started and when its last one ended, since construction (both 0
  // before any): the span of its part of a run.
  core::TimePs first_start() const { return first_start_; }
  core::TimePs last_end() const { return last_end_; }
  std::uint64_t jobs_ended() const { return jobs_ended_; }

 protected:
  // `register_span`: bytes of address space the register block covers. With `plain_words` the
  // shell keeps that many bytes of words, all zero, for an engine that keeps its registers as
  // plain words; without, the engine decodes them itself (mapped, read_word and write_word).
  EngineShell(sc_core::sc_module_name name, std::uint64_t register_span, bool plain_words = true);

  // The register block: which words are registers, what a word reads, what writing one does at
  // `at` (the access's time). Bad accesses never reach read_word or write_word. By default every
  // word of the span is a plain register.
  virtual bool mapped(std::uint64_t offset) const { return offset < span_; }
  virtual std::uint32_t read_word(std::uint64_t offset) const { return words_[offset / 4]; }
  virtual void write_word(std::uint64_t offset, std::uint32_t value, core::TimePs at);
  std::uint32_t word(std::uint64_t offset) const { return words_[offset / 4]; }
  std::uint32_t& word(std::uint64_t offset) { return words_[offset / 4]; }
  const std::vector<std::uint32_t>& words() const { return words_; }

  // Jobs: queue_job(at) once the engine's own job is latched; start_job() runs when its turn
  // comes; job_done() when the engine is free for the next. Engines that queue work their own way
  // set busy with set_busy().
  void queue_job(core::TimePs at);
  virtual void start_job() {}
  void job_done();
  void set_busy(bool busy);

  // A job's account: a trace span from `start` to `end` named `name` with `args` (a JSON object,
  // built only while a trace is open: `trace_args` is called then), and the engine's activity.
  void account(std::string_view name, core::TimePs start, core::TimePs end,
               const std::function<nlohmann::json()>& trace_args = {});

  // An error event from this block.
  void raise(core::ErrorEvent::Kind kind, std::uint64_t address, std::string detail);

  // The engine's own callbacks: tags below kShellTags (the event queue's tags have 24 bits).
  static constexpr std::uint32_t kShellTags = 1u << 23;
  virtual void on_fire(std::uint32_t tag) = 0;

 private:
  void register_access(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay);
  void fire(std::uint32_t tag) final;

  std::uint64_t span_;
  std::vector<std::uint32_t> words_;
  std::deque<core::TimePs> starts_;  // queued jobs' latch times, in order
  bool busy_ = false;
  core::IdleWaiters idle_waiters_;
  core::ErrorSink error_sink_;
  core::TimePs first_start_ = 0, last_end_ = 0;
  std::uint64_t jobs_ended_ = 0;
  core::TrackId track_{};
};

}  // namespace podsim::engine
