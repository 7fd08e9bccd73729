#include "hw/engine/engine_shell.h"

#include <algorithm>

#include "core/kernel.h"
#include "core/register_access.h"

namespace podsim::engine {
EngineShell::EngineShell(sc_core::sc_module_name name, std::uint64_t register_span,
                         bool plain_words)
    : sc_module(name),
      memory_socket("memory_socket"),
      register_socket("register_socket"),
      span_(register_span),
      words_(plain_words ? register_span / 4 : 0, 0) {
  register_socket.register_b_transport(this, &EngineShell::register_access);
  core::event_queue();  // made during elaboration, not at the first job
}

EngineShell::~EngineShell() = default;

void EngineShell::when_idle(std::function<void()> then) {
  idle_waiters_.add(busy_, std::move(then));
}

void EngineShell::write_word(std::uint64_t offset, std::uint32_t value, core::TimePs /*at*/) {
  words_[offset / 4] = value;
}

void EngineShell::register_access(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay) {
  const core::TimePs at = core::now_ps() + delay.value();
  const auto bad = core::serve_register_words(
      trans, [this](std::uint64_t offset) { return mapped(offset); },
      [this](std::uint64_t offset) { return read_word(offset); },
      [this, at](std::uint64_t offset, std::uint32_t value) { write_word(offset, value, at); });
  if (bad && error_sink_)
    error_sink_(core::bad_register_event(name(), trans.get_address(), *bad, at));
}

void EngineShell::queue_job(core::TimePs at) {
  starts_.push_back(at);
  if (busy_) return;
  busy_ = true;
  core::event_queue().schedule(std::max(starts_.front(), core::now_ps()), *this, kShellTags);
}

void EngineShell::job_done() {
  if (!starts_.empty()) {
    core::event_queue().schedule(std::max(starts_.front(), core::now_ps()), *this, kShellTags);
    return;
  }
  set_busy(false);
}

void EngineShell::set_busy(bool busy) {
  busy_ = busy;
  if (!busy_) idle_waiters_.run(busy_);
}

void EngineShell::fire(std::uint32_t tag) {
  if (tag != kShellTags) return on_fire(tag);
  starts_.pop_front();
  start_job();
}

void EngineShell::account(std::string_view name, core::TimePs start, core::TimePs end,
                          const std::function<nlohmann::json()>& trace_args) {
  if (jobs_ended_++ == 0) first_start_ = start;
  first_start_ = std::min(first_start_, start);
  last_end_ = std::max(last_end_, end);
  core::TraceWriter& trace = core::trace_writer();
  if (!trace.enabled()) return;
  if (track_.tid == 0) track_ = trace.track(this->name());
  if (trace_args) {
    trace.span(track_, name, start, end, trace_args());
  } else {
    trace.span(track_, name, start, end);
  }
}

void EngineShell::raise(core::ErrorEvent::Kind kind, std::uint64_t address, std::string detail) {
  if (error_sink_)
    error_sink_(core::ErrorEvent{kind, name(), address, core::now_ps(), std::move(detail)});
}

}  // namespace podsim::engine
