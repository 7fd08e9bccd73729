#include "hw/chip/qman.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "core/bulk_transfer.h"
#include "core/kernel.h"
#include "hw/chip/qman_ring.h"

namespace podsim::chip {

namespace {

using Kind = core::ErrorEvent::Kind;

// Per-CP register arrays, one per fence counter or MSG_SHORT base.
constexpr std::uint64_t kFenceRdata[] = {
    PODSIM_GAUDI1_QMAN_CP_FENCE0_RDATA_OFFSET, PODSIM_GAUDI1_QMAN_CP_FENCE1_RDATA_OFFSET,
    PODSIM_GAUDI1_QMAN_CP_FENCE2_RDATA_OFFSET, PODSIM_GAUDI1_QMAN_CP_FENCE3_RDATA_OFFSET};
constexpr std::uint64_t kFenceCnt[] = {
    PODSIM_GAUDI1_QMAN_CP_FENCE0_CNT_OFFSET, PODSIM_GAUDI1_QMAN_CP_FENCE1_CNT_OFFSET,
    PODSIM_GAUDI1_QMAN_CP_FENCE2_CNT_OFFSET, PODSIM_GAUDI1_QMAN_CP_FENCE3_CNT_OFFSET};
constexpr std::uint64_t kMsgBaseLo[] = {
    PODSIM_GAUDI1_QMAN_CP_MSG_BASE0_ADDR_LO_OFFSET, PODSIM_GAUDI1_QMAN_CP_MSG_BASE1_ADDR_LO_OFFSET,
    PODSIM_GAUDI1_QMAN_CP_MSG_BASE2_ADDR_LO_OFFSET, PODSIM_GAUDI1_QMAN_CP_MSG_BASE3_ADDR_LO_OFFSET};
constexpr std::uint64_t kMsgBaseHi[] = {
    PODSIM_GAUDI1_QMAN_CP_MSG_BASE0_ADDR_HI_OFFSET, PODSIM_GAUDI1_QMAN_CP_MSG_BASE1_ADDR_HI_OFFSET,
    PODSIM_GAUDI1_QMAN_CP_MSG_BASE2_ADDR_HI_OFFSET, PODSIM_GAUDI1_QMAN_CP_MSG_BASE3_ADDR_HI_OFFSET};
// Every per-CP array of the block has this stride (gaudi1.yaml).
constexpr std::uint32_t kCpStride = PODSIM_GAUDI1_QMAN_CP_FENCE0_RDATA_STRIDE;
static_assert(kCpStride == PODSIM_GAUDI1_QMAN_CP_MSG_BASE0_ADDR_LO_STRIDE &&
                  kCpStride == PODSIM_GAUDI1_QMAN_CP_LDMA_TSIZE_OFFSET_STRIDE,
              "per-CP register arrays share one stride");

constexpr std::uint64_t per_cp(std::uint64_t offset, int cp) {
  return offset + static_cast<std::uint64_t>(cp) * kCpStride;
}

std::optional<std::uint32_t> per_stream(std::uint64_t address, std::uint64_t offset) {
  return register_element(address, offset, PODSIM_GAUDI1_QMAN_STREAMS, kCpStride);
}

// The CP and fence counter a per-CP fence array element names.
std::optional<std::pair<int, int>> fence_element(std::uint64_t address,
                                                 const std::uint64_t (&arrays)[4]) {
  for (int id = 0; id < 4; ++id) {
    if (auto cp = register_element(address, arrays[id], PODSIM_GAUDI1_QMAN_CPS, kCpStride)) {
      return std::make_pair(static_cast<int>(*cp), id);
    }
  }
  return std::nullopt;
}

// The bits of LIN_DMA's word 1 that COMMIT holds; the rest are the packet header's.
constexpr std::uint32_t kCommitFields =
    PODSIM_GAUDI1_DMA_COMMIT_WR_COMP_EN_MASK | PODSIM_GAUDI1_DMA_COMMIT_TRANSPOSE_MASK |
    PODSIM_GAUDI1_DMA_COMMIT_DTYPE_MASK | PODSIM_GAUDI1_DMA_COMMIT_LIN_MASK |
    PODSIM_GAUDI1_DMA_COMMIT_MEM_SET_MASK | PODSIM_GAUDI1_DMA_COMMIT_COMPRESS_MASK |
    PODSIM_GAUDI1_DMA_COMMIT_DECOMPRESS_MASK | PODSIM_GAUDI1_DMA_COMMIT_CTX_ID_MASK;

std::uint32_t bits(std::uint32_t value, std::uint32_t mask, unsigned shift) {
  return (value & mask) >> shift;
}

}  // namespace

Qman::Qman(sc_core::sc_module_name name, const QmanConfig& config)
    : sc_module(name),
      target_socket("target_socket"),
      initiator_socket("initiator_socket"),
      config_(config),
      regs_(kRegisterSpan / 4, 0) {
  core::validate_config(config_);
  core::event_queue();  // made during elaboration: a module cannot be added later
  streams_.reserve(kStreams);
  for (int s = 0; s < kStreams; ++s) {
    core::StatsGroup g(std::string(this->name()) + ".stream" + std::to_string(s));
    streams_.emplace_back(
        StreamStats{g.counter("packets", "1", "packets executed"),
                    g.counter("cbs", "1", "command buffers (PQ entries) completed"),
                    g.counter("fence_waits", "1", "FENCE packets that had to wait"),
                    g.counter("errors", "1", "error events raised")});
  }
  target_socket.register_b_transport(this, &Qman::b_transport);
}

Qman::~Qman() = default;

// ---------------------------------------------------------------------------------------------
// Registers

void Qman::b_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay) {
  const core::TimePs at = core::now_ps() + delay.value();
  const auto bad = serve_registers(
      trans, kRegisterSpan, [this](std::uint64_t offset) { return read_register(offset); },
      [&](std::uint64_t offset, const std::uint32_t* values, std::uint32_t count) {
        if (pending_.push(at, offset, values, count)) schedule(at, kApply, 0);
      });
  if (bad && error_sink_)
    error_sink_(core::bad_register_event(name(), trans.get_address(), *bad, at));
}

