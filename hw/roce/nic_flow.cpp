// The NIC over the flow-level network: each message is one flow (flow::FlowNetwork), timed as
// the packet path times its first and last packets.
//
// A message's life, with the packet path's rule each step follows:
//  - post, or the QP's message before it leaving: its first packet's payload is read after the
//    TX pipeline latency (a QP that was idle) or while the packet before leaves (a busy one);
//  - start, when that read is done: the flow starts (at the flow network's solve then, with no
//    event of the NIC's); a SEND of several packets starts from an event of its own, since its
//    first packet's tail reaching the receiver is timed from it: the receiver then takes the
//    receive and copies everything but the last packet's payload from the sender's memory (other
//    messages copy it with the last packet);
//
// The payload between the first and the last packet moves through memory without occupying it.
// The packet path's transfers, one per packet, interleave with the other traffic of the memory
// (DMA engines reducing what arrived); one bulk transfer per message at a single instant does
// not, and holds the others back: on hls2's 16 MiB mesh all-reduce it made the flow mode 6%
// slower than packets, against 0.5% without it. The first and last packets' reads and writes
// keep their time, which decides when a message starts and completes.
//  - drained, when the flow's last byte has left: the last packet reaches the receiver as an
//    unqueued frame, the RX pipeline latency later it is written and the message completes at
//    the receiver (receive completion, READ response queued), and the ACK leaves once the write
//    is done;
//  - the ACK (or the READ's last response) reaches the requester, the RX pipeline latency
//    later, and the work request completes in order.
#include <fmt/format.h>

#include <algorithm>

#include "core/kernel.h"
#include "hw/flow/flow_network.h"
#include "hw/roce/nic.h"
#include "hw/roce/segmentation.h"

