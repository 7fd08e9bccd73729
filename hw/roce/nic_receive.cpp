// The NIC's receiving side: the RX pipeline, PFC, requests (responder), ACKs, NAKs and READ
// responses (requester), and CNPs.
#include <fmt/format.h>

#include "core/kernel.h"
#include "hw/roce/nic.h"
#include "hw/roce/segmentation.h"

namespace podsim::roce {

using fabric::AckSyndrome;
using fabric::Packet;
using fabric::packet_pool;

void Nic::receive(Packet* p, int port) {
  Port& pt = ports_[port];
  pt.counters.rx_packets.add();
  pt.counters.rx_bytes.add(p->wire_bytes());
  if (p->kind == fabric::FrameKind::kPfcPause) {
    // PFC acts in the MAC, ahead of the RX pipeline.
    on_pfc(*p, port);
    packet_pool().release(p);
    return;
  }
  const auto delay = static_cast<core::TimePs>(config_.rx_pipeline_latency.ps);
  if (delay == 0) return process(p, port);
  // The latency is the same for every packet, and the queue runs callbacks due at one time in
  // the order they were scheduled, so each callback takes the oldest arrival.
  const core::TimePs at = core::now_ps() + delay;
  arrivals_.push_back({p, port, at});
  queue_->schedule(at, *this, kArrival, p);
}

void Nic::on_arrival() {
  const Arrival a = arrivals_.front();
  arrivals_.pop_front();
  process(a.packet, a.port);
}

void Nic::process(Packet* p, int port) {
  const std::uint32_t qpn = p->dest_qp;
  if (qpn < kFirstQpn || qpn - kFirstQpn >= qps_.size() ||
      qps_[qpn - kFirstQpn]->state != QpState::kConnected) {
    ports_[port].counters.dropped.add();
    packet_pool().release(p);
    return;
  }
  Qp& qp = *qps_[qpn - kFirstQpn];
  switch (classify(p->opcode)) {
    case OpcodeClass::kCnp:
      on_cnp(qp);
      break;
    case OpcodeClass::kAck:
      on_acknowledge(qp, *p);
      break;
    case OpcodeClass::kReadResponse:
      ports_[port].counters.data_packets_received.add();
      on_read_response(qp, *p);
      break;
    default:
      ports_[port].counters.data_packets_received.add();
      on_request(qp, *p);
      break;
  }
  packet_pool().release(p);
}

void Nic::on_pfc(const Packet& p, int port_index) {
  Port& port = ports_[port_index];
  const core::TimePs now = core::now_ps();
  bool paused = false;
  for (int prio = 0; prio < 8; ++prio) {
    if (((p.pfc_enable >> prio) & 1) == 0) continue;
    const std::uint16_t quanta = p.pfc_quanta[prio];
    // A quantum is 512 bit times (64 bytes) at the port's rate; a new frame replaces the timer.
    port.paused_until[prio] =
        now + static_cast<core::TimePs>(port.rate.time_for(std::uint64_t{quanta} * 64).ps);
    paused = paused || quanta > 0;
  }
  if (paused) port.counters.pfc_pauses_received.add();
  // The link asks again now and learns the new pause end (a resume, or a shorter pause).
  if (p.pfc_enable != 0 && port.link) wake(port_index);
}

// ---------------------------------------------------------------------------------------------
// Responder

void Nic::on_request(Qp& qp, Packet& p) {
  PortCounters& s = ports_[qp.port].counters;
  const core::TimePs now = core::now_ps();
  if (p.ecn == fabric::Ecn::kCe) maybe_send_cnp(qp);
  switch (qp.responder.classify(p.psn, now)) {
    case Responder::Verdict::kNew:
      take_request(qp, p);
      return;
    case Responder::Verdict::kDuplicate:
      s.duplicates_received.add();
      if (classify(p.opcode) == OpcodeClass::kReadRequest) return reexecute_read(qp, p);
      if (qp.responder.duplicate(p.ack_request)) {
        send_ack(qp, AckSyndrome::kAck, qp.responder.ack_psn(), now);
      }
      return;
    case Responder::Verdict::kSequenceError:
      s.out_of_sequence_received.add();
      qp.responder.acknowledged();  // the NAK acknowledges everything before the gap
      send_ack(qp, AckSyndrome::kNakSequenceError, qp.responder.expected_psn(), now);
      return;
    case Responder::Verdict::kIgnore:
      s.out_of_sequence_received.add();
      return;
  }
}

void Nic::take_request(Qp& qp, Packet& p) {
  const core::TimePs now = core::now_ps();
  const OpcodeClass cls = classify(p.opcode);
  if (cls == OpcodeClass::kReadRequest) return take_read_request(qp, p);
  std::uint64_t address = 0;
  if (cls == OpcodeClass::kWrite) {
    if (starts_message(p.opcode)) {
      qp.write_address = p.remote_address;
      qp.message_bytes = 0;
    }
    // A WRITE with immediate consumes a receive with its last packet.
    if (carries_immediate(p.opcode) && qp.receives.empty()) {
      return send_ack(qp, AckSyndrome::kRnrNak, p.psn, now);
    }
    address = qp.write_address;
  } else if (!place_send(qp, p, address)) {
    return;
  }
  core::TimePs done = now;
  if (p.payload_bytes > 0) {
    std::uint8_t* data =
        functional_ && p.payload.size() >= p.payload_bytes ? p.payload.data() : nullptr;
    if (!transfer(tlm::TLM_WRITE_COMMAND, address, data, p.payload_bytes, now, done)) {
      return send_ack(qp, AckSyndrome::kNakRemoteAccess, p.psn, now);
    }
  }
  qp.message_bytes += p.payload_bytes;
  qp.write_address += p.payload_bytes;
  const bool ack_due = qp.responder.accept(p.ack_request);
  if (ends_message(p.opcode)) {
    qp.responder.complete_message();
    if (cls == OpcodeClass::kSend) {
      qp.in_send = false;
      receive_completion(qp, qp.receive, CompletionOpcode::kRecv, CompletionStatus::kSuccess,
                         qp.message_bytes, &p, done);
    } else if (carries_immediate(p.opcode)) {
      const RecvRequest r = qp.receives.front();
      qp.receives.pop_front();
      receive_completion(qp, r, CompletionOpcode::kRecvWriteWithImmediate,
                         CompletionStatus::kSuccess, qp.message_bytes, &p, done);
    }
  }
  // The ACK says the data is placed, so it waits for the write.
  if (ack_due) send_ack(qp, AckSyndrome::kAck, qp.responder.ack_psn(), done);
}

bool Nic::place_send(Qp& qp, Packet& p, std::uint64_t& address) {
  const core::TimePs now = core::now_ps();
  if (starts_message(p.opcode)) {
    if (qp.receives.empty()) {
      send_ack(qp, AckSyndrome::kRnrNak, p.psn, now);
      return false;
    }
    qp.receive = qp.receives.front();
    qp.receives.pop_front();
    qp.in_send = true;
    qp.message_bytes = 0;
  } else if (!qp.in_send) {
    send_ack(qp, AckSyndrome::kNakInvalidRequest, p.psn, now);  // a MIDDLE with no FIRST
    return false;
  }
  if (qp.message_bytes + p.payload_bytes > qp.receive.length) {
    // IBTA: the receive completes with a local length error and the QP goes to error.
    send_ack(qp, AckSyndrome::kNakInvalidRequest, p.psn, now);
    qp.in_send = false;
    receive_completion(qp, qp.receive, CompletionOpcode::kRecv, CompletionStatus::kLocalLengthError,
                       qp.message_bytes, nullptr, now);
    fail_qp(qp, CompletionStatus::kFlushed);
    return false;
  }
  address = qp.receive.address + qp.message_bytes;
  return true;
}

void Nic::take_read_request(Qp& qp, const Packet& p) {
  ReadWork w;
  w.first_seq = qp.responder.expected_seq();
  w.address = p.remote_address;
  w.length = p.dma_length;
  w.packets = packet_count(p.dma_length, static_cast<std::uint32_t>(config_.mtu));
  qp.responder.accept_read(w.packets);
  qp.responder.complete_message();
  qp.reads.push_back(w);
  kick(qp, kResponderFlow,
       core::now_ps() + static_cast<core::TimePs>(config_.tx_pipeline_latency.ps));
}

void Nic::reexecute_read(Qp& qp, const Packet& p) {
  std::uint64_t seq = 0;
  if (!qp.responder.duplicate_seq(p.psn, &seq)) return;
  // The requester went back to `seq` and will ask again for every response from there on, so
  // responses at or after it that are still queued would only be duplicates.
  Flow& f = qp.flow[kResponderFlow];
  if (f.staged) {
    discard(f);
    qp.reads.front().next--;
  }
  while (!qp.reads.empty() && qp.reads.back().first_seq >= seq) qp.reads.pop_back();
  if (!qp.reads.empty()) {
    ReadWork& b = qp.reads.back();
    if (b.first_seq + b.packets > seq) {
      b.packets = static_cast<std::uint32_t>(seq - b.first_seq);
      b.length = std::uint64_t{b.packets} * static_cast<std::uint64_t>(config_.mtu);
      if (b.next >= b.packets) qp.reads.pop_back();  // all of it before `seq` has left
    }
  }
  ReadWork w;
  w.first_seq = seq;
  w.address = p.remote_address;
  w.length = p.dma_length;
  w.packets = packet_count(p.dma_length, static_cast<std::uint32_t>(config_.mtu));
  qp.reads.push_back(w);
  kick(qp, kResponderFlow,
       core::now_ps() + static_cast<core::TimePs>(config_.tx_pipeline_latency.ps));
}

void Nic::send_ack(Qp& qp, AckSyndrome syndrome, std::uint32_t psn, core::TimePs ready_ps) {
  if (!qp.reads.empty()) {
    // READ responses with lower PSNs leave first (IBTA: responses go in PSN order). Only the
    // latest ACK matters, but a fatal NAK is kept.
    const bool fatal_waiting = qp.ack_deferred && qp.deferred_syndrome != AckSyndrome::kAck &&
                               qp.deferred_syndrome != AckSyndrome::kNakSequenceError;
    if (!fatal_waiting) {
      qp.deferred_syndrome = syndrome;
      qp.deferred_psn = psn;
    }
    qp.deferred_ready_ps = qp.ack_deferred ? std::max(qp.deferred_ready_ps, ready_ps) : ready_ps;
    qp.ack_deferred = true;
    return;
  }
  Control c;
  c.kind = Control::Kind::kAck;
  c.syndrome = syndrome;
  c.qp = index_of(qp);
  c.psn = psn;
  c.msn = qp.responder.msn();
  c.ready_ps = ready_ps;
  ports_[qp.port].control.push_back(c);
  wake_at(qp.port, ready_ps);
}

void Nic::flush_deferred_ack(Qp& qp, core::TimePs ready_ps) {
  qp.ack_deferred = false;
  std::uint32_t psn = qp.deferred_psn;
  // An ACK or sequence NAK says where the responder is now, not where it was when deferred.
  if (qp.deferred_syndrome == AckSyndrome::kAck) psn = qp.responder.ack_psn();
  if (qp.deferred_syndrome == AckSyndrome::kNakSequenceError) psn = qp.responder.expected_psn();
  send_ack(qp, qp.deferred_syndrome, psn, std::max(ready_ps, qp.deferred_ready_ps));
}

void Nic::receive_completion(Qp& qp, const RecvRequest& r, CompletionOpcode op,
                             CompletionStatus status, std::uint64_t bytes, const Packet* last,
                             core::TimePs at) {
  Completion c;
  c.wr_id = r.wr_id;
  c.qpn = qp.qpn;
  c.opcode = op;
  c.status = status;
  c.byte_len = static_cast<std::uint32_t>(bytes);
  if (last && last->has_immediate) {
    c.immediate = last->immediate;
    c.has_immediate = true;
  }
  if (at <= core::now_ps()) return deliver(*qp.recv_cq, c);
  schedule(at, Timed::Kind::kReceiveCompletion, index_of(qp), c);
}

// ---------------------------------------------------------------------------------------------
// Requester

void Nic::on_acknowledge(Qp& qp, const Packet& p) {
  PortCounters& s = ports_[qp.port].counters;
  const core::TimePs now = core::now_ps();
  const std::uint64_t una = qp.requester.unacked_seq();
  if (p.syndrome == AckSyndrome::kAck) {
    s.acks_received.add();
    const Requester::Progress progress = qp.requester.on_ack(p.psn, now);
    window_acked(qp, una);
    return after_progress(qp, progress);
  }
  s.naks_received.add();
  if (p.syndrome == AckSyndrome::kNakSequenceError) {
    const Requester::Progress progress = qp.requester.on_nak_sequence(p.psn, now);
    window_acked(qp, una);
    if (qp.window) on_congestion(qp);  // a gap: TCP's three duplicate ACKs
    return after_progress(qp, progress);
  }
  CompletionStatus status = CompletionStatus::kRemoteInvalidRequest;
  if (p.syndrome == AckSyndrome::kRnrNak) status = CompletionStatus::kRnrRetryExceeded;
  if (p.syndrome == AckSyndrome::kNakRemoteAccess) status = CompletionStatus::kRemoteAccessError;
  if (!qp.requester.on_nak_fatal(p.psn, now)) return;
  retire(qp);
  fail_qp(qp, status);
}

void Nic::on_read_response(Qp& qp, Packet& p) {
  PortCounters& s = ports_[qp.port].counters;
  const core::TimePs now = core::now_ps();
  if (p.ecn == fabric::Ecn::kCe) maybe_send_cnp(qp);
  const Requester::ReadResponse r = qp.requester.on_read_response(p.psn, now);
  using Kind = Requester::ReadResponse::Kind;
  if (r.kind == Kind::kOutOfOrder) s.out_of_sequence_received.add();
  if (r.kind == Kind::kDuplicate || r.kind == Kind::kUnexpected) s.duplicates_received.add();
  if (r.kind == Kind::kAccepted) {
    SendWqe& w = qp.requester.wqe(r.wqe);
    const std::uint64_t address =
        w.request.local_address + std::uint64_t{r.index} * static_cast<std::uint64_t>(config_.mtu);
    core::TimePs done = now;
    if (p.payload_bytes > 0) {
      std::uint8_t* data =
          functional_ && p.payload.size() >= p.payload_bytes ? p.payload.data() : nullptr;
      if (!transfer(tlm::TLM_WRITE_COMMAND, address, data, p.payload_bytes, now, done)) {
        w.data_ready_ps = kNever;  // never completes: the failure below reports it
        retire(qp);
        fail_qp(qp, CompletionStatus::kLocalAccessError);
        return;
      }
    }
    if (r.last) w.data_ready_ps = done;
  }
  after_progress(qp, r.progress);
}

void Nic::after_progress(Qp& qp, const Requester::Progress& progress) {
  if (progress.advanced) retire(qp);  // completion callbacks may post more work
  if (qp.state != QpState::kConnected) return;
  if (progress.went_back) {
    if (qp.window) qp.window->forget_timing();
    restart_requester(qp);
  } else if (progress.advanced && !qp.flow[kRequesterFlow].staged) {
    // The PSN window may have opened.
    kick(qp, kRequesterFlow,
         core::now_ps() + static_cast<core::TimePs>(config_.tx_pipeline_latency.ps));
  }
  ensure_timer(qp);
}

// ---------------------------------------------------------------------------------------------
// Congestion notification

void Nic::maybe_send_cnp(Qp& qp) {
  // Under a TCP window the CNP stands for the ECN echo TCP carries in its ACKs.
  if (!config_.dcqcn.enabled && !(config_.window_control && config_.window.ecn)) return;
  const core::TimePs now = core::now_ps();
  if (qp.cnp_sent && now < qp.last_cnp_ps + static_cast<core::TimePs>(config_.cnp_interval.ps)) {
    return;
  }
  qp.cnp_sent = true;
  qp.last_cnp_ps = now;
  Control c;
  c.kind = Control::Kind::kCnp;
  c.qp = index_of(qp);
  c.ready_ps = now;
  ports_[qp.port].control.push_back(c);
  wake(qp.port);
}

void Nic::on_cnp(Qp& qp) {
  ports_[qp.port].counters.cnps_received.add();
  if (qp.window) return on_congestion(qp);
  if (!config_.dcqcn.enabled) return;
  if (!qp.rate_level) {
    // Only QPs that see congestion get a rate statistic; the rate was the line rate until now.
    qp.rate_level = &core::StatsGroup(name()).time_weighted(fmt::format("qp{}.dcqcn_rate", qp.qpn),
                                                            "Gb/s", "DCQCN sending rate of the QP");
    qp.dcqcn.observe(qp.rate_level, 0);
  }
  qp.dcqcn.on_cnp(core::now_ps());
}

void Nic::window_acked(Qp& qp, std::uint64_t una_before) {
  if (!qp.window) return;
  const std::uint64_t una = qp.requester.unacked_seq();
  qp.window->on_ack(una, una - una_before, core::now_ps());
}

void Nic::on_congestion(Qp& qp) {
  const Requester& r = qp.requester;
  if (qp.window->on_congestion(r.unacked_seq(), r.sent_seq(), core::now_ps())) observe_window(qp);
}

void Nic::observe_window(Qp& qp) {
  if (qp.window_level) return;
  // Only QPs whose window was cut get a statistic of it.
  qp.window_level = &core::StatsGroup(name()).time_weighted(
      fmt::format("qp{}.cwnd", qp.qpn), "packets", "TCP congestion window of the QP");
  qp.window->observe(qp.window_level, core::now_ps());
}

}  // namespace podsim::roce