std::uint32_t Qman::read_register(std::uint64_t offset) const {
  if (offset >= kRegisterSpan) return 0;
  if (auto s = per_stream(offset, PODSIM_GAUDI1_QMAN_PQ_CI_OFFSET)) return streams_[*s].ci;
  if (auto s = per_stream(offset, PODSIM_GAUDI1_QMAN_PQ_PI_OFFSET)) return streams_[*s].pi;
  if (offset == PODSIM_GAUDI1_QMAN_GLBL_STS0_OFFSET) {
    std::uint32_t stream_idle = 0;
    for (int s = 0; s < kStreams; ++s) {
      if (streams_[s].phase == Phase::kIdle) stream_idle |= 1u << s;
    }
    const std::uint32_t cp_idle = stream_idle | (lower_owner_ < 0 ? 1u << kLowerCp : 0);
    return podsim_gaudi1_make_qman_glbl_sts0(stream_idle, cp_idle, cp_idle, 0, 0, 0, 0);
  }
  if (auto cp = register_element(offset, PODSIM_GAUDI1_QMAN_CP_STS_OFFSET, kCps, kCpStride)) {
    for (const Stream& st : streams_) {
      if (st.phase == Phase::kWaitFence && st.fence_cp == static_cast<int>(*cp)) {
        return podsim_gaudi1_make_qman_cp_sts(0, 1, 1, 1, 0, st.fence_id, 1);
      }
    }
    return podsim_gaudi1_make_qman_cp_sts(0, 1, 1, 1, 0, 0, 0);
  }
  return reg(offset);
}

// Applied at the write's time. Registers without behaviour keep the value for reads.
void Qman::write_register(std::uint64_t offset, std::uint32_t value) {
  if (auto s = per_stream(offset, PODSIM_GAUDI1_QMAN_PQ_PI_OFFSET)) {
    streams_[*s].pi = value & pq_index_mask(pq_log2_size(*s));
    return kick(*s);
  }
  if (auto s = per_stream(offset, PODSIM_GAUDI1_QMAN_PQ_CI_OFFSET)) {
    streams_[*s].ci = value & pq_index_mask(pq_log2_size(*s));
    return;
  }
  if (auto f = fence_element(offset, kFenceRdata)) {
    std::uint32_t& counter = fence_counter(f->first, f->second);
    counter = fence_add(counter, value);
    return fence_changed(f->first, f->second);
  }
  if (auto f = fence_element(offset, kFenceCnt)) {
    fence_counter(f->first, f->second) = value & PODSIM_GAUDI1_QMAN_CP_FENCE_CNT_VAL_MASK;
    return fence_changed(f->first, f->second);
  }
  reg(offset) = value;
  if (offset == PODSIM_GAUDI1_QMAN_GLBL_CFG1_OFFSET) {
    const std::uint32_t flush = bits(value, PODSIM_GAUDI1_QMAN_GLBL_CFG1_PQF_FLUSH_MASK,
                                     PODSIM_GAUDI1_QMAN_GLBL_CFG1_PQF_FLUSH_SHIFT) |
                                bits(value, PODSIM_GAUDI1_QMAN_GLBL_CFG1_CP_FLUSH_MASK,
                                     PODSIM_GAUDI1_QMAN_GLBL_CFG1_CP_FLUSH_SHIFT);
    for (int s = 0; s < kStreams; ++s) {
      if (flush >> s & 1u) this->flush(s);
    }
  }
  if (offset == PODSIM_GAUDI1_QMAN_GLBL_CFG0_OFFSET ||
      offset == PODSIM_GAUDI1_QMAN_GLBL_CFG1_OFFSET) {
    for (int s = 0; s < kStreams; ++s) kick(s);
  }
}