namespace podsim::roce {

namespace {

std::uint32_t wire_of(const Segment& seg) {
  fabric::Packet p;
  p.opcode = seg.opcode;
  p.has_reth = seg.reth;
  p.has_immediate = seg.immediate;
  p.has_aeth = seg.aeth;
  p.payload_bytes = seg.payload;
  return p.wire_bytes();
}

std::uint32_t ack_wire() {
  static const std::uint32_t bytes = [] {
    fabric::Packet p;
    p.opcode = fabric::Opcode::kAcknowledge;
    p.has_aeth = true;
    return p.wire_bytes();
  }();
  return bytes;
}

}  // namespace

void Nic::attach(int port, flow::FlowNetwork& network, fabric::EndpointId address,
                 core::Bandwidth rate) {
  if (port < 0 || port >= ports()) {
    reject("attach", fmt::format("port {} does not exist (the NIC has {})", port, ports()));
  }
  Port& p = ports_[port];
  if (p.link || p.network) reject("attach", fmt::format("port {} is already attached", port));
  if (address == fabric::kNoEndpoint) reject("attach", "the endpoint address is not set");
  network.attach(address, *this, port);
  p.network = &network;
  p.address = address;
  p.ip = fabric::ipv4_of(address);
  p.mac = fabric::mac_of(address);
  p.rate = rate;
}

// ---------------------------------------------------------------------------------------------
// Messages

Nic::FlowMessage* Nic::new_message(Qp& qp) {
  FlowMessage* m;
  if (!flow_free_.empty()) {
    m = flow_free_.back();
    flow_free_.pop_back();
    *m = FlowMessage{};
  } else {
    flow_messages_.emplace_back();
    m = &flow_messages_.back();
  }
  m->sender = this;
  m->qp = index_of(qp);
  return m;
}

// Back to its sender's pool once nothing more is to come for it.
void Nic::end_message(FlowMessage* m) {
  if (m->pending > 0) return;
  m->sender->flow_free_.push_back(m);
}

// One of the message's pending events is over.
void Nic::unref(FlowMessage* m) {
  --m->pending;
  if (m->flushed) end_message(m);
}

// Its packets, their wire bytes, and its ACKs' share of the way back.
void Nic::frame(FlowMessage& m, SendOpcode op, bool response) const {
  const auto mtu = static_cast<std::uint32_t>(config_.mtu);
  const auto segment = [&](std::uint32_t i) {
    return response ? read_response_segment(m.length, mtu, i)
                    : request_segment(op, m.wqe.request.length, mtu, i);
  };
  m.packets = packet_count(m.length, mtu);  // a READ request carries no payload: one packet
  m.first_wire = wire_of(segment(0));
  const Segment last = segment(m.packets - 1);
  m.last_wire = wire_of(last);
  m.last_payload = last.payload;
  m.wire_bytes = m.first_wire;
  if (m.packets > 1) m.wire_bytes += m.last_wire;
  if (m.packets > 2) m.wire_bytes += double(m.packets - 2) * wire_of(segment(1));
  // A READ's responses are not acknowledged; everything else is, every ack_every packets.
  m.acks = response || is_read(op) ? 0 : (m.packets + config_.ack_every - 1) / config_.ack_every;
  m.ack_weight = m.acks * double(ack_wire()) / m.wire_bytes;
}

// The NIC and QP a flow-mode QP is connected to; the flow network has no way to lose frames
// for a QP that does not exist, so posting to one is refused.
Nic* Nic::peer_of(const Qp& qp) const {
  auto* peer = dynamic_cast<Nic*>(network_of(qp).endpoint(qp.remote));
  if (!peer || qp.remote_qpn - kFirstQpn >= peer->qps_.size()) {
    reject("post_send", fmt::format("QP {} is connected to QP {} at endpoint {}, which does not "
                                    "exist (the flow network delivers only to existing QPs)",
                                    qp.qpn, qp.remote_qpn, qp.remote));
  }
  return peer;
}

void Nic::flow_route(Qp& qp) {
  if (qp.route) return;
  qp.peer = peer_of(qp);  // refuses a QP that leads nowhere before anything is set
  flow::FlowNetwork& net = network_of(qp);
  const Port& port = ports_[qp.port];
  qp.route = &net.route(port.address, qp.remote, qp.udp_source);
  // ACKs come back from the remote QP's port with the remote QP's entropy.
  const Qp& remote = *qp.peer->qps_[qp.remote_qpn - kFirstQpn];
  qp.ack_route = &net.route(qp.remote, port.address, remote.udp_source);
}

// ---------------------------------------------------------------------------------------------
// Sending

void Nic::flow_post(Qp& qp, const SendRequest& request) {
  flow_route(qp);
  FlowMessage* m = new_message(qp);
  m->receiver = qp.peer;
  m->receiver_qp = qp.remote_qpn - kFirstQpn;
  m->wqe.request = request;
  m->wqe.posted_ps = core::now_ps();
  m->source = request.local_address;
  m->target = request.remote_address;
  m->length = is_read(request.opcode) ? 0 : request.length;
  frame(*m, request.opcode, false);
  FlowLane& lane = qp.lane[kRequesterFlow];
  lane.queue.push_back(m);
  if (!lane.busy) {
    flow_begin(qp, kRequesterFlow,
               core::now_ps() + static_cast<core::TimePs>(config_.tx_pipeline_latency.ps), 0);
  }
}

// The lane's next message reads its first packet's payload from `issue_ps`; it starts when that
// is in, but no earlier than `overlap_ps` before the read is done (a busy QP reads the next
// packet while the one before is on the wire).
void Nic::flow_begin(Qp& qp, FlowKind kind, core::TimePs issue_ps, core::TimePs overlap_ps) {
  FlowLane& lane = qp.lane[kind];
  const std::size_t next = kind == kRequesterFlow ? lane.started : 0;
  if (next >= lane.queue.size()) return;
  FlowMessage& m = *lane.queue[next];
  lane.busy = true;
  if (kind == kRequesterFlow) ++lane.started;
  core::TimePs ready = issue_ps;
  const std::uint32_t first = static_cast<std::uint32_t>(
      std::min<std::uint64_t>(m.length, static_cast<std::uint64_t>(config_.mtu)));
  if (first > 0) {
    if (!transfer(tlm::TLM_READ_COMMAND, m.source, scratch(first), first, issue_ps, ready)) {
      m.status = kind == kRequesterFlow ? CompletionStatus::kLocalAccessError
                                        : CompletionStatus::kRemoteAccessError;
      Completion c;
      c.status = m.status;
      if (kind == kRequesterFlow) {
        // Failing here could run completion callbacks inside a caller's post; defer it.
        schedule(core::now_ps(), Timed::Kind::kFail, m.qp, c);
        return;
      }
      // The READ asked for memory this NIC does not have: the requester gets the NAK.
      lane.queue.pop_front();
      lane.busy = false;
      FlowMessage* request = m.request;
      m.request = nullptr;
      end_message(&m);
      request->status = CompletionStatus::kRemoteAccessError;
      flow_acknowledge(*request, core::now_ps());
      unref(request);
      return flow_begin(qp, kind, issue_ps, 0);
    }
    ready = std::max(core::now_ps(), ready - overlap_ps);
  }
  ++m.pending;
  if (m.packets > 1 && is_send(m)) {
    // Its first packet's arrival is timed from the start (flow_start).
    return network_of(qp).deliver(ready, ports_[qp.port].address, &m, FlowMessage::kStart);
  }
  network_of(qp).start_at(ready, *qp.route, m.response ? nullptr : qp.ack_route, m.ack_weight,
                          m.wire_bytes, *this, &m);
}

// A SEND of several packets starts: its first packet's arrival is timed from now.
void Nic::flow_start(FlowMessage& m) {
  Qp& qp = *qps_[m.qp];
  const core::TimePs now = core::now_ps();
  flow::FlowNetwork& net = network_of(qp);
  const flow::Route& route = *qp.route;
  ++m.pending;
  net.start(route, qp.ack_route, m.ack_weight, m.wire_bytes, *this, &m);
  // It takes its receive when its first packet arrives (RNR is decided there).
  const core::TimePs first_tail = now + net.serialization_ps(route.front(), m.first_wire);
  ++m.pending;
  net.deliver(net.tail_arrival(route, m.first_wire, first_tail) +
                  static_cast<core::TimePs>(m.receiver->config_.rx_pipeline_latency.ps),
              qp.remote, &m, FlowMessage::kFirstArrival);
}

void Nic::flow_drained(void* token) {
  auto& m = *static_cast<FlowMessage*>(token);
  Qp& qp = *qps_[m.qp];
  PortCounters& s = ports_[qp.port].counters;
  s.tx_packets.add(m.packets);
  s.tx_bytes.add(static_cast<std::uint64_t>(m.wire_bytes));
  s.data_packets_sent.add(m.packets);
  s.data_bytes_sent.add(m.length);
  if (m.flushed) return unref(&m);
  const FlowKind kind = m.response ? kResponderFlow : kRequesterFlow;
  FlowLane& lane = qp.lane[kind];
  lane.busy = false;
  if (kind == kResponderFlow) lane.queue.pop_front();
  flow::FlowNetwork& net = network_of(qp);
  const core::TimePs now = core::now_ps();
  // The next message's first packet was read while this one's last was on the wire.
  flow_begin(qp, kind, now, net.serialization_ps(qp.route->front(), m.last_wire));
  // The flow's ownership passes to its last arrival.
  net.deliver(net.tail_arrival(*qp.route, m.last_wire, now) +
                  static_cast<core::TimePs>(m.receiver->config_.rx_pipeline_latency.ps),
              qp.remote, &m, FlowMessage::kLastArrival);
}

// ---------------------------------------------------------------------------------------------
// Receiving

void Nic::flow_delivered(int /*port*/, void* token, std::uint32_t what) {
  auto& m = *static_cast<FlowMessage*>(token);
  if (m.flushed) return unref(&m);
  switch (what) {
    case FlowMessage::kStart:
      --m.pending;
      return flow_start(m);
    case FlowMessage::kFirstArrival:
      --m.pending;
      return flow_first_arrival(m);
    case FlowMessage::kLastArrival:
      --m.pending;
      return m.response ? flow_on_response(m) : flow_last_arrival(m);
    default:
      --m.pending;
      return flow_on_ack(m);
  }
}

// The receiving QP takes a SEND's receive with its first packet, as the packet path does.
bool Nic::flow_take_send(Qp& qp, FlowMessage& m) {
  if (qp.in_send) return true;
  if (qp.receives.empty()) {
    m.status = CompletionStatus::kRnrRetryExceeded;
    return false;
  }
  qp.receive = qp.receives.front();
  qp.receives.pop_front();
  qp.in_send = true;
  if (m.length > qp.receive.length) {
    // IBTA: the receive completes with a local length error and the QP goes to error.
    m.status = CompletionStatus::kRemoteInvalidRequest;
    qp.in_send = false;
    receive_completion(qp, qp.receive, CompletionOpcode::kRecv, CompletionStatus::kLocalLengthError,
                       0, nullptr, core::now_ps());
    fail_qp(qp, CompletionStatus::kFlushed);
    return false;
  }
  return true;
}

bool Nic::is_send(const FlowMessage& m) {
  return !m.response && !is_write(m.wqe.request.opcode) && !is_read(m.wqe.request.opcode);
}

// A SEND's first packet: it takes the receive, and everything but the last packet's payload is
// written into it.
void Nic::flow_first_arrival(FlowMessage& m) {
  Qp& qp = *qps_[m.receiver_qp];
  if (qp.state != QpState::kConnected || m.status != CompletionStatus::kSuccess) return;
  if (!flow_take_send(qp, m)) return;
  flow_copy(m, 0, m.length - m.last_payload, qp.receive.address, nullptr);
}

// Bytes [offset, offset + length) of the message, from the sender's memory to `address` here:
// untimed, or (`done` given) as a timed write now, the last packet's. RDMA leaves the source
// alone until the message completes, so reading it on arrival reads what the sender sent.
void Nic::flow_copy(FlowMessage& m, std::uint64_t offset, std::uint64_t length,
                    std::uint64_t address, core::TimePs* done) {
  constexpr std::uint64_t kPiece = std::uint64_t{4} << 20;  // bounds the scratch buffer
  for (std::uint64_t at = 0; at < length && m.status == CompletionStatus::kSuccess;) {
    const std::uint64_t n = std::min(kPiece, length - at);
    std::uint8_t* data = scratch(n);
    if (!m.sender->move_untimed(tlm::TLM_READ_COMMAND, m.source + offset + at, data, n)) {
      // The sender's own memory (a READ's responder's, for a response) refused.
      m.status =
          m.response ? CompletionStatus::kRemoteAccessError : CompletionStatus::kLocalAccessError;
      return;
    }
    const bool moved = done ? transfer(tlm::TLM_WRITE_COMMAND, address + at, data,
                                       static_cast<std::uint32_t>(n), core::now_ps(), *done)
                            : move_untimed(tlm::TLM_WRITE_COMMAND, address + at, data, n);
    if (!moved) {
      m.status =
          m.response ? CompletionStatus::kLocalAccessError : CompletionStatus::kRemoteAccessError;
    }
    at += n;
  }
}

std::uint8_t* Nic::scratch(std::uint64_t bytes) {
  if (!functional_) return nullptr;
  if (flow_scratch_.size() < bytes) flow_scratch_.resize(bytes);
  return flow_scratch_.data();
}

// The receiving port counts a message's packets when its last one is in.
Nic::PortCounters& Nic::count_arrival(const FlowMessage& m) {
  PortCounters& s = ports_[qps_[m.receiver_qp]->port].counters;
  s.rx_packets.add(m.packets);
  s.rx_bytes.add(static_cast<std::uint64_t>(m.wire_bytes));
  s.data_packets_received.add(m.packets);
  return s;
}

void Nic::flow_last_arrival(FlowMessage& m) {
  Qp& qp = *qps_[m.receiver_qp];
  const core::TimePs now = core::now_ps();
  PortCounters& s = count_arrival(m);
  // A NAK decided on the first packet (a SEND too long for its receive) goes out regardless.
  if (m.status != CompletionStatus::kSuccess) return flow_acknowledge(m, now);
  if (qp.state != QpState::kConnected) {
    // Dropped, as packets for a QP in error are: the requester times out retry_limit times.
    s.dropped.add(m.packets);
    m.status = CompletionStatus::kRetryExceeded;
    const auto wait = static_cast<core::TimePs>(m.sender->rto_ps_) *
                      static_cast<core::TimePs>(m.sender->config_.retry_limit + 1);
    ++m.pending;
    return network_of(qp).deliver(now + wait, m.sender->address_of(m), &m, FlowMessage::kAck);
  }
  const SendOpcode op = m.wqe.request.opcode;
  if (is_read(op)) return flow_answer_read(qp, m);
  const bool send = !is_write(op);
  if (m.packets == 1 && send) flow_take_send(qp, m);
  // A WRITE's bytes before the last packet's, untimed: the packets before the last took no
  // time of the memory (above), so placing them now or at the first packet is the same time.
  if (!send) flow_copy(m, 0, m.length - m.last_payload, m.target, nullptr);
  if (is_write(op) && has_immediate(op) && m.status == CompletionStatus::kSuccess &&
      qp.receives.empty()) {
    m.status = CompletionStatus::kRnrRetryExceeded;
  }
  core::TimePs done = now;
  if (m.status == CompletionStatus::kSuccess && m.last_payload > 0) {
    const std::uint64_t offset = m.length - m.last_payload;
    flow_copy(m, offset, m.last_payload, (send ? qp.receive.address : m.target) + offset, &done);
  }
  if (m.status == CompletionStatus::kSuccess) {
    fabric::Packet last;  // what receive_completion reads of the last packet
    last.has_immediate = has_immediate(op);
    last.immediate = m.wqe.request.immediate;
    if (send) {
      qp.in_send = false;
      receive_completion(qp, qp.receive, CompletionOpcode::kRecv, CompletionStatus::kSuccess,
                         m.length, &last, done);
    } else if (has_immediate(op)) {
      const RecvRequest r = qp.receives.front();
      qp.receives.pop_front();
      receive_completion(qp, r, CompletionOpcode::kRecvWriteWithImmediate,
                         CompletionStatus::kSuccess, m.length, &last, done);
    }
  }
  flow_acknowledge(m, done);
}

// The ACK (or NAK) of a request leaves `ready_ps` as a frame of its own and completes it at the
// requester.
void Nic::flow_acknowledge(FlowMessage& m, core::TimePs ready_ps) {
  Nic& requester = *m.sender;
  const Qp& qp = *requester.qps_[m.qp];
  const std::uint32_t acks = m.frames_back();
  Port& port = ports_[qps_[m.receiver_qp]->port];
  (m.status == CompletionStatus::kSuccess ? port.counters.acks_sent : port.counters.naks_sent)
      .add(acks);
  port.counters.tx_packets.add(acks);
  port.counters.tx_bytes.add(std::uint64_t{acks} * ack_wire());
  flow::FlowNetwork& net = *port.network;
  const flow::Route* back = qp.ack_route;
  core::TimePs at = ready_ps;
  if (back && !back->empty()) {
    at = net.tail_arrival(*back, ack_wire(),
                          ready_ps + net.serialization_ps(back->front(), ack_wire()));
  }
  ++m.pending;
  net.deliver(at + static_cast<core::TimePs>(requester.config_.rx_pipeline_latency.ps),
              requester.address_of(m), &m, FlowMessage::kAck);
}

void Nic::flow_answer_read(Qp& qp, FlowMessage& request) {
  FlowMessage* r = new_message(qp);
  r->response = true;
  r->request = &request;
  ++request.pending;  // the READ stays until its response is in
  r->receiver = request.sender;
  r->receiver_qp = request.qp;
  r->source = request.wqe.request.remote_address;
  r->target = request.wqe.request.local_address;
  r->length = request.wqe.request.length;
  r->wqe = request.wqe;
  frame(*r, SendOpcode::kRead, true);
  flow_route(qp);
  FlowLane& lane = qp.lane[kResponderFlow];
  lane.queue.push_back(r);
  if (!lane.busy) {
    flow_begin(qp, kResponderFlow,
               core::now_ps() + static_cast<core::TimePs>(config_.tx_pipeline_latency.ps), 0);
  }
}

// ---------------------------------------------------------------------------------------------
// The requester's side: ACKs, READ data, completions in order

void Nic::flow_on_ack(FlowMessage& m) {
  Qp& qp = *qps_[m.qp];
  if (!is_read(m.wqe.request.opcode)) {
    PortCounters& s = ports_[qp.port].counters;
    const std::uint32_t acks = m.frames_back();
    (m.status == CompletionStatus::kSuccess ? s.acks_received : s.naks_received).add(acks);
    s.rx_packets.add(acks);
    s.rx_bytes.add(std::uint64_t{acks} * ack_wire());
  }
  if (qp.state != QpState::kConnected) return end_message(&m);
  if (m.status != CompletionStatus::kSuccess) {
    // What came before it completes; it fails and the rest is flushed.
    flow_retire(qp);
    return fail_qp(qp, m.status);
  }
  m.done = true;
  flow_retire(qp);
}

void Nic::flow_on_response(FlowMessage& r) {
  Qp& qp = *qps_[r.receiver_qp];
  const core::TimePs now = core::now_ps();
  count_arrival(r);
  FlowMessage& request = *r.request;
  core::TimePs done = now;
  if (qp.state == QpState::kConnected) {
    flow_copy(r, 0, r.length - r.last_payload, r.target, nullptr);
    if (r.last_payload > 0) {
      const std::uint64_t offset = r.length - r.last_payload;
      flow_copy(r, offset, r.last_payload, r.target + offset, &done);
    }
  }
  request.status = r.status;
  r.request = nullptr;
  end_message(&r);
  if (request.flushed) return unref(&request);
  // The READ completes once its data is written; the reference passes to that delivery.
  network_of(qp).deliver(done, ports_[qp.port].address, &request, FlowMessage::kAck);
}

void Nic::flow_retire(Qp& qp) {
  FlowLane& lane = qp.lane[kRequesterFlow];
  while (!lane.queue.empty() && lane.queue.front()->done) {
    FlowMessage* m = lane.queue.front();
    lane.queue.pop_front();
    --lane.started;
    complete_send(qp, m->wqe, CompletionStatus::kSuccess);
    end_message(m);
    if (qp.state != QpState::kConnected) return;  // a completion callback failed it
  }
}

// fail_qp's part for flow mode: each message completes with `send_status` (the first) or
// kFlushed and waits only for its pending events.
void Nic::flow_fail_lanes(Qp& qp, CompletionStatus send_status) {
  CompletionStatus status = send_status;
  for (FlowLane& lane : qp.lane) {
    const bool requests = &lane == &qp.lane[kRequesterFlow];
    // At most one message of a busy lane is still waiting in the network to start.
    bool may_wait = lane.busy;
    for (std::size_t i = 0; i < lane.queue.size(); ++i) {
      FlowMessage* m = lane.queue[i];
      if (requests) {
        complete_send(qp, m->wqe, status);
        status = CompletionStatus::kFlushed;
      }
      m->flushed = true;
      // One still waiting to start never does.
      if (may_wait && network_of(qp).cancel_start(m)) {
        --m->pending;
        may_wait = false;
      }
      if (m->request) {
        unref(m->request);
        m->request = nullptr;
      }
      end_message(m);
    }
    lane.queue.clear();
    lane.started = 0;
    lane.busy = false;
  }
}

}  // namespace podsim::roce
