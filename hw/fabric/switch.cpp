#include "hw/fabric/switch.h"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>

#include "core/kernel.h"
#include "core/log.h"

namespace podsim::fabric {

namespace {
constexpr std::uint64_t kPfcDestinationMac = 0x0180c2000001ull;  // 802.1Qbb MAC control address
constexpr std::uint32_t kQuantumBytes = 512 / 8;                 // one quantum is 512 bit times

bool is_ect(Ecn e) { return e == Ecn::kEct0 || e == Ecn::kEct1; }

// Counters only add, so a high-water mark is kept by adding the rise.
void raise_to(core::Counter& mark, std::uint64_t level) {
  if (level > mark.value()) mark.add(level - mark.value());
}
}  // namespace

// ---------------------------------------------------------------------------------------------
// Configuration

void EcnConfig::check(core::ConfigChecks& c) const {
  if (enabled && !(kmin < kmax)) {
    c.fail("kmax", "must be greater than kmin (" + core::to_string(kmin) + "), got " +
                       core::to_string(kmax));
  }
}

void SwitchConfig::check(core::ConfigChecks& c) const {
  if (buffer.bytes > std::numeric_limits<std::uint32_t>::max()) {
    c.fail("buffer", "must be below 4 GiB (the buffer accounting counts in 32 bits), got " +
                         core::to_string(buffer));
  }
  if (pfc.enabled && pfc.lossless_priority >= priorities) {
    c.fail("pfc.lossless_priority", "must be below priorities (" + std::to_string(priorities) +
                                        "), got " + std::to_string(pfc.lossless_priority));
  }
  if (control_priority >= priorities) {
    c.fail("control_priority", "must be below priorities (" + std::to_string(priorities) +
                                   "), got " + std::to_string(control_priority));
  }
  if (pfc.enabled && control_priority == pfc.lossless_priority) {
    c.fail("control_priority", "must differ from pfc.lossless_priority (" +
                                   std::to_string(pfc.lossless_priority) + ")");
  }
  const std::uint64_t carved =
      static_cast<std::uint64_t>(ports) * (pfc.reserve.bytes + pfc.headroom.bytes);
  if (pfc.enabled && buffer.bytes <= carved) {
    c.fail("buffer", "must exceed ports x (pfc.reserve + pfc.headroom) = " +
                         core::to_string(core::ByteSize{carved}) + ", got " +
                         core::to_string(buffer));
  }
}

// ---------------------------------------------------------------------------------------------
// Arithmetic

double red_mark_probability(std::uint64_t queue_bytes, std::uint64_t kmin, std::uint64_t kmax,
                            double pmax) {
  if (queue_bytes <= kmin) return 0;
  if (queue_bytes >= kmax) return 1;
  return pmax * static_cast<double>(queue_bytes - kmin) / static_cast<double>(kmax - kmin);
}

SharedBuffer::SharedBuffer(const Params& params) : params_(params) {
  if (params.capacity > std::numeric_limits<std::uint32_t>::max()) {
    throw std::invalid_argument("SharedBuffer: capacity must be below 4 GiB");
  }
  // The lossless class's reserve and headroom are set aside on every port; the rest is shared.
  const std::uint64_t carved =
      params.lossless_priority < 0
          ? 0
          : static_cast<std::uint64_t>(params.ports) * (params.reserve + params.headroom);
  shared_capacity_ = params.capacity > carved ? params.capacity - carved : 0;
}

SharedBuffer::Verdict SharedBuffer::admit(PortAccount& in, PortAccount& out, int priority,
                                          std::uint32_t bytes) {
  Verdict v{Admit::kAccepted, Pfc::kNone};
  if (lossless(priority)) {
    v = admit_lossless(in.ingress, bytes);
  } else if (!admit_lossy(out, priority, bytes)) {
    v.admit = Admit::kDroppedBuffer;
  }
  if (v.admit == Admit::kAccepted) {
    out.queue_bytes[priority] += bytes;
    out.port_bytes += bytes;
    used_ += bytes;
    high_water_ = std::max(high_water_, used_);
  }
  return v;
}

SharedBuffer::Verdict SharedBuffer::admit_lossless(Ingress& g, std::uint32_t bytes) {
  const std::uint32_t to_reserve =
      static_cast<std::uint32_t>(std::min<std::uint64_t>(bytes, params_.reserve - g.reserve));
  const std::uint32_t to_shared = bytes - to_reserve;
  // Once anything sits in headroom the class is over its threshold: later frames (still in
  // flight when XOFF left) go to headroom too, so the class drains before it refills.
  const bool fits_shared =
      g.headroom == 0 && (to_shared == 0 || (std::uint64_t{g.shared} + to_shared <= threshold() &&
                                             shared_used_ + to_shared <= shared_capacity_));
  Verdict v{Admit::kAccepted, Pfc::kNone};
  if (fits_shared) {
    g.reserve += to_reserve;
    g.shared += to_shared;
    shared_used_ += to_shared;
  } else if (std::uint64_t{g.headroom} + bytes <= params_.headroom) {
    g.headroom += bytes;
  } else {
    v.admit = Admit::kDroppedHeadroom;
  }
  const bool over =
      v.admit != Admit::kAccepted || g.headroom > 0 || (g.shared > 0 && g.shared >= threshold());
  if (!g.xoff && over) {
    g.xoff = true;
    v.pfc = Pfc::kPause;
  }
  return v;
}

bool SharedBuffer::admit_lossy(const PortAccount& out, int priority, std::uint32_t bytes) {
  if (std::uint64_t{out.queue_bytes[priority]} + bytes > threshold()) return false;
  if (shared_used_ + bytes > shared_capacity_) return false;
  shared_used_ += bytes;
  return true;
}

SharedBuffer::Pfc SharedBuffer::release(PortAccount& in, PortAccount& out, int priority,
                                        std::uint32_t bytes) {
  out.queue_bytes[priority] -= bytes;
  out.port_bytes -= bytes;
  used_ -= bytes;
  if (lossless(priority)) return release_lossless(in.ingress, bytes);
  shared_used_ -= bytes;
  return Pfc::kNone;
}

SharedBuffer::Pfc SharedBuffer::release_lossless(Ingress& g, std::uint32_t bytes) {
  // Headroom empties first, then the shared share, then the reserve (HPCC's order), so the
  // class leaves the over-threshold state as early as its bytes allow.
  std::uint32_t left = bytes;
  const std::uint32_t from_headroom = std::min(left, g.headroom);
  g.headroom -= from_headroom;
  left -= from_headroom;
  const std::uint32_t from_shared = std::min(left, g.shared);
  g.shared -= from_shared;
  shared_used_ -= from_shared;
  g.reserve -= left - from_shared;
  if (g.xoff && g.headroom == 0 &&
      (g.shared == 0 || g.shared + params_.resume_offset <= threshold())) {
    g.xoff = false;
    return Pfc::kResume;
  }
  return Pfc::kNone;
}

// ---------------------------------------------------------------------------------------------
// The module

namespace {
// Before anything is sized from it.
const SwitchConfig& checked(const SwitchConfig& c) {
  core::validate_config(c);
  return c;
}

SharedBuffer::Params buffer_params(const SwitchConfig& c) {
  SharedBuffer::Params p;
  p.capacity = c.buffer.bytes;
  p.alpha = c.alpha;
  p.ports = c.ports;
  p.priorities = c.priorities;
  p.lossless_priority = c.pfc.enabled ? c.pfc.lossless_priority : -1;
  p.reserve = c.pfc.reserve.bytes;
  p.headroom = c.pfc.headroom.bytes;
  p.resume_offset = c.pfc.resume_offset.bytes;
  return p;
}
}  // namespace

Switch::Switch(sc_core::sc_module_name name, const SwitchConfig& config)
    : sc_module(name),
      ports_(static_cast<std::size_t>(checked(config).ports)),
      ecmp_seed_(config.ecmp_seed),
      priorities_(static_cast<std::uint8_t>(config.priorities)),
      ecn_enabled_(config.ecn.enabled),
      latency_ps_(static_cast<core::TimePs>(config.pipeline_latency.ps)),
      buffer_(buffer_params(config)),
      random_(core::Random::mix(config.ecmp_seed ^ 0xec4ec4ec4ull)),
      config_(config) {
  const int last = config_.priorities - 1;
  for (int p = 0; p < kMaxPriorities; ++p) {
    priority_queue_[p] = static_cast<std::uint8_t>(std::min(p, last));
  }
  int n = 0;
  service_order_[n++] = static_cast<std::uint8_t>(config_.control_priority);
  for (int q = last; q >= 0; --q) {
    if (q != config_.control_priority) service_order_[n++] = static_cast<std::uint8_t>(q);
  }
  make_stats();
  track_ = core::trace_writer().track(this->name());
}

Switch::~Switch() {
  for (auto& port : ports_) {
    for (auto& fifo : port.fifo) release_all(fifo);
  }
  core::stats_registry().forget(name());
}

void Switch::make_stats() {
  for (int i = 0; i < config_.ports; ++i) {
    core::StatsGroup g(std::string(name()) + ".port" + std::to_string(i));
    Port& p = ports_[i];
    PortStats& s = p.stats;
    s.rx_frames = &g.attach("rx_frames", p.rx_frames, "1", "frames received, PFC included");
    s.rx_bytes = &g.attach("rx_bytes", p.rx_bytes, "B", "frame bytes received (MAC header to FCS)");
    s.tx_frames = &g.attach("tx_frames", p.tx_frames, "1", "frames sent, PFC included");
    s.tx_bytes = &g.attach("tx_bytes", p.tx_bytes, "B", "frame bytes sent (MAC header to FCS)");
    s.drops_buffer =
        &g.attach("drops_buffer", p.drops_buffer, "1", "lossy frames tail-dropped at this egress");
    s.drops_no_route =
        &g.attach("drops_no_route", p.drops_no_route, "1", "frames received with no route");
    s.drops_headroom = &g.attach("drops_headroom", p.drops_headroom, "1",
                                 "lossless frames received past the PFC headroom");
    s.pfc_pause_sent =
        &g.attach("pfc_pause_sent", p.pfc_pause_sent, "1", "PFC frames sent with an XOFF");
    s.pfc_resume_sent =
        &g.attach("pfc_resume_sent", p.pfc_resume_sent, "1", "PFC frames sent with XON only");
    s.pfc_pause_received = &g.attach("pfc_pause_received", p.pfc_pause_received, "1",
                                     "PFC frames received with an XOFF");
    s.pfc_resume_received = &g.attach("pfc_resume_received", p.pfc_resume_received, "1",
                                      "PFC frames received with XON only");
    s.ecn_marks = &g.attach("ecn_marks", p.ecn_marks, "1", "ECT frames marked CE at this egress");
    s.max_queue_bytes = &g.attach("max_queue_bytes", p.max_queue_bytes, "B",
                                  "most frame bytes queued for this egress at once");
  }
  core::StatsGroup(name()).attach("buffer_high_water_bytes", high_water_, "B",
                                  "most frame bytes held in the shared buffer");
}

void Switch::attach(int port, Link& link, int side) {
  if (port < 0 || port >= config_.ports) {
    throw std::out_of_range(std::string(name()) + ": port " + std::to_string(port) +
                            " out of range (ports: " + std::to_string(config_.ports) + ")");
  }
  Port& p = ports_[port];
  if (p.link) {
    throw std::logic_error(std::string(name()) + ": port " + std::to_string(port) +
                           " attached twice");
  }
  link.attach(side, *this, port);
  p.link = &link;
  p.side = side;
  p.rate = link.config().rate;
  p.xoff_ps = static_cast<core::TimePs>(
      p.rate.time_for(std::uint64_t{kQuantumBytes} * config_.pfc.pause_quanta).ps);
}

// ---------------------------------------------------------------------------------------------
// Ingress

void Switch::receive(Packet* packet, int in_port) {
  const std::uint32_t bytes = packet->frame_bytes();
  Port& in = ports_[in_port];
  in.rx_frames.add();
  in.rx_bytes.add(bytes);
  if (packet->kind == FrameKind::kPfcPause) return on_pause_frame(packet, in_port);

  const int out_port = route(*packet);
  if (out_port < 0) {
    in.drops_no_route.add();
    return packet_pool().release(packet);
  }
  Port& out = ports_[out_port];
  const int priority = priority_queue_[packet->priority & 7];
  const auto verdict = buffer_.admit(in.account, out.account, priority, bytes);
  if (verdict.pfc != SharedBuffer::Pfc::kNone) announce_pfc(in_port, priority, verdict.pfc);
  switch (verdict.admit) {
    case SharedBuffer::Admit::kAccepted:
      return enqueue(packet, in_port, out_port, priority);
    case SharedBuffer::Admit::kDroppedBuffer:
      out.drops_buffer.add();
      break;
    case SharedBuffer::Admit::kDroppedHeadroom:
      in.drops_headroom.add();
      break;
  }
  packet_pool().release(packet);
}

// The egress port for a frame, or -1 when the table has no usable one.
int Switch::route(const Packet& p) const {
  const int port = route_candidate(p);
  return port >= 0 && ports_[port].link ? port : -1;
}

// The port the table picks, before checking that anything is attached to it.
int Switch::route_candidate(const Packet& p) const {
  const RouteTable::Group group = routes_.lookup(p.destination());
  if (group.count == 0) return -1;
  const std::uint32_t member =
      group.count == 1 ? 0 : ecmp_member(flow_hash(p, ecmp_seed_), group.count);
  const int port = group.ports[member];
  return port < static_cast<int>(ports_.size()) ? port : -1;
}

// A frame's way through: the ingress port's counters and accounting, the forwarding entry, then
// the egress port's state, accounting and queue.
void Switch::prefetch_receive(int port, const Packet* packet, int stage) const {
  const Port& in = ports_[port];
  if (stage == 1) {
    __builtin_prefetch(&in);
    __builtin_prefetch(&in.account);
    return;
  }
  if (packet->kind == FrameKind::kPfcPause) return;
  if (stage == 2) {
    routes_.prefetch(packet->destination());
    return;
  }
  const int out_port = route_candidate(*packet);
  if (out_port < 0) return;
  const Port& out = ports_[out_port];
  __builtin_prefetch(&out, 1);
  __builtin_prefetch(&out.account, 1);
  __builtin_prefetch(&out.fifo[priority_queue_[packet->priority & 7]], 1);
}

// The link will ask for a frame: the port's state and queues, the frame at the head of the
// queue it would serve, and the accounting of the port that frame came in on.
void Switch::prefetch_send(int port, int stage) const {
  const Port& p = ports_[port];
  if (stage == 1) {
    __builtin_prefetch(&p);
    __builtin_prefetch(&p.fifo[0]);
    __builtin_prefetch(&p.fifo[4]);
    __builtin_prefetch(&p.account);
    return;
  }
  const int prio = first_to_serve(p);
  if (prio < 0) return;
  const Packet* head = p.fifo[prio].front();
  if (stage == 2) {
    __builtin_prefetch(head);
  } else {
    __builtin_prefetch(&ports_[head->in_port].account, 1);
  }
}

// The first nonempty queue in service order, ignoring pauses and eligibility; -1 when none.
int Switch::first_to_serve(const Port& p) const {
  if (!p.nonempty) return -1;
  for (int i = 0; i < priorities_; ++i) {
    const int prio = service_order_[i];
    if (p.nonempty & (1u << prio)) return prio;
  }
  return -1;
}

void Switch::enqueue(Packet* p, int in_port, int out_port, int priority) {
  const core::TimePs eligible = core::now_ps() + latency_ps_;
  p->due_ps = eligible;
  p->in_port = static_cast<std::uint16_t>(in_port);
  Port& out = ports_[out_port];
  out.fifo[priority].push_back(p);
  out.nonempty |= static_cast<std::uint8_t>(1u << priority);

  raise_to(out.max_queue_bytes, out.account.port_bytes);
  raise_to(high_water_, buffer_.used());
  if (out.next_call_ps > eligible) {
    out.next_call_ps = eligible;
    out.link->wake_at(out.side, eligible);
  }
}

void Switch::wake(int port) {
  Port& p = ports_[port];
  p.next_call_ps = core::now_ps();
  p.link->wake(p.side);
}

// PFC from the peer pauses (or resumes) our egress on that port, per priority.
void Switch::on_pause_frame(Packet* frame, int port) {
  Port& p = ports_[port];
  const core::TimePs now = core::now_ps();
  bool paused = false, resumed = false;
  for (int prio = 0; prio < kMaxPriorities; ++prio) {
    if (!(frame->pfc_enable & (1u << prio))) continue;
    const std::uint16_t quanta = frame->pfc_quanta[prio];
    const int queue = priority_queue_[prio];
    const auto bit = static_cast<std::uint8_t>(1u << queue);
    if (quanta == 0) {
      p.paused_until[queue] = 0;
      p.paused &= static_cast<std::uint8_t>(~bit);
      resumed = true;
    } else {
      p.paused_until[queue] = now + static_cast<core::TimePs>(
                                        p.rate.time_for(std::uint64_t{kQuantumBytes} * quanta).ps);
      p.paused |= bit;
      paused = true;
    }
  }
  packet_pool().release(frame);
  (paused ? p.pfc_pause_received : p.pfc_resume_received).add();
  if (resumed && p.nonempty && p.link) wake(port);
}

// Our ingress class crossed a PFC threshold: tell the upstream port, ahead of queued data.
void Switch::announce_pfc(int in_port, int priority, SharedBuffer::Pfc change) {
  Port& p = ports_[in_port];
  const auto bit = static_cast<std::uint8_t>(1u << priority);
  if (change == SharedBuffer::Pfc::kPause) {
    p.xoff |= bit;
  } else {
    p.xoff &= static_cast<std::uint8_t>(~bit);
  }
  p.pfc_pending |= bit;
  PODSIM_LOG(*this, kDebug, "port {} priority {}: {}", in_port, priority,
             change == SharedBuffer::Pfc::kPause ? "XOFF" : "XON");
  if (p.link) wake(in_port);
}

// ---------------------------------------------------------------------------------------------
// Egress

Packet* Switch::next_to_send(int port, core::TimePs now, core::TimePs& retry_at) {
  Port& p = ports_[port];
  if (p.xoff && now >= p.refresh_ps) p.pfc_pending |= p.xoff;
  core::TimePs retry = kNever;
  Packet* frame = p.pfc_pending ? make_pfc_frame(port, now) : take_eligible(port, now, retry);
  // With more queued the link asks again once this frame is out; with nothing, an enqueue or a
  // PFC change wakes it, and a held XOFF wants refreshing in time.
  if (frame && (p.nonempty || p.pfc_pending)) retry = now;
  if (p.xoff) retry = std::min(retry, p.refresh_ps);
  p.next_call_ps = retry;
  retry_at = retry;
  return frame;
}

// The first eligible frame in service order, or nullptr with `retry` lowered to when one that
// waits (on its pipeline latency or a PFC pause) may go.
Packet* Switch::take_eligible(int port, core::TimePs now, core::TimePs& retry) {
  Port& p = ports_[port];
  if (!p.nonempty) return nullptr;
  for (int i = 0; i < priorities_; ++i) {
    const int prio = service_order_[i];
    if (!(p.nonempty & (1u << prio))) continue;
    if ((p.paused & (1u << prio)) && p.paused_until[prio] > now) {
      retry = std::min(retry, p.paused_until[prio]);
      continue;
    }
    const core::TimePs eligible = p.fifo[prio].front()->due_ps;
    if (eligible > now) {
      retry = std::min(retry, eligible);
      continue;
    }
    return dequeue(port, prio);
  }
  return nullptr;
}

Packet* Switch::dequeue(int port, int priority) {
  Port& p = ports_[port];
  Packet* packet = p.fifo[priority].pop_front();
  if (p.fifo[priority].empty()) {
    p.nonempty &= static_cast<std::uint8_t>(~(1u << priority));
  } else {
    // The next frame has waited long enough to leave the cache; it is read when the link asks
    // again, one frame time from now.
    __builtin_prefetch(p.fifo[priority].front());
  }
  const std::uint32_t bytes = packet->frame_bytes();
  const int in_port = packet->in_port;
  const auto change = buffer_.release(ports_[in_port].account, p.account, priority, bytes);
  if (change != SharedBuffer::Pfc::kNone) announce_pfc(in_port, priority, change);
  if (ecn_enabled_ && is_ect(packet->ecn)) mark_ecn(packet, port, priority);
  p.tx_frames.add();
  p.tx_bytes.add(bytes);
  return packet;
}

// RED on the queue the frame leaves behind (as HPCC marks after dequeue).
void Switch::mark_ecn(Packet* packet, int port, int priority) {
  Port& p = ports_[port];
  const double probability =
      red_mark_probability(p.account.queue_bytes[priority], config_.ecn.kmin.bytes,
                           config_.ecn.kmax.bytes, config_.ecn.pmax);
  if (probability <= 0) return;
  ++red_decisions_;
  if (probability < 1 && !random_.chance(probability)) return;
  packet->ecn = Ecn::kCe;
  p.ecn_marks.add();
}

// One frame carries the current state of every priority whose state changed: XOFF with the
// configured quanta, XON as zero quanta.
Packet* Switch::make_pfc_frame(int port, core::TimePs now) {
  Port& p = ports_[port];
  Packet* f = packet_pool().acquire_raw();
  f->kind = FrameKind::kPfcPause;
  f->src_mac = mac_of(kNoEndpoint);
  f->dst_mac = kPfcDestinationMac;
  f->ecn = Ecn::kNotEct;
  f->pfc_enable = p.pfc_pending;
  for (int prio = 0; prio < kMaxPriorities; ++prio) {
    if (p.pfc_pending & (1u << prio)) {
      f->pfc_quanta[prio] =
          static_cast<std::uint16_t>((p.xoff & (1u << prio)) ? config_.pfc.pause_quanta : 0);
    }
  }
  p.pfc_pending = 0;
  const bool xoff = (f->pfc_enable & p.xoff) != 0;
  if (xoff) p.refresh_ps = now + p.xoff_ps / 2;
  (xoff ? p.pfc_pause_sent : p.pfc_resume_sent).add();
  p.tx_frames.add();
  p.tx_bytes.add(f->frame_bytes());
  auto& trace = core::trace_writer();
  if (trace.enabled()) trace.instant(track_, xoff ? "pfc_xoff" : "pfc_xon", now);
  return f;
}

}  // namespace podsim::fabric