// The stream drops the buffer under way and every descriptor queued behind it, as a reset
// needs: its consumer index catches up with the producer index.
void Qman::flush(int s) {
  Stream& st = streams_[s];
  release_lower_cp(s);
  lower_waiters_.erase(std::remove(lower_waiters_.begin(), lower_waiters_.end(), s),
                       lower_waiters_.end());
  st.frames.clear();
  st.fence_timer = false;
  st.fence_counted = false;
  ++st.fence_gen;
  ++st.wake_gen;
  st.ci = st.pi;
  st.phase = Phase::kIdle;
  if (owner_ == s) locked_ = false;
  release(s);
}

std::uint32_t& Qman::fence_counter(int cp, int id) { return reg(per_cp(kFenceCnt[id], cp)); }

std::uint64_t Qman::msg_base(int cp, int base) const {
  return std::uint64_t{reg(per_cp(kMsgBaseHi[base], cp))} << 32 | reg(per_cp(kMsgBaseLo[base], cp));
}

std::uint32_t Qman::pq_log2_size(int s) const {
  return std::min(reg(per_cp(PODSIM_GAUDI1_QMAN_PQ_SIZE_OFFSET, s)), kMaxPqLog2Size);
}

// A stream runs when both its PQ fetcher and its command processor are enabled.
bool Qman::stream_enabled(int s) const {
  const std::uint32_t cfg = reg(PODSIM_GAUDI1_QMAN_GLBL_CFG0_OFFSET);
  const std::uint32_t pqf = bits(cfg, PODSIM_GAUDI1_QMAN_GLBL_CFG0_PQF_EN_MASK,
                                 PODSIM_GAUDI1_QMAN_GLBL_CFG0_PQF_EN_SHIFT);
  const std::uint32_t cp =
      bits(cfg, PODSIM_GAUDI1_QMAN_GLBL_CFG0_CP_EN_MASK, PODSIM_GAUDI1_QMAN_GLBL_CFG0_CP_EN_SHIFT);
  const std::uint32_t stop = reg(PODSIM_GAUDI1_QMAN_GLBL_CFG1_OFFSET);
  const std::uint32_t stopped = bits(stop, PODSIM_GAUDI1_QMAN_GLBL_CFG1_PQF_STOP_MASK,
                                     PODSIM_GAUDI1_QMAN_GLBL_CFG1_PQF_STOP_SHIFT) |
                                bits(stop, PODSIM_GAUDI1_QMAN_GLBL_CFG1_CP_STOP_MASK,
                                     PODSIM_GAUDI1_QMAN_GLBL_CFG1_CP_STOP_SHIFT);
  return (pqf >> s & 1u) && (cp >> s & 1u) && !(stopped >> s & 1u);
}

void Qman::fence_changed(int cp, int id) {
  for (int s = 0; s < kStreams; ++s) {
    const Stream& st = streams_[s];
    if (st.phase == Phase::kWaitFence && st.fence_cp == cp && st.fence_id == id) become_ready(s);
  }
}

// ---------------------------------------------------------------------------------------------
// Scheduling: one issue slot, handed round robin among ready streams.

void Qman::schedule(core::TimePs at, Tag kind, int s, std::uint32_t gen) {
  core::event_queue().schedule(std::max(at, core::now_ps()), *this, tag(kind, s, gen));
}

// A fence timer of a stream no longer waiting on that fence: it only drops its flag, and the next
// wait's deadline counts from that wait's start either way.
bool Qman::stale(std::uint32_t t) const {
  if (static_cast<Tag>(t >> 20) != kFenceTimeout) return false;
  const Stream& st = streams_[t & 0xF];
  const std::uint32_t gen = (t >> 4) & 0xFFFF;
  return !st.fence_timer || (st.fence_gen & 0xFFFF) != gen || st.phase != Phase::kWaitFence ||
         !st.fence_counted;
}

