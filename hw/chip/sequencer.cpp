#include "hw/chip/sequencer.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <utility>

#include "hw/core/kernel.h"

namespace podsim::chip {

namespace {
// Receives kept posted on each collective QP: one is taken per arriving WRITE with immediate
// and put back at once, so this only has to exceed the writes one QP has in flight.
constexpr int kPostedReceives = 1024;
}  // namespace

Sequencer::Sequencer(sc_core::sc_module_name name, const SequencerConfig& config, roce::Nic& nic,
                     std::vector<Engine*> engines, std::uint64_t min_slice)
    : sc_module(name),
      config_(config),
      nic_(nic),
      engines_(std::move(engines)),
      min_slice_(min_slice),
      engine_bytes_(engines_.size(), 0),
      by_load_(engines_.size()) {
  core::validate_config(config_);
  send_cq_.set_callback([this](const roce::Completion& c) { on_send_completion(c); });
  recv_cq_.set_callback([this](const roce::Completion& c) { on_recv_completion(c); });
}

std::uint32_t Sequencer::create_qp(int port) {
  const std::uint32_t qpn = nic_.create_qp(port, send_cq_, recv_cq_);
  for (int i = 0; i < kPostedReceives; ++i) nic_.post_recv(qpn, roce::RecvRequest{});
  return qpn;
}

void Sequencer::validate(const Program& p) const {
  auto bad = [&](const std::string& what) {
    throw std::invalid_argument(std::string(name()) + ": program: " + what);
  };
  if (p.signals > kMaxSignals) bad(fmt::format("{} signals, at most {}", p.signals, kMaxSignals));
  auto check_signal = [&](std::uint32_t s, const char* role, std::size_t stream, std::size_t i) {
    if (s != Command::kNone && s >= p.signals) {
      bad(fmt::format("stream {} command {}: {} signal {} of {}", stream, i, role, s, p.signals));
    }
  };
  for (std::size_t s = 0; s < p.streams.size(); ++s) {
    for (std::size_t i = 0; i < p.streams[s].size(); ++i) {
      const Command& c = p.streams[s][i];
      check_signal(c.wait, "waits on", s, i);
      check_signal(c.done, "signals", s, i);
      if (c.kind == Command::Kind::kWrite && c.remote_signal >= kMaxSignals) {
        bad(fmt::format("stream {} command {}: remote signal {}", s, i, c.remote_signal));
      }
      const bool job = c.kind == Command::Kind::kReduce || c.kind == Command::Kind::kCopy;
      if (job && engines_.empty()) {
        bad(
            fmt::format("stream {} command {}: a reduce or copy job, but the chip has no DMA "
                        "engine to run it (chip.dma.engines = 0)",
                        s, i));
      }
    }
  }
}

void Sequencer::start(int id, Program program, std::function<void(bool)> finished) {
  if (id < 0 || id >= kMaxPrograms) {
    throw std::invalid_argument(
        fmt::format("{}: collective id {} outside 0..{}", name(), id, kMaxPrograms - 1));
  }
  if (busy(id)) throw std::invalid_argument(fmt::format("{}: collective id {} busy", name(), id));
  validate(program);
  Running& r = running_[id];
  r.streams.resize(program.streams.size());
  r.signals.assign(program.signals, 0);
  r.waiting.resize(program.signals);
  for (const auto& stream : program.streams) r.outstanding += stream.size();
  r.program = std::move(program);
  r.finished = std::move(finished);
  for (const auto& [signal, count] : early_[id]) r.signals[signal] += count;
  early_.erase(id);
  if (r.outstanding == 0) {
    auto done = std::move(r.finished);
    running_.erase(id);
    if (done) done(true);
    return;
  }
  for (std::size_t s = 0; s < r.streams.size(); ++s) advance(id, s);
}

// The stream's next command goes to the issue queue once its wait is met, or waits for it.
void Sequencer::advance(int id, std::size_t stream) {
  Running& r = running_.at(id);
  Stream& st = r.streams[stream];
  const auto& commands = r.program.streams[stream];
  if (st.next >= commands.size() || st.scheduled) return;
  const Command& c = commands[st.next];
  if (c.wait != Command::kNone && r.signals[c.wait] < c.wait_count) {
    r.waiting[c.wait].push_back({stream, c.wait_count});
    return;
  }
  st.scheduled = true;
  issues_.push_back(
      {id, stream, core::now_ps() + static_cast<core::TimePs>(config_.issue_latency.ps)});
  arm();
}

void Sequencer::arm() {
  if (armed_ || issuing_ || issues_.empty()) return;
  armed_ = true;
  core::event_queue().schedule(issues_.front().at, *this, 0);
}

// Issues happen in readiness order, each issue_latency after its command could go.
void Sequencer::fire(std::uint32_t /*tag*/) {
  armed_ = false;
  issuing_ = true;
  const core::TimePs now = core::now_ps();
  while (!issues_.empty() && issues_.front().at <= now) {
    const Issue next = issues_.front();
    issues_.pop_front();
    auto it = running_.find(next.id);
    if (it == running_.end()) continue;
    Stream& st = it->second.streams[next.stream];
    const Command c = it->second.program.streams[next.stream][st.next];
    st.scheduled = false;
    ++st.next;
    issue(next.id, next.stream, c);
    if (running_.count(next.id)) advance(next.id, next.stream);
  }
  issuing_ = false;
  arm();
}

void Sequencer::issue(int id, std::size_t stream, const Command& c) {
  if (c.kind == Command::Kind::kWait) return finish_command(id, c.done, true);
  if (c.kind == Command::Kind::kWrite) {
    const std::uint64_t wr_id = next_wr_id_++;
    pending_writes_[wr_id] = {id, c.done};
    roce::SendRequest request;
    request.wr_id = wr_id;
    request.opcode = roce::SendOpcode::kWriteWithImmediate;
    request.local_address = c.src;
    request.remote_address = c.dst;
    request.length = c.bytes;
    request.immediate = immediate(id, c.remote_signal);
    nic_.post_send(c.qpn, request);
    return;
  }
  queue_job(id, stream, c);
}

void Sequencer::queue_job(int id, std::size_t stream, const Command& c) {
  Stream& st = running_.at(id).streams[stream];
  Job job = c.job;
  job.kind = c.kind == Command::Kind::kCopy ? Job::Kind::kCopy : Job::Kind::kReduce;
  st.jobs.emplace_back(job, c.done);
  if (st.jobs.size() - st.first_job == 1) start_job(id, stream);
}

// The stream's first job, cut into slices on the least-loaded engines.
void Sequencer::start_job(int id, std::size_t stream) {
  Stream& st = running_.at(id).streams[stream];
  const Job job = st.jobs[st.first_job].first;
  const std::uint64_t element = core::size_of(job.type);
  const std::uint64_t bytes = job.count * element;
  const std::uint64_t slices =
      min_slice_ == 0 ? 1 : std::clamp<std::uint64_t>(bytes / min_slice_, 1, engines_.size());
  std::iota(by_load_.begin(), by_load_.end(), 0);
  std::sort(by_load_.begin(), by_load_.end(), [this](int a, int b) {
    const auto i = static_cast<std::size_t>(a), j = static_cast<std::size_t>(b);
    return engine_bytes_[i] != engine_bytes_[j] ? engine_bytes_[i] < engine_bytes_[j] : a < b;
  });
  st.slices_left = static_cast<int>(slices);
  st.job_ok = true;
  const std::uint64_t base = job.count / slices, extra = job.count % slices;
  for (std::uint64_t i = 0; i < slices; ++i) {
    const std::uint64_t first = i * base + std::min(i, extra);
    Job slice = job;
    slice.count = base + (i < extra ? 1 : 0);
    slice.dst += first * element;
    slice.a += first * element;
    if (job.kind == Job::Kind::kReduce) slice.b += first * element;
    const int engine = by_load_[i];
    const std::uint64_t slice_bytes = slice.count * element;
    engine_bytes_[static_cast<std::size_t>(engine)] += slice_bytes;
    engines_[static_cast<std::size_t>(engine)]->submit(
        slice, [this, id, stream, engine, slice_bytes](bool ok) {
          slice_done(id, stream, engine, slice_bytes, ok);
        });
  }
}

// The job ends with its last slice; the stream's next job starts then.
void Sequencer::slice_done(int id, std::size_t stream, int engine, std::uint64_t bytes, bool ok) {
  engine_bytes_[static_cast<std::size_t>(engine)] -= bytes;
  Stream& st = running_.at(id).streams[stream];
  st.job_ok = st.job_ok && ok;
  if (--st.slices_left > 0) return;
  const std::uint32_t done = st.jobs[st.first_job].second;
  const bool job_ok = st.job_ok;
  if (++st.first_job == st.jobs.size()) {
    st.jobs.clear();
    st.first_job = 0;
  } else {
    start_job(id, stream);
  }
  finish_command(id, done, job_ok);
}

void Sequencer::add_signal(int id, std::uint32_t signal) {
  Running& r = running_.at(id);
  const std::uint32_t value = ++r.signals[signal];
  auto& waiters = r.waiting[signal];
  for (std::size_t i = 0; i < waiters.size();) {
    if (waiters[i].second <= value) {
      const std::size_t stream = waiters[i].first;
      waiters.erase(waiters.begin() + static_cast<std::ptrdiff_t>(i));
      advance(id, stream);
    } else {
      ++i;
    }
  }
}

void Sequencer::finish_command(int id, std::uint32_t signal, bool ok) {
  auto it = running_.find(id);
  if (it == running_.end()) return;
  Running& r = it->second;
  --r.outstanding;
  if (!ok && !r.failed) {
    r.failed = true;
    if (r.finished) std::exchange(r.finished, nullptr)(false);
  }
  if (ok && signal != Command::kNone) add_signal(id, signal);
  if (r.outstanding == 0) {
    auto done = std::move(r.finished);
    const bool success = !r.failed;
    running_.erase(it);
    if (done) done(success);
  }
}

void Sequencer::on_send_completion(const roce::Completion& c) {
  auto it = pending_writes_.find(c.wr_id);
  if (it == pending_writes_.end()) return;
  const auto [id, done] = it->second;
  pending_writes_.erase(it);
  finish_command(id, done, c.status == roce::CompletionStatus::kSuccess);
}

void Sequencer::on_recv_completion(const roce::Completion& c) {
  if (c.status != roce::CompletionStatus::kSuccess || !c.has_immediate) return;
  nic_.post_recv(c.qpn, roce::RecvRequest{});
  const int id = static_cast<int>(c.immediate >> 24);
  const std::uint32_t signal = c.immediate & (kMaxSignals - 1);
  auto it = running_.find(id);
  if (it == running_.end() || signal >= it->second.signals.size()) {
    ++early_[id][signal];
    return;
  }
  add_signal(id, signal);
}

}  // namespace podsim::chip
