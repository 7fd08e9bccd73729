#include "hw/roce/requester.h"

#include <algorithm>

#include "hw/roce/segmentation.h"

namespace podsim::roce {

void Requester::post(const SendRequest& request, core::TimePs now) {
  SendWqe w;
  w.request = request;
  w.first_seq = next_seq_;
  w.packets = packet_count(request.length, mtu_);
  w.posted_ps = now;
  next_seq_ += w.packets;
  sq_.push_back(w);
}

bool Requester::can_send() const {
  if (send_wqe_ >= retired_ + sq_.size()) return false;
  const SendWqe& w = sq_[send_wqe_ - retired_];
  const std::uint64_t needed = is_read(w.request.opcode) ? w.end_seq() - send_seq_ : 1;
  return send_seq_ + needed - una_ <= kMaxOutstanding;
}

Requester::Tx Requester::next_packet() {
  const SendWqe& w = sq_[send_wqe_ - retired_];
  Tx tx;
  tx.wqe = send_wqe_;
  tx.seq = send_seq_;
  tx.psn = space_.psn(send_seq_);
  tx.index = static_cast<std::uint32_t>(send_seq_ - w.first_seq);
  tx.retransmission = send_seq_ < max_sent_;
  if (is_read(w.request.opcode)) {
    send_seq_ = w.end_seq();  // the request asks for every response from here on
  } else {
    ++send_seq_;
    const bool last = send_seq_ == w.end_seq();
    tx.ack_request = last || ++since_ack_request_ >= ack_every_;
    if (tx.ack_request) since_ack_request_ = 0;
  }
  if (send_seq_ == w.end_seq()) ++send_wqe_;
  tx.end_seq = send_seq_;
  return tx;
}

bool Requester::reach(std::uint64_t target) {
  while (una_ < target) {
    const SendWqe& w = sq_[una_wqe_ - retired_];
    const std::uint64_t limit = is_read(w.request.opcode) ? w.first_seq + w.responses : w.end_seq();
    una_ = std::max(una_, std::min(limit, target));
    if (una_ == w.end_seq()) {
      ++una_wqe_;
    } else if (una_ < target) {
      return true;  // a READ response before `target` is missing
    }
  }
  return false;
}

void Requester::restart_timer(core::TimePs now) {
  deadline_ = (una_ < max_sent_ && timeout_ps_ > 0) ? now + timeout() : kNever;
}

void Requester::progressed(std::uint64_t old_una, core::TimePs now, Progress& p) {
  if (una_ == old_una) return;
  p.advanced = true;
  retries_ = 0;
  gap_seq_ = kNoGap;
  restart_timer(now);
  // Packets the responder already has need not go again.
  if (send_seq_ < una_) {
    send_seq_ = una_;
    send_wqe_ = una_wqe_;
  }
}

void Requester::go_back(core::TimePs now, Progress& p) {
  send_seq_ = una_;
  send_wqe_ = una_wqe_;
  gap_seq_ = una_;
  since_ack_request_ = 0;
  restart_timer(now);
  p.went_back = true;
}

Requester::Progress Requester::on_ack(std::uint32_t psn, core::TimePs now) {
  Progress p;
  if (una_ == max_sent_) return p;  // nothing in flight: a stale ACK
  const std::uint64_t acked = seq_of(psn);
  if (!in_flight(acked)) return p;  // behind the window (stale) or never sent
  const std::uint64_t old = una_;
  const bool short_of_target = reach(acked + 1);
  progressed(old, now, p);
  // The responder sends READ responses before ACKs of later PSNs, so responses it has not
  // delivered were lost: an implied NAK, acted on once per gap.
  if (short_of_target && gap_seq_ != una_) go_back(now, p);
  return p;
}

Requester::Progress Requester::on_nak_sequence(std::uint32_t psn, core::TimePs now) {
  Progress p;
  if (una_ == max_sent_) return p;
  const std::uint64_t expected = seq_of(psn);
  if (!in_flight(expected)) return p;
  const std::uint64_t old = una_;
  reach(expected);
  progressed(old, now, p);
  go_back(now, p);
  return p;
}

bool Requester::on_nak_fatal(std::uint32_t psn, core::TimePs now) {
  if (una_ == max_sent_) return false;
  const std::uint64_t failed = seq_of(psn);
  if (!in_flight(failed)) return false;
  const std::uint64_t old = una_;
  reach(failed);
  Progress ignored;
  progressed(old, now, ignored);
  deadline_ = kNever;
  return true;
}

Requester::ReadResponse Requester::on_read_response(std::uint32_t psn, core::TimePs now) {
  ReadResponse r;
  if (una_ == max_sent_) return r;  // kDuplicate: a re-executed READ's extra response
  const std::uint64_t seq = seq_of(psn);
  if (!in_flight(seq)) return r;
  const std::uint64_t old = una_;
  if (!reach(seq)) {
    SendWqe& w = sq_[una_wqe_ - retired_];  // the WQE holding `seq`
    if (!is_read(w.request.opcode)) {
      progressed(old, now, r.progress);
      r.kind = ReadResponse::Kind::kUnexpected;
      return r;
    }
    if (seq == w.first_seq + w.responses) {
      r.kind = ReadResponse::Kind::kAccepted;
      r.wqe = una_wqe_;
      r.index = w.responses++;
      r.last = w.responses == w.packets;
      reach(seq + 1);
      progressed(old, now, r.progress);
      return r;
    }
  }
  // Responses before this one are missing.
  r.kind = ReadResponse::Kind::kOutOfOrder;
  progressed(old, now, r.progress);
  if (gap_seq_ != una_) go_back(now, r.progress);
  return r;
}

Requester::Timeout Requester::on_timer(core::TimePs now) {
  if (deadline_ == kNever || now < deadline_) return Timeout::kNotDue;
  deadline_ = kNever;  // the retransmission re-arms it when it leaves
  if (++retries_ > retry_limit_) return Timeout::kExceeded;
  Progress ignored;
  go_back(now, ignored);
  deadline_ = kNever;
  return Timeout::kRetransmit;
}

Requester::HeadState Requester::head_state(core::TimePs now) const {
  if (sq_.empty()) return HeadState::kNone;
  const SendWqe& w = sq_.front();
  if (w.end_seq() > una_) return HeadState::kInFlight;
  if (is_read(w.request.opcode) && w.data_ready_ps > now) return HeadState::kWaitingForData;
  return HeadState::kDone;
}

SendWqe Requester::pop_head() {
  SendWqe w = sq_.front();
  sq_.pop_front();
  ++retired_;
  // After a failure the cursors may point at WQEs that are gone; keep them in range.
  una_wqe_ = std::max(una_wqe_, retired_);
  send_wqe_ = std::max(send_wqe_, retired_);
  return w;
}

}  // namespace podsim::roce