void Qman::fire(std::uint32_t t) {
  const auto kind = static_cast<Tag>(t >> 20);
  const int s = static_cast<int>(t & 0xF);
  const std::uint32_t gen = (t >> 4) & 0xFFFF;
  Stream& st = streams_[s];
  switch (kind) {
    case kApply:
      if (!pending_.armed_for(core::now_ps())) break;
      pending_.apply_due(core::now_ps(), [this](std::uint64_t offset, std::uint32_t value) {
        write_register(offset, value);
      });
      if (auto next = pending_.rearm()) schedule(*next, kApply, 0);
      break;
    case kStep:
      if (owner_ == s && st.phase == Phase::kRunning) run_step(s);
      break;
    case kWake:
      if ((st.phase == Phase::kFetching || st.phase == Phase::kWaitTime) &&
          (st.wake_gen & 0xFFFF) == gen) {
        become_ready(s);
      }
      break;
    case kFenceTimeout: {
      if (!st.fence_timer || (st.fence_gen & 0xFFFF) != gen) break;
      st.fence_timer = false;
      if (st.phase != Phase::kWaitFence || !st.fence_counted) break;
      // One timer per stream: the wait under way may have begun after the one it was set for.
      const core::TimePs deadline =
          st.fence_since + static_cast<core::TimePs>(config_.fence_timeout.ps);
      if (core::now_ps() < deadline) {
        st.fence_timer = true;
        schedule(deadline, kFenceTimeout, s, st.fence_gen);
      } else {
        const Frame& f = st.frames.back();
        fail_buffer(s, Kind::kFenceTimeout, f.address + f.pos,
                    fmt::format("FENCE on counter {} of CP {} waited past {}", st.fence_id,
                                st.fence_cp, core::to_string(config_.fence_timeout)));
      }
      break;
    }
  }
}

// A doorbell or an enable: an idle stream starts on its next descriptor.
void Qman::kick(int s) {
  if (streams_[s].phase == Phase::kIdle) start_fetch(s);
}

void Qman::become_ready(int s) {
  Stream& st = streams_[s];
  st.phase = Phase::kReady;
  if (owner_ == s) {
    st.phase = Phase::kRunning;
    schedule(issue_free_, kStep, s);
    return;
  }
  dispatch();
}

void Qman::dispatch() {
  if (owner_ >= 0) return;
  for (int i = 0; i < kStreams; ++i) {
    const int c = (rr_next_ + i) % kStreams;
    if (streams_[c].phase != Phase::kReady) continue;
    owner_ = c;
    streams_[c].phase = Phase::kRunning;
    schedule(issue_free_, kStep, c);
    return;
  }
}

// The stream gives up the issue slot unless it holds the arbiter (ARB_POINT) and has work.
void Qman::release(int s) {
  if (owner_ != s) return;
  if (locked_ && streams_[s].phase != Phase::kIdle) return;
  locked_ = false;
  owner_ = -1;
  rr_next_ = (s + 1) % kStreams;
  dispatch();
}

void Qman::wait_until(int s, core::TimePs at) {
  Stream& st = streams_[s];
  st.phase = Phase::kWaitTime;
  schedule(at, kWake, s, ++st.wake_gen);
  release(s);
}

// One packet of the owner's current buffer, once its barriers allow it.
void Qman::run_step(int s) {
  Stream& st = streams_[s];
  const core::TimePs now = core::now_ps();
  {
    Frame& f = st.frames.back();
    if (f.pos >= f.bytes.size()) return end_buffer(s);
    std::size_t size = 0;
    if (auto error = codec_.decode_one(f.bytes.data(), f.bytes.size(), f.pos, packet_, size)) {
      const Kind kind = error->kind == spec::DecodeError::Kind::kUndefinedOpcode
                            ? Kind::kUndefinedOpcode
                            : Kind::kMalformed;
      return fail_buffer(s, kind, f.address + error->offset, error->message());
    }
    if (packet_.eng_barrier() && engine_ != nullptr && engine_->busy()) {
      st.phase = Phase::kWaitEngine;
      const std::uint32_t gen = ++st.wake_gen;
      engine_->when_idle([this, s, gen] {
        if (streams_[s].phase == Phase::kWaitEngine && streams_[s].wake_gen == gen) {
          become_ready(s);
        }
      });
      return release(s);
    }
    const Cp& cp = cps_[f.cp];
    core::TimePs barrier = 0;
    if (packet_.reg_barrier()) barrier = std::max(barrier, cp.writes_done);
    if (packet_.msg_barrier()) barrier = std::max(barrier, cp.messages_done);
    if (barrier > now) return wait_until(s, barrier);
    st.packet_pos = f.pos;
    f.pos += size;
  }
  const int cp = st.frames.back().cp;
  const Outcome outcome =
      predicate_allows(packet_, cp) ? execute(s, packet_, st.packet_pos) : Outcome::kNext;
  if (outcome == Outcome::kRetry || outcome == Outcome::kFailed) return;
  st.stats.packets.add();
  issue_free_ = std::max(issue_free_, now + static_cast<core::TimePs>(config_.packet_time.ps));
  if (outcome == Outcome::kWaiting) return;
  if (outcome == Outcome::kDone) st.frames.back().pos = st.frames.back().bytes.size();
  if (st.frames.back().pos >= st.frames.back().bytes.size()) return end_buffer(s);
  if (outcome == Outcome::kYield) {
    st.phase = Phase::kReady;
    return release(s);
  }
  schedule(issue_free_, kStep, s);
}

