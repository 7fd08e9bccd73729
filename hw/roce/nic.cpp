// The NIC's verbs, its sending side (staging packets, the per-port scheduler) and its timers.
// Received packets are handled in nic_receive.cpp.
#include "hw/roce/nic.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <stdexcept>
#include <string>

#include "core/bulk_transfer.h"
#include "core/config_binding.h"
#include "core/kernel.h"
#include "core/random.h"
#include "hw/roce/segmentation.h"

namespace podsim::roce {

using fabric::Packet;
using fabric::packet_pool;

// Counters are the port's own (see PortCounters); the registry reads them.
Nic::PortStats Nic::attach_port_stats(const std::string& prefix, PortCounters& c) {
  core::StatsGroup g(prefix);
  PortStats s{};
  s.tx_packets = &g.attach("tx_packets", c.tx_packets, "1", "frames sent, control and data");
  s.tx_bytes = &g.attach("tx_bytes", c.tx_bytes, "B", "wire bytes sent, preamble and gap included");
  s.rx_packets = &g.attach("rx_packets", c.rx_packets, "1", "frames received");
  s.rx_bytes = &g.attach("rx_bytes", c.rx_bytes, "B", "wire bytes received");
  s.data_packets_sent = &g.attach("data_packets_sent", c.data_packets_sent, "1",
                                  "requests and READ responses sent, retransmissions included");
  s.data_bytes_sent =
      &g.attach("data_bytes_sent", c.data_bytes_sent, "B", "payload of the data packets sent");
  s.data_packets_received = &g.attach("data_packets_received", c.data_packets_received, "1",
                                      "requests and READ responses received");
  s.acks_sent = &g.attach("acks_sent", c.acks_sent, "1", "ACKs sent");
  s.acks_received = &g.attach("acks_received", c.acks_received, "1", "ACKs received");
  s.naks_sent =
      &g.attach("naks_sent", c.naks_sent, "1", "NAKs sent (sequence, RNR, access, invalid)");
  s.naks_received = &g.attach("naks_received", c.naks_received, "1", "NAKs received");
  s.retransmitted_packets = &g.attach("retransmitted_packets", c.retransmitted_packets, "1",
                                      "requests sent again by go-back-N");
  s.timeouts = &g.attach("timeouts", c.timeouts, "1", "retransmission timer expiries");
  s.duplicates_received =
      &g.attach("duplicates_received", c.duplicates_received, "1", "duplicate packets dropped");
  s.out_of_sequence_received = &g.attach("out_of_sequence_received", c.out_of_sequence_received,
                                         "1", "packets ahead of a gap dropped");
  s.cnps_sent = &g.attach("cnps_sent", c.cnps_sent, "1", "congestion notifications sent");
  s.cnps_received =
      &g.attach("cnps_received", c.cnps_received, "1", "congestion notifications received");
  s.pfc_pauses_received = &g.attach("pfc_pauses_received", c.pfc_pauses_received, "1",
                                    "PFC frames received that pause a priority");
  s.dropped = &g.attach("dropped", c.dropped, "1", "packets for an unknown or unconnected QP");
  return s;
}

Nic::Qp::Qp(std::uint32_t qpn_, int port_, CompletionQueue& send_cq_, CompletionQueue& recv_cq_,
            const RoceConfig& config, double line_rate)
    : qpn(qpn_),
      port(port_),
      requester(static_cast<std::uint32_t>(config.mtu), config.ack_every, config.timer_ps(),
                config.retry_limit, config.window_control),
      responder(config.ack_every, static_cast<core::TimePs>(config.nak_interval.ps)),
      send_cq(&send_cq_),
      recv_cq(&recv_cq_),
      dcqcn(config.dcqcn, line_rate) {
  if (config.window_control) {
    window =
        std::make_unique<CongestionWindow>(config.window, static_cast<std::uint32_t>(config.mtu));
  }
  for (FlowKind kind : {kRequesterFlow, kResponderFlow}) {
    flow[kind].qp = this;
    flow[kind].kind = kind;
  }
}

Nic::Nic(sc_core::sc_module_name name, int ports, const RoceConfig& config, bool functional)
    : sc_core::sc_module(name),
      queue_(&core::event_queue()),
      memory_socket("memory_socket"),
      config_(core::validate_config(config)),
      functional_(functional),
      rto_ps_(config.timer_ps()),
      // TCP without ECN sends Not-ECT: congested switches drop it rather than mark it.
      data_ecn_(config.window_control && !config.window.ecn ? fabric::Ecn::kNotEct
                                                            : fabric::Ecn::kEct0) {
  if (ports < 1 || ports > 256) {
    throw std::invalid_argument(
        fmt::format("{}: a NIC has 1 to 256 ports, got {}", this->name(), ports));
  }
  ports_.resize(static_cast<std::size_t>(ports));
  for (int p = 0; p < ports; ++p) {
    ports_[p].stats =
        attach_port_stats(fmt::format("{}.port{}", this->name(), p), ports_[p].counters);
  }
  core::StatsGroup g(this->name());
  completions_ = &g.counter("completions", "1", "work completions delivered, both CQ kinds");
  completion_errors_ = &g.counter("completion_errors", "1", "completions with an error status");
}

void Nic::fire(std::uint32_t tag) {
  if (tag == kArrival) return on_arrival();
  on_timer();
}

Nic::~Nic() {
  for (auto& qp : qps_) {
    discard(qp->flow[kRequesterFlow]);
    discard(qp->flow[kResponderFlow]);
  }
  while (!arrivals_.empty()) {
    packet_pool().release(arrivals_.front().packet);
    arrivals_.pop_front();
  }
}

// ---------------------------------------------------------------------------------------------
// Wiring and verbs

void Nic::reject(const char* call, const std::string& problem) const {
  throw std::invalid_argument(fmt::format("{}: {}: {}", name(), call, problem));
}

void Nic::attach(int port, fabric::Link& link, int side, fabric::EndpointId address) {
  if (port < 0 || port >= ports()) {
    reject("attach", fmt::format("port {} does not exist (the NIC has {})", port, ports()));
  }
  Port& p = ports_[port];
  if (p.link) reject("attach", fmt::format("port {} is already attached", port));
  if (address == fabric::kNoEndpoint) reject("attach", "the endpoint address is not set");
  link.attach(side, *this, port);
  p.link = &link;
  p.side = side;
  p.address = address;
  p.ip = fabric::ipv4_of(address);
  p.mac = fabric::mac_of(address);
  p.rate = link.config().rate;
}

fabric::EndpointId Nic::address(int port) const {
  if (port < 0 || port >= ports()) return fabric::kNoEndpoint;
  return ports_[port].address;
}

const Nic::PortStats& Nic::port_stats(int port) const {
  if (port < 0 || port >= ports())
    reject("port_stats", fmt::format("port {} does not exist", port));
  return ports_[port].stats;
}

Nic::Qp& Nic::qp_of(std::uint32_t qpn, const char* call) {
  return const_cast<Qp&>(static_cast<const Nic*>(this)->qp_of(qpn, call));
}

const Nic::Qp& Nic::qp_of(std::uint32_t qpn, const char* call) const {
  if (qpn < kFirstQpn || qpn - kFirstQpn >= qps_.size()) {
    reject(call, fmt::format("QP {} does not exist on this NIC", qpn));
  }
  return *qps_[qpn - kFirstQpn];
}

std::uint32_t Nic::create_qp(int port, CompletionQueue& send_cq, CompletionQueue& recv_cq) {
  if (port < 0 || port >= ports()) {
    reject("create_qp", fmt::format("port {} does not exist (the NIC has {})", port, ports()));
  }
  if (!ports_[port].link && !ports_[port].network) {
    reject("create_qp",
           fmt::format("port {} is not attached to a link; call attach() first", port));
  }
  if (qps_.size() >= kPsnMask - kFirstQpn) reject("create_qp", "out of 24-bit QP numbers");
  const auto qpn = static_cast<std::uint32_t>(kFirstQpn + qps_.size());
  qps_.push_back(std::make_unique<Qp>(qpn, port, send_cq, recv_cq, config_,
                                      ports_[port].rate.bits_per_second));
  return qpn;
}

void Nic::connect_qp(std::uint32_t qpn, fabric::EndpointId remote, std::uint32_t remote_qpn,
                     std::uint32_t send_psn, std::uint32_t expected_psn) {
  Qp& qp = qp_of(qpn, "connect_qp");
  if (qp.state != QpState::kInit) {
    reject("connect_qp", fmt::format("QP {} is already connected or in error", qpn));
  }
  if (remote == fabric::kNoEndpoint) reject("connect_qp", "the remote endpoint is not set");
  if (remote_qpn > kPsnMask || remote_qpn < kFirstQpn) {
    reject("connect_qp", fmt::format("remote QPN {} is not a 24-bit QPN of a connected QP "
                                     "(at least {})",
                                     remote_qpn, kFirstQpn));
  }
  if (send_psn > kPsnMask || expected_psn > kPsnMask) {
    reject("connect_qp", fmt::format("PSNs are 24 bits; got send_psn {:#x}, expected_psn {:#x}",
                                     send_psn, expected_psn));
  }
  const Port& port = ports_[qp.port];
  qp.remote = remote;
  qp.remote_qpn = remote_qpn;
  qp.remote_ip = fabric::ipv4_of(remote);
  qp.remote_mac = fabric::mac_of(remote);
  // The UDP source port is the flow's ECMP entropy; RoCE v2 uses 0xC000 and up.
  const std::uint64_t flow = (std::uint64_t{port.address} << 32) ^ (std::uint64_t{qpn} << 8) ^
                             (std::uint64_t{remote} << 40) ^ remote_qpn;
  qp.udp_source = static_cast<std::uint16_t>(0xC000 | (core::Random::mix(flow) & 0x3FFF));
  qp.requester.set_initial_psn(send_psn);
  qp.responder.set_initial_psn(expected_psn);
  qp.state = QpState::kConnected;
}

void Nic::check_send(const Qp& qp, const SendRequest& r) const {
  if (sc_core::sc_get_status() &
      (sc_core::SC_ELABORATION | sc_core::SC_BEFORE_END_OF_ELABORATION)) {
    reject("post_send", "called during elaboration; post from a process or after sc_start()");
  }
  if (qp.state == QpState::kInit) {
    reject("post_send", fmt::format("QP {} is not connected; call connect_qp first", qp.qpn));
  }
  if (qp.state == QpState::kError) {
    reject("post_send", fmt::format("QP {} is in the error state", qp.qpn));
  }
  if (r.length == 0) reject("post_send", "length 0: messages carry at least one byte here");
  if (r.length > kMaxMessageBytes) {
    reject("post_send", fmt::format("length {} exceeds the 2^31-byte message limit", r.length));
  }
  if (r.local_address + r.length < r.local_address ||
      r.remote_address + r.length < r.remote_address) {
    reject("post_send", "address + length wraps around 2^64");
  }
  if (packet_count(r.length, static_cast<std::uint32_t>(config_.mtu)) >
      Requester::kMaxOutstanding) {
    reject("post_send", fmt::format("a {}-byte message needs more than 2^23 - 1 PSNs at MTU {}",
                                    r.length, config_.mtu));
  }
  if (static_cast<int>(r.opcode) > static_cast<int>(SendOpcode::kRead)) {
    reject("post_send", "unknown opcode");
  }
}

void Nic::post_send(std::uint32_t qpn, const SendRequest& request) {
  Qp& qp = qp_of(qpn, "post_send");
  check_send(qp, request);
  if (ports_[qp.port].network) return flow_post(qp, request);
  const core::TimePs now = core::now_ps();
  qp.requester.post(request, now);
  kick(qp, kRequesterFlow, now + static_cast<core::TimePs>(config_.tx_pipeline_latency.ps));
}

void Nic::post_recv(std::uint32_t qpn, const RecvRequest& request) {
  Qp& qp = qp_of(qpn, "post_recv");
  if (qp.state == QpState::kError) {
    reject("post_recv", fmt::format("QP {} is in the error state", qpn));
  }
  if (request.length > kMaxMessageBytes) {
    reject("post_recv",
           fmt::format("length {} exceeds the 2^31-byte message limit", request.length));
  }
  if (request.address + request.length < request.address) {
    reject("post_recv", "address + length wraps around 2^64");
  }
  qp.receives.push_back(request);
}

Nic::QpState Nic::qp_state(std::uint32_t qpn) const { return qp_of(qpn, "qp_state").state; }

double Nic::qp_rate(std::uint32_t qpn) {
  Qp& qp = qp_of(qpn, "qp_rate");
  qp.dcqcn.advance(core::now_ps());
  return qp.dcqcn.rate();
}

const Requester& Nic::requester(std::uint32_t qpn) const {
  return qp_of(qpn, "requester").requester;
}

// ---------------------------------------------------------------------------------------------
// Sending: each flow keeps one packet staged (its payload read under way); the port's scheduler
// hands the link the first ready one.

void Nic::kick(Qp& qp, FlowKind kind, core::TimePs issue_ps) {
  if (qp.state != QpState::kConnected) return;
  Flow& f = qp.flow[kind];
  if (!f.staged && !stage(qp, kind, issue_ps)) return;
  link_flow(qp, kind);
  wake_at(qp.port, std::max(f.ready_ps, qp.next_send_ps));
}

void Nic::discard(Flow& flow) {
  if (!flow.staged) return;
  packet_pool().release(flow.staged);
  flow.staged = nullptr;
}

void Nic::restart_requester(Qp& qp) {
  discard(qp.flow[kRequesterFlow]);
  const core::TimePs now = core::now_ps();
  kick(qp, kRequesterFlow, now + static_cast<core::TimePs>(config_.tx_pipeline_latency.ps));
}

bool Nic::stage(Qp& qp, FlowKind kind, core::TimePs issue_ps) {
  return kind == kRequesterFlow ? stage_request(qp, issue_ps) : stage_response(qp, issue_ps);
}

Packet* Nic::new_packet(const Qp& qp, int priority) const {
  const Port& port = ports_[qp.port];
  Packet* p = packet_pool().acquire_raw();
  p->src_mac = port.mac;
  p->dst_mac = qp.remote_mac;
  p->priority = static_cast<std::uint8_t>(priority);
  p->src_ip = port.ip;
  p->dst_ip = qp.remote_ip;
  p->dscp = static_cast<std::uint8_t>(priority << 3);  // class selector of the priority
  p->ecn = data_ecn_;
  p->src_port = qp.udp_source;
  p->dest_qp = qp.remote_qpn;
  p->created_ps = core::now_ps();
  return p;
}

bool Nic::transfer(tlm::tlm_command command, std::uint64_t address, std::uint8_t* data,
                   std::uint32_t length, core::TimePs at, core::TimePs& done) {
  return core::bulk_transfer(memory_socket, trans_, command, address, data, length, at, done);
}

bool Nic::move_untimed(tlm::tlm_command command, std::uint64_t address, std::uint8_t* data,
                       std::uint64_t length) {
  if (length == 0) return true;
  trans_.set_command(functional_ ? command : tlm::TLM_IGNORE_COMMAND);
  trans_.set_address(address);
  trans_.set_data_ptr(data);
  trans_.set_data_length(static_cast<unsigned int>(length));
  trans_.set_streaming_width(static_cast<unsigned int>(length));
  trans_.set_byte_enable_ptr(nullptr);
  trans_.set_byte_enable_length(0);
  trans_.set_dmi_allowed(false);
  if (functional_) return memory_socket->transport_dbg(trans_) == length;
  // Timing only: an ignored command checks the address and takes no time.
  trans_.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
  memory_socket->b_transport(trans_, delay);
  return trans_.get_response_status() == tlm::TLM_OK_RESPONSE;
}

bool Nic::stage_request(Qp& qp, core::TimePs issue_ps) {
  if (!qp.requester.can_send()) return false;
  if (qp.window && qp.requester.send_seq() - qp.requester.unacked_seq() >= qp.window->allowed()) {
    return false;  // an ACK opens it again (after_progress)
  }
  const Requester::Tx tx = qp.requester.next_packet();
  const SendRequest& r = qp.requester.wqe(tx.wqe).request;
  const Segment seg =
      request_segment(r.opcode, r.length, static_cast<std::uint32_t>(config_.mtu), tx.index);
  Packet* p = new_packet(qp, config_.data_priority);
  p->opcode = seg.opcode;
  p->ack_request = tx.ack_request;
  p->psn = tx.psn;
  if (seg.reth) {
    p->has_reth = true;
    p->remote_address = r.remote_address + seg.offset;
    p->dma_length = static_cast<std::uint32_t>(is_read(r.opcode) ? seg.read_length : r.length);
  }
  if (seg.immediate) {
    p->has_immediate = true;
    p->immediate = r.immediate;
  }
  p->payload_bytes = seg.payload;
  core::TimePs ready = issue_ps;
  if (seg.payload > 0) {
    std::uint8_t* data = nullptr;
    if (functional_) {
      p->payload.resize(seg.payload);
      data = p->payload.data();
    }
    if (!transfer(tlm::TLM_READ_COMMAND, r.local_address + seg.offset, data, seg.payload, issue_ps,
                  ready)) {
      packet_pool().release(p);
      Completion c;
      c.status = CompletionStatus::kLocalAccessError;
      // Failing here could run completion callbacks inside the link's scheduler; defer it.
      schedule(core::now_ps(), Timed::Kind::kFail, index_of(qp), c);
      return false;
    }
  }
  Flow& f = qp.flow[kRequesterFlow];
  f.staged = p;
  f.ready_ps = ready;
  f.tx = tx;
  return true;
}

bool Nic::stage_response(Qp& qp, core::TimePs issue_ps) {
  if (qp.reads.empty()) return false;
  ReadWork& w = qp.reads.front();
  const std::uint32_t index = w.next++;
  const Segment seg =
      read_response_segment(w.length, static_cast<std::uint32_t>(config_.mtu), index);
  Packet* p = new_packet(qp, config_.data_priority);
  p->opcode = seg.opcode;
  p->psn = qp.responder.psn_of(w.first_seq + index);
  if (seg.aeth) {
    p->has_aeth = true;
    p->syndrome = fabric::AckSyndrome::kAck;
    p->msn = qp.responder.msn();
  }
  p->payload_bytes = seg.payload;
  std::uint8_t* data = nullptr;
  if (functional_) {
    p->payload.resize(seg.payload);
    data = p->payload.data();
  }
  core::TimePs ready = issue_ps;
  if (!transfer(tlm::TLM_READ_COMMAND, w.address + seg.offset, data, seg.payload, issue_ps,
                ready)) {
    // The READ asked for memory this NIC does not have: NAK it; nothing after it is answered.
    const std::uint32_t psn = p->psn;
    packet_pool().release(p);
    qp.reads.clear();
    qp.ack_deferred = false;
    send_ack(qp, fabric::AckSyndrome::kNakRemoteAccess, psn, core::now_ps());
    return false;
  }
  Flow& f = qp.flow[kResponderFlow];
  f.staged = p;
  f.ready_ps = ready;
  return true;
}

void Nic::link_flow(Qp& qp, FlowKind kind) {
  Flow& f = qp.flow[kind];
  if (f.linked) return;
  Port& port = ports_[qp.port];
  f.linked = true;
  ++port.linked;
  if (!port.rr) {
    f.prev = f.next = &f;
    port.rr = &f;
    return;
  }
  // Joins at the end of the round: just before the flow offered the link next.
  Flow& head = *port.rr;
  f.next = &head;
  f.prev = head.prev;
  head.prev->next = &f;
  head.prev = &f;
}

void Nic::unlink_flow(Port& port, Flow& f) {
  if (!f.linked) return;
  f.linked = false;
  if (--port.linked == 0) {
    port.rr = nullptr;
    return;
  }
  f.prev->next = f.next;
  f.next->prev = f.prev;
  if (port.rr == &f) port.rr = f.next;
}

Packet* Nic::next_to_send(int port_index, core::TimePs now, core::TimePs& retry_at) {
  Port& port = ports_[port_index];
  core::TimePs retry = kNever;
  Packet* p = nullptr;
  if (!port.control.empty()) {
    const Control& c = port.control.front();
    const core::TimePs ready = std::max(c.ready_ps, port.paused_until[config_.control_priority]);
    if (ready <= now) {
      p = build_control(c);
      port.control.pop_front();
    } else {
      retry = ready;
    }
  }
  if (!p) {
    const core::TimePs paused = port.paused_until[config_.data_priority];
    if (paused > now) {
      if (port.linked > 0) retry = std::min(retry, paused);
    } else {
      p = next_data(port, now, retry);
    }
  }
  if (!p) {
    retry_at = std::min(retry_at, retry);
    return nullptr;
  }
  const std::uint32_t wire = p->wire_bytes();
  port.counters.tx_packets.add();
  port.counters.tx_bytes.add(wire);
  // Whatever else waits decides at the next call when it can go; new work wakes the link.
  if (!port.control.empty() || port.linked > 0) retry_at = now;
  return p;
}

Packet* Nic::next_data(Port& port, core::TimePs now, core::TimePs& retry) {
  // Each flow is looked at once, starting where the last round stopped.
  for (int visits = port.linked; visits > 0 && port.rr; --visits) {
    Flow& f = *port.rr;
    port.rr = f.next;
    if (!f.staged) {
      unlink_flow(port, f);
      continue;
    }
    Qp& qp = *f.qp;
    const core::TimePs ready = std::max(f.ready_ps, qp.next_send_ps);
    if (ready <= now) return take(qp, f.kind, now);
    retry = std::min(retry, ready);
  }
  return nullptr;
}

Packet* Nic::take(Qp& qp, FlowKind kind, core::TimePs now) {
  Flow& f = qp.flow[kind];
  Packet* p = f.staged;
  f.staged = nullptr;
  PortCounters& s = ports_[qp.port].counters;
  s.data_packets_sent.add();
  s.data_bytes_sent.add(p->payload_bytes);
  if (kind == kRequesterFlow) {
    if (f.tx.retransmission) s.retransmitted_packets.add();
    if (qp.window) {
      const Requester& r = qp.requester;
      qp.window->on_send(f.tx.end_seq, r.sent_seq() - r.unacked_seq(), f.tx.retransmission, now);
    }
    qp.requester.on_transmit(f.tx, now);
    ensure_timer(qp);
  } else {
    ReadWork& w = qp.reads.front();
    if (w.next == w.packets) {
      qp.reads.pop_front();
      if (qp.reads.empty() && qp.ack_deferred) flush_deferred_ack(qp, now);
    }
  }
  if (config_.dcqcn.enabled) {
    const std::uint32_t wire = p->wire_bytes();
    qp.dcqcn.advance(now);
    qp.dcqcn.on_sent(wire, now);
    if (qp.dcqcn.limited()) {
      qp.next_send_ps =
          now + static_cast<core::TimePs>(core::Bandwidth{qp.dcqcn.rate()}.time_for(wire).ps);
    }
  }
  // The next packet's payload is read while this one is on the wire.
  stage(qp, kind, now);
  return p;
}

Packet* Nic::build_control(const Control& c) {
  Qp& qp = *qps_[c.qp];
  Packet* p = new_packet(qp, config_.control_priority);
  PortCounters& s = ports_[qp.port].counters;
  if (c.kind == Control::Kind::kCnp) {
    p->opcode = fabric::Opcode::kCnp;
    s.cnps_sent.add();
    return p;
  }
  p->opcode = fabric::Opcode::kAcknowledge;
  p->has_aeth = true;
  p->syndrome = c.syndrome;
  p->msn = c.msn;
  p->psn = c.psn;
  (c.syndrome == fabric::AckSyndrome::kAck ? s.acks_sent : s.naks_sent).add();
  return p;
}

// ---------------------------------------------------------------------------------------------
// Prefetch hints (core::Timed::prefetch, fabric::LinkEndpoint): a chip's NIC serves dozens of
// ports and QPs in turn, whose state has usually left the cache by the time their next frame
// comes. Each stage reads only what the stage before prefetched.

namespace {

void prefetch_range(const void* first, const void* end) {
  for (auto p = static_cast<const char*>(first); p < static_cast<const char*>(end); p += 64) {
    __builtin_prefetch(p, 1);
  }
}

}  // namespace

void Nic::prefetch_port(const Port& port) const { prefetch_range(&port, &port.counters.naks_sent); }

// The lines every packet of the QP touches, then those of sending and ACKs (flows, requester)
// or those of received requests (responder, the receive in progress).
void Nic::prefetch_qp(const Qp& qp, bool sending) const {
  if (sending) return prefetch_range(&qp, &qp.responder);
  __builtin_prefetch(&qp, 1);
  prefetch_range(&qp.responder, &qp.send_cq);
}

// Link stages 2 to 4: the port, then the control frame or flow it serves next, then that
// frame's QP or the flow's staged packet and requester.
void Nic::prefetch_send(int port_index, int stage) const {
  const Port& port = ports_[static_cast<std::size_t>(port_index)];
  if (stage == 1) return prefetch_port(port);
  const bool control = !port.control.empty();
  if (stage == 2) {
    if (control) __builtin_prefetch(&port.control.front());
    if (port.rr) prefetch_range(port.rr, port.rr + 1);
    return;
  }
  if (control) {
    const std::uint32_t qp = port.control.front().qp;
    if (qp < qps_.size()) __builtin_prefetch(qps_[qp].get());
  } else if (port.rr && port.rr->staged) {
    __builtin_prefetch(port.rr->staged);
    prefetch_range(&port.rr->qp->requester, &port.rr->qp->responder);
  }
}

void Nic::prefetch_receive(int port_index, const fabric::Packet* /*packet*/, int stage) const {
  if (stage != 1) return;
  prefetch_port(ports_[static_cast<std::size_t>(port_index)]);
}

// An arrival's packet is `hot` (in cache from stage 0): its QP's slot, then the QP's lines for
// that kind of packet, then its port and the work request an ACK advances.
void Nic::prefetch(std::uint32_t tag, const void* hot, int stage) const {
  if (tag != kArrival || !hot) return;
  const auto& p = *static_cast<const fabric::Packet*>(hot);
  const std::size_t index = p.dest_qp - kFirstQpn;
  if (p.dest_qp < kFirstQpn || index >= qps_.size()) return;
  if (stage == 1) {
    __builtin_prefetch(&qps_[index]);
    if (!arrivals_.empty()) __builtin_prefetch(&arrivals_.front());
    // The packet's other lines: releasing it to the pool rewrites all of them.
    prefetch_range(reinterpret_cast<const char*>(&p) + 64, &p + 1);
    return;
  }
  const Qp& qp = *qps_[index];
  const OpcodeClass kind = classify(p.opcode);
  const bool sending = kind == OpcodeClass::kAck || kind == OpcodeClass::kReadResponse;
  if (stage == 2) return prefetch_qp(qp, sending);
  if (stage == 3) {
    prefetch_port(ports_[static_cast<std::size_t>(qp.port)]);
    if (sending) __builtin_prefetch(qp.requester.oldest_unacked());
  }
}

// ---------------------------------------------------------------------------------------------
// Timers, retirement and failure

void Nic::schedule(core::TimePs at, Timed::Kind kind, std::uint32_t qp,
                   const Completion& completion) {
  const core::TimePs now = core::now_ps();
  at = std::max(at, now);
  Timed t;
  t.at = at;
  t.order = timer_order_++;
  t.kind = kind;
  t.qp = qp;
  t.completion = completion;
  timers_.push_back(t);
  std::push_heap(timers_.begin(), timers_.end(), std::greater<Timed>());
  arm_timer_callback();
}

// Every queue callback for timers runs the timers due by then, so one at or before the earliest
// timer is enough. A far retransmission deadline keeps its callback while near retirements come
// and go: arming anew after each of them would leave a stale far callback in the queue every
// time (tens of thousands in a 128-chip run, each moved through the queue's buckets).
void Nic::arm_timer_callback() {
  if (timers_.empty()) return;
  const core::TimePs due = timers_.front().at;
  if (!timer_callbacks_.empty() && timer_callbacks_.front() <= due) return;
  timer_callbacks_.push_back(due);
  std::push_heap(timer_callbacks_.begin(), timer_callbacks_.end(), std::greater<core::TimePs>());
  queue_->schedule(due, *this, kTimer);
}

void Nic::on_timer() {
  // The queue runs this NIC's callbacks in time order, so the one firing is the earliest.
  std::pop_heap(timer_callbacks_.begin(), timer_callbacks_.end(), std::greater<core::TimePs>());
  timer_callbacks_.pop_back();
  const core::TimePs now = core::now_ps();
  while (!timers_.empty() && timers_.front().at <= now) {
    std::pop_heap(timers_.begin(), timers_.end(), std::greater<Timed>());
    const Timed t = timers_.back();
    timers_.pop_back();
    run(t);
  }
  arm_timer_callback();
}

// A timer callback changes nothing when all this NIC's timers are retransmission deadlines of QPs
// that have since been acknowledged in full (the deadline is dropped lazily, when it comes).
bool Nic::stale(std::uint32_t tag) const {
  if (tag != kTimer) return false;
  return std::all_of(timers_.begin(), timers_.end(), [this](const Timed& t) {
    const Qp& qp = *qps_[t.qp];
    return t.kind == Timed::Kind::kTimeout &&
           (qp.state != QpState::kConnected || qp.requester.timer_deadline() == Requester::kNever);
  });
}

void Nic::run(const Timed& t) {
  Qp& qp = *qps_[t.qp];
  switch (t.kind) {
    case Timed::Kind::kTimeout:
      qp.timer_queued = false;
      on_timeout(qp, core::now_ps());
      break;
    case Timed::Kind::kRetire:
      if (qp.state == QpState::kConnected) retire(qp);
      break;
    case Timed::Kind::kReceiveCompletion:
      deliver(*qp.recv_cq, t.completion);
      break;
    case Timed::Kind::kFail:
      retire(qp);
      fail_qp(qp, t.completion.status);
      break;
  }
}

void Nic::ensure_timer(Qp& qp) {
  const core::TimePs deadline = qp.requester.timer_deadline();
  if (qp.timer_queued || deadline == Requester::kNever) return;
  qp.timer_queued = true;
  schedule(deadline, Timed::Kind::kTimeout, index_of(qp));
}

void Nic::on_timeout(Qp& qp, core::TimePs now) {
  if (qp.state != QpState::kConnected) return;
  // The entry was queued for an earlier deadline; progress has moved it on since.
  if (qp.requester.timer_deadline() > now) return ensure_timer(qp);
  const Requester::Timeout result = qp.requester.on_timer(now);
  if (result == Requester::Timeout::kNotDue) return;
  ports_[qp.port].counters.timeouts.add();
  if (result == Requester::Timeout::kExceeded) {
    retire(qp);
    fail_qp(qp, CompletionStatus::kRetryExceeded);
    return;
  }
  if (qp.window) {
    qp.window->on_timeout(qp.requester.sent_seq(), now);
    observe_window(qp);
  }
  restart_requester(qp);
}

void Nic::retire(Qp& qp) {
  const core::TimePs now = core::now_ps();
  for (;;) {
    switch (qp.requester.head_state(now)) {
      case Requester::HeadState::kDone:
        complete_send(qp, qp.requester.pop_head(), CompletionStatus::kSuccess);
        continue;
      case Requester::HeadState::kWaitingForData:
        schedule(qp.requester.head().data_ready_ps, Timed::Kind::kRetire, index_of(qp));
        return;
      default:
        return;
    }
  }
}

void Nic::deliver(CompletionQueue& cq, const Completion& c) {
  completions_->add();
  if (c.status != CompletionStatus::kSuccess) completion_errors_->add();
  cq.push(c);
}

void Nic::complete_send(Qp& qp, const SendWqe& w, CompletionStatus status) {
  const core::TimePs now = core::now_ps();
  core::TraceWriter& trace = core::trace_writer();
  if (trace.enabled()) {
    // A process per port, a row per QP on it: every port's transfers.
    if (qp.track.tid == 0) {
      qp.track = trace.track(fmt::format("{}.port{}.qp{}", name(), qp.port, qp.qpn));
    }
    // Work requests of a QP run one after another, so spans from the later of posting and the
    // previous completion nest on one track.
    const core::TimePs start = std::max(w.posted_ps, qp.last_span_end);
    trace.span(
        qp.track, to_string(w.request.opcode), start, now,
        {{"bytes", w.request.length}, {"wr_id", w.request.wr_id}, {"status", to_string(status)}});
  }
  qp.last_span_end = now;
  if (status == CompletionStatus::kSuccess && !w.request.signaled) return;
  Completion c;
  c.wr_id = w.request.wr_id;
  c.qpn = qp.qpn;
  c.status = status;
  c.byte_len = static_cast<std::uint32_t>(w.request.length);
  switch (w.request.opcode) {
    case SendOpcode::kSend:
    case SendOpcode::kSendWithImmediate:
      c.opcode = CompletionOpcode::kSend;
      break;
    case SendOpcode::kWrite:
    case SendOpcode::kWriteWithImmediate:
      c.opcode = CompletionOpcode::kWrite;
      break;
    case SendOpcode::kRead:
      c.opcode = CompletionOpcode::kRead;
      break;
  }
  deliver(*qp.send_cq, c);
}

void Nic::fail_qp(Qp& qp, CompletionStatus send_status) {
  if (qp.state == QpState::kError) return;
  qp.state = QpState::kError;  // first: callbacks that post to this QP are refused
  Port& port = ports_[qp.port];
  for (Flow& flow : qp.flow) {
    discard(flow);
    unlink_flow(port, flow);
  }
  qp.reads.clear();
  qp.ack_deferred = false;
  flow_fail_lanes(qp, send_status);
  CompletionStatus status = send_status;
  while (!qp.requester.empty()) {
    complete_send(qp, qp.requester.pop_head(), status);
    status = CompletionStatus::kFlushed;
  }
  Completion c;
  c.qpn = qp.qpn;
  c.opcode = CompletionOpcode::kRecv;
  c.status = CompletionStatus::kFlushed;
  if (qp.in_send) {
    qp.in_send = false;
    c.wr_id = qp.receive.wr_id;
    deliver(*qp.recv_cq, c);
  }
  while (!qp.receives.empty()) {
    c.wr_id = qp.receives.front().wr_id;
    qp.receives.pop_front();
    deliver(*qp.recv_cq, c);
  }
}

}  // namespace podsim::roce