// ---------------------------------------------------------------------------------------------
// Buffers

void Qman::start_fetch(int s) {
  Stream& st = streams_[s];
  st.phase = Phase::kIdle;
  while (stream_enabled(s) && pq_pending(st.pi, st.ci, pq_log2_size(s)) != 0) {
    if (fetch_entry(s)) return;
  }
}

// Reads the descriptor at CI and its buffer; false when the entry is consumed without a buffer
// to run (empty, or an error).
bool Qman::fetch_entry(int s) {
  Stream& st = streams_[s];
  const std::uint32_t log2_size = pq_log2_size(s);
  const std::uint64_t pq = std::uint64_t{reg(per_cp(PODSIM_GAUDI1_QMAN_PQ_BASE_HI_OFFSET, s))}
                               << 32 |
                           reg(per_cp(PODSIM_GAUDI1_QMAN_PQ_BASE_LO_OFFSET, s));
  const std::uint64_t entry_address =
      pq + std::uint64_t{pq_slot(st.ci, log2_size)} * PODSIM_GAUDI1_PQ_ENTRY_SIZE;
  const core::TimePs now = core::now_ps();
  std::uint8_t raw[PODSIM_GAUDI1_PQ_ENTRY_SIZE] = {};
  core::TimePs entry_read = now, buffer_read = now;
  const auto consume = [&] { st.ci = pq_next(st.ci, log2_size); };
  if (!read(s, entry_address, raw, sizeof raw, now, entry_read)) {
    raise(s, Kind::kAddressError, entry_address, "PQ entry read rejected");
    consume();
    return false;
  }
  const PqEntry entry = decode_pq_entry(raw);
  if (entry.length == 0) {
    consume();
    st.stats.cbs.add();
    return false;
  }
  if (entry.length > config_.max_cb_size.bytes) {
    raise(s, Kind::kMalformed, entry_address,
          fmt::format("PQ entry names a {}-byte buffer, above max_cb_size", entry.length));
    consume();
    return false;
  }
  Frame frame;
  frame.bytes.resize(entry.length);
  frame.address = entry.address;
  frame.cp = s;
  frame.repeat = entry.repeat();
  if (!read(s, entry.address, frame.bytes.data(), entry.length, entry_read, buffer_read)) {
    raise(s, Kind::kAddressError, entry.address,
          fmt::format("command buffer read of {} bytes rejected", entry.length));
    consume();
    return false;
  }
  st.frames.clear();
  st.frames.push_back(std::move(frame));
  st.cb_start = now;
  st.phase = Phase::kFetching;
  schedule(buffer_read, kWake, s, ++st.wake_gen);
  return true;
}

// The PQ buffer is done: CI moves on, and the stream goes on with its next descriptor.
void Qman::complete_entry(int s) {
  Stream& st = streams_[s];
  st.frames.clear();
  st.ci = pq_next(st.ci, pq_log2_size(s));
  start_fetch(s);
  if (owner_ == s && st.phase == Phase::kIdle) locked_ = false;
  release(s);
}

void Qman::end_buffer(int s) {
  Stream& st = streams_[s];
  if (st.frames.size() > 1) {  // a CP_DMA buffer: back to the one that called it
    st.frames.pop_back();
    release_lower_cp(s);
    if (st.frames.back().pos >= st.frames.back().bytes.size()) return end_buffer(s);
    return schedule(issue_free_, kStep, s);
  }
  trace_buffer(s);
  st.stats.cbs.add();
  complete_entry(s);
}

// The rest of the PQ buffer (and of a CP_DMA buffer in it) is dropped.
void Qman::fail_buffer(int s, Kind kind, std::uint64_t address, std::string detail) {
  Stream& st = streams_[s];
  raise(s, kind, address, std::move(detail));
  release_lower_cp(s);
  lower_waiters_.erase(std::remove(lower_waiters_.begin(), lower_waiters_.end(), s),
                       lower_waiters_.end());
  st.fence_timer = false;
  st.fence_counted = false;
  ++st.fence_gen;
  trace_buffer(s);
  complete_entry(s);
}

void Qman::raise(int s, Kind kind, std::uint64_t address, std::string detail) {
  streams_[s].stats.errors.add();
  if (!error_sink_) return;
  core::ErrorEvent e;
  e.kind = kind;
  e.block = name();
  e.address = address;
  e.time_ps = core::now_ps();
  e.detail = fmt::format("stream {}: {}", s, detail);
  error_sink_(e);
}

void Qman::release_lower_cp(int s) {
  if (lower_owner_ != s) return;
  lower_owner_ = -1;
  while (!lower_waiters_.empty()) {
    const int next = lower_waiters_.front();
    lower_waiters_.pop_front();
    if (streams_[next].phase == Phase::kWaitLowerCp) return become_ready(next);
  }
}

void Qman::trace_buffer(int s) {
  core::TraceWriter& trace = core::trace_writer();
  Stream& st = streams_[s];
  if (!trace.enabled() || st.frames.empty()) return;
  if (st.track.tid == 0)
    st.track = trace.track(std::string(name()) + ".stream" + std::to_string(s));
  trace.span(st.track, "cb", st.cb_start, core::now_ps(),
             {{"address", st.frames.front().address}, {"bytes", st.frames.front().bytes.size()}});
}

// ---------------------------------------------------------------------------------------------
// Packets

bool Qman::predicate_allows(const spec::Packet& p, int cp) const {
  const spec::PacketSpec& sp = p.spec();
  for (std::size_t i = 0; i < sp.field_count; ++i) {
    if (std::strcmp(sp.fields[i].name, "pred") != 0) continue;
    const std::uint64_t pred = p.get(i);
    return pred == 0 || (cps_[cp].predicates >> pred & 1u) != 0;
  }
  return true;
}

Qman::Outcome Qman::execute(int s, const spec::Packet& p, std::size_t at) {
  const int cp = streams_[s].frames.back().cp;
  const std::uint64_t engine = config_.engine_base.value;
  switch (p.opcode()) {
    case PODSIM_GAUDI1_PACKET_WREG_32: {
      const auto value = static_cast<std::uint32_t>(p.get("value"));
      return write(s, engine + p.get("reg_offset"), &value, 4, false);
    }
    case PODSIM_GAUDI1_PACKET_WREG_BULK: {
      std::vector<std::uint8_t> values(p.tail().size() * 8);
      for (std::size_t i = 0; i < p.tail().size(); ++i)
        std::memcpy(&values[i * 8], &p.tail()[i], 8);
      if (values.empty()) return Outcome::kNext;
      return write(s, engine + p.get("reg_offset"), values.data(),
                   static_cast<std::uint32_t>(values.size()), false);
    }
    case PODSIM_GAUDI1_PACKET_MSG_LONG:
    case PODSIM_GAUDI1_PACKET_MSG_PROT:
      return message(s, p, p.get("addr"));
    case PODSIM_GAUDI1_PACKET_MSG_SHORT:
      return message(s, p,
                     msg_base(cp, static_cast<int>(p.get("base"))) + p.get("msg_addr_offset"));
    case PODSIM_GAUDI1_PACKET_CP_DMA:
      return cp_dma(s, p, at);
    case PODSIM_GAUDI1_PACKET_REPEAT:
      return repeat(s, p, at);
    case PODSIM_GAUDI1_PACKET_FENCE:
      return fence(s, p);
    case PODSIM_GAUDI1_PACKET_LIN_DMA:
      return lin_dma(s, at);
    case PODSIM_GAUDI1_PACKET_STOP:
      return Outcome::kDone;
    case PODSIM_GAUDI1_PACKET_ARB_POINT:
      if (p.get("rls") != 0) {
        locked_ = false;
        return Outcome::kYield;
      }
      locked_ = true;
      return Outcome::kNext;
    case PODSIM_GAUDI1_PACKET_WAIT:
      return wait_packet(s, p);
    case PODSIM_GAUDI1_PACKET_LOAD_AND_EXE:
      return load_and_exe(s, p);
    default:  // NOP, and packets with nothing to do but their barriers
      return Outcome::kNext;
  }
}

Qman::Outcome Qman::write(int s, std::uint64_t address, const void* data, std::uint32_t length,
                          bool message) {
  const int cp = streams_[s].frames.back().cp;
  std::vector<std::uint8_t> bytes(static_cast<const std::uint8_t*>(data),
                                  static_cast<const std::uint8_t*>(data) + length);
  const core::TimePs now = core::now_ps();
  core::TimePs done = now;
  if (!core::bulk_transfer(initiator_socket, trans_, tlm::TLM_WRITE_COMMAND, address, bytes.data(),
                           length, now, done)) {
    fail_buffer(s, Kind::kAddressError, address,
                fmt::format("write of {} bytes to {:#x} rejected", length, address));
    return Outcome::kFailed;
  }
  core::TimePs& until = message ? cps_[cp].messages_done : cps_[cp].writes_done;
  until = std::max(until, done);
  return Outcome::kNext;
}

// op 0 writes the value, op 1 the time (64 bits, picoseconds).
Qman::Outcome Qman::message(int s, const spec::Packet& p, std::uint64_t address) {
  if (p.get("op") == 1) {
    const std::uint64_t time = core::now_ps();
    return write(s, address, &time, 8, true);
  }
  const auto value = static_cast<std::uint32_t>(p.get("value"));
  return write(s, address, &value, 4, true);
}

Qman::Outcome Qman::fence(int s, const spec::Packet& p) {
  Stream& st = streams_[s];
  const int cp = st.frames.back().cp;
  const int id = static_cast<int>(p.get("id"));
  if (fence_pass(fence_counter(cp, id), static_cast<std::uint32_t>(p.get("target_val")),
                 static_cast<std::uint32_t>(p.get("dec_val")))) {
    st.fence_counted = false;  // a timer still set finds no wait, or a later one, when it fires
    return Outcome::kNext;
  }
  st.frames.back().pos = st.packet_pos;  // the FENCE runs again when its counter moves
  st.phase = Phase::kWaitFence;
  st.fence_cp = cp;
  st.fence_id = id;
  if (!st.fence_counted) {
    st.stats.fence_waits.add();
    st.fence_since = core::now_ps();
  }
  st.fence_counted = true;
  if (!st.fence_timer && config_.fence_timeout.ps > 0) {
    st.fence_timer = true;
    schedule(st.fence_since + static_cast<core::TimePs>(config_.fence_timeout.ps), kFenceTimeout, s,
             ++st.fence_gen);
  }
  release(s);
  return Outcome::kRetry;
}

// As Gaudi1's lower CP does: size, source and destination into the engine's registers at the
// offsets this CP's CP_LDMA_*_OFFSET registers hold, then word 1 (the control bits) into COMMIT,
// the register after the size.
Qman::Outcome Qman::lin_dma(int s, std::size_t at) {
  const Frame& f = streams_[s].frames.back();
  const int cp = f.cp;
  std::uint32_t words[6];
  std::memcpy(words, f.bytes.data() + at, sizeof words);
  const std::uint64_t engine = config_.engine_base.value;
  const std::uint64_t size_at =
      engine + reg(per_cp(PODSIM_GAUDI1_QMAN_CP_LDMA_TSIZE_OFFSET_OFFSET, cp));
  const std::uint64_t src_at =
      engine + reg(per_cp(PODSIM_GAUDI1_QMAN_CP_LDMA_SRC_BASE_LO_OFFSET_OFFSET, cp));
  const std::uint64_t dst_at =
      engine + reg(per_cp(PODSIM_GAUDI1_QMAN_CP_LDMA_DST_BASE_LO_OFFSET_OFFSET, cp));
  const std::uint32_t commit = words[1] & kCommitFields;
  Outcome o = write(s, size_at, &words[0], 4, false);
  if (o == Outcome::kNext) o = write(s, src_at, &words[2], 8, false);
  if (o == Outcome::kNext) o = write(s, dst_at, &words[4], 8, false);
  if (o == Outcome::kNext) o = write(s, size_at + 4, &commit, 4, false);
  return o;
}

// The buffer runs on the lower CP (its fences and MSG_SHORT bases), which one stream holds at a
// time; the stream goes on after it.
Qman::Outcome Qman::cp_dma(int s, const spec::Packet& p, std::size_t at) {
  Stream& st = streams_[s];
  const std::uint64_t packet_address = st.frames.back().address + at;
  if (st.frames.back().cp == kLowerCp) {
    fail_buffer(s, Kind::kMalformed, packet_address, "CP_DMA inside a CP_DMA buffer");
    return Outcome::kFailed;
  }
  if (lower_owner_ >= 0 && lower_owner_ != s) {
    st.frames.back().pos = at;
    st.phase = Phase::kWaitLowerCp;
    lower_waiters_.push_back(s);
    release(s);
    return Outcome::kRetry;
  }
  const auto size = static_cast<std::uint32_t>(p.get("tsize"));
  const std::uint64_t address = p.get("src_addr");
  if (size == 0) return Outcome::kNext;
  if (size > config_.max_cb_size.bytes) {
    fail_buffer(s, Kind::kMalformed, packet_address,
                fmt::format("CP_DMA of {} bytes, above max_cb_size", size));
    return Outcome::kFailed;
  }
  lower_owner_ = s;
  Frame frame;
  frame.bytes.resize(size);
  frame.address = address;
  frame.cp = kLowerCp;
  const core::TimePs now = core::now_ps();
  core::TimePs done = now;
  if (!read(s, address, frame.bytes.data(), size, now, done)) {
    fail_buffer(s, Kind::kAddressError, address,
                fmt::format("CP_DMA read of {} bytes rejected", size));
    return Outcome::kFailed;
  }
  st.frames.push_back(std::move(frame));
  wait_until(s, done);
  return Outcome::kWaiting;
}

// A REPEAT start (sore 0) opens a section of the inner or outer loop (o); a REPEAT end (sore 1)
// jumps back to byte jmp_ptr of the buffer while that loop has passes left, as many as the
// descriptor's repeat count.
Qman::Outcome Qman::repeat(int s, const spec::Packet& p, std::size_t at) {
  Frame& f = streams_[s].frames.back();
  const auto loop = static_cast<std::size_t>(p.get("o"));
  if (p.get("sore") == 0) {
    f.loops[loop] = 0;
    return Outcome::kNext;
  }
  if (f.loops[loop] >= f.repeat) return Outcome::kNext;
  const std::uint64_t target = p.get("jmp_ptr");
  if (target >= f.bytes.size() || target % 4 != 0) {
    fail_buffer(s, Kind::kMalformed, f.address + at,
                fmt::format("REPEAT jumps to byte {} of a {}-byte buffer", target, f.bytes.size()));
    return Outcome::kFailed;
  }
  ++f.loops[loop];
  f.pos = static_cast<std::size_t>(target);
  return Outcome::kNext;
}

// load with dst 0: Gaudi1's non-consecutive predicate map, 32 words of 32 bits from src_addr,
// bit 0 of word i being predicate i; P0 is never loaded [C8] (scalars, dst 1, are read but not
// modeled). exe: starts the engine's work through the execute hook.
Qman::Outcome Qman::load_and_exe(int s, const spec::Packet& p) {
  const int cp = streams_[s].frames.back().cp;
  const core::TimePs now = core::now_ps();
  core::TimePs loaded = now;
  if (p.get("load") != 0) {
    const std::uint64_t address = p.get("src_addr");
    std::array<std::uint32_t, 32> words{};
    if (!read(s, address, reinterpret_cast<std::uint8_t*>(words.data()), sizeof words, now,
              loaded)) {
      fail_buffer(s, Kind::kAddressError, address, "LOAD_AND_EXE read rejected");
      return Outcome::kFailed;
    }
    if (p.get("dst") == 0) {
      std::uint32_t predicates = cps_[cp].predicates & 1u;
      for (std::size_t i = 1; i < words.size(); ++i) predicates |= (words[i] & 1u) << i;
      cps_[cp].predicates = predicates;
    }
  }
  if (p.get("exe") != 0 && execute_) execute_(static_cast<std::uint32_t>(p.get("etype")));
  if (loaded <= now) return Outcome::kNext;
  wait_until(s, loaded);
  return Outcome::kWaiting;
}

// The stream waits the cycles, then the fence counter gets inc_val.
Qman::Outcome Qman::wait_packet(int s, const spec::Packet& p) {
  const int cp = streams_[s].frames.back().cp;
  const int id = static_cast<int>(p.get("id"));
  const auto inc = static_cast<std::uint32_t>(p.get("inc_val"));
  const core::TimePs until =
      core::now_ps() +
      p.get("num_cycles_to_wait") * static_cast<core::TimePs>(config_.clock.period().ps);
  if (pending_.push(until, per_cp(kFenceRdata[id], cp), inc)) schedule(until, kApply, 0);
  wait_until(s, until);
  return Outcome::kWaiting;
}

bool Qman::read(int /*s*/, std::uint64_t address, std::uint8_t* data, std::uint32_t length,
                core::TimePs at, core::TimePs& done) {
  return core::bulk_transfer(initiator_socket, trans_, tlm::TLM_READ_COMMAND, address, data, length,
                             at, done);
}

bool Qman::idle() const {
  return std::all_of(streams_.begin(), streams_.end(),
                     [](const Stream& st) { return st.phase == Phase::kIdle; });
}

}  // namespace podsim::chip
