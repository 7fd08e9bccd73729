// The requester's side of one Reliable Connected QP (IBTA vol. 1 9.7.4, 9.7.6): its send queue,
// the PSNs each work request occupies, go-back-N recovery and the retransmission timer.
// Captures: sequence numbers assigned at post (a READ takes one per response packet); a send
// cursor that go-back-N moves back to the oldest unacknowledged PSN (mid-READ it re-requests the
// rest of the message); cumulative ACKs; NAK sequence errors; READ responses as implicit ACKs, a
// gap in them, or an ACK beyond a READ whose responses are missing, as an implied NAK (acted on
// once per gap); the timer (4.096us x 2^t) armed by the first packet in flight, restarted on
// progress, and after retry_limit consecutive expiries a failure (TCP's: doubled at each expiry);
// completion in posting order.
// Ignores: packet contents and memory (the NIC's), RNR retry, limits on outstanding READs
// (max_rd_atomic); in flight PSNs are capped at 2^23 - 1 so that every one is unambiguous.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>

#include "core/ring.h"
#include "core/units.h"
#include "hw/roce/psn.h"
#include "hw/roce/verbs.h"

namespace podsim::roce {

struct SendWqe {
  SendRequest request;
  std::uint64_t first_seq = 0;
  std::uint32_t packets = 0;    // sequence numbers it occupies (READ: its response packets)
  std::uint32_t responses = 0;  // READ: response packets taken in order so far
  core::TimePs posted_ps = 0;
  core::TimePs data_ready_ps = 0;  // READ: when the last response's data is in memory
  std::uint64_t end_seq() const { return first_seq + packets; }
};

class Requester {
 public:
  static constexpr core::TimePs kNever = std::numeric_limits<core::TimePs>::max();
  static constexpr std::uint64_t kMaxOutstanding = kPsnHalf - 1;

  // timeout_ps 0: the timer never fires (IBTA timeout value 0). `backoff`: each expiry in a row
  // doubles the timeout, as TCP's RTO does [RFC 6298 5.5]; IBTA's stays fixed.
  Requester(std::uint32_t mtu, int ack_every, core::TimePs timeout_ps, int retry_limit,
            bool backoff = false)
      : mtu_(mtu),
        ack_every_(ack_every < 1 ? 1 : ack_every),
        timeout_ps_(timeout_ps),
        retry_limit_(retry_limit),
        backoff_(backoff) {}

  // Before the first post: the PSN the responder expects first.
  void set_initial_psn(std::uint32_t psn) { space_ = PsnSpace(psn); }

  // ---- Work requests. Numbers count every WQE ever posted, so they survive retirement.
  void post(const SendRequest& request, core::TimePs now);
  bool empty() const { return sq_.empty(); }
  std::size_t queued() const { return sq_.size(); }
  SendWqe& wqe(std::uint64_t number) { return sq_[number - retired_]; }
  const SendWqe& head() const { return sq_.front(); }
  // The WQE an ACK will advance first (for prefetching), or null.
  const SendWqe* oldest_unacked() const {
    return una_wqe_ - retired_ < sq_.size() ? &sq_[una_wqe_ - retired_] : nullptr;
  }

  // ---- Transmission
  struct Tx {
    std::uint64_t wqe = 0;    // number
    std::uint32_t index = 0;  // packet of the message (READ: first response asked for)
    std::uint64_t seq = 0;
    std::uint32_t psn = 0;
    std::uint64_t end_seq = 0;    // the cursor after it (a READ request covers its responses)
    bool retransmission = false;  // some of its PSNs have been on the wire before
    bool ack_request = false;
  };
  // A packet is waiting at the cursor and the PSN window has room for it.
  bool can_send() const;
  // Takes the packet at the cursor (call only when can_send()). The NIC may prepare it well
  // before it leaves, or drop it on a go-back; only on_transmit() puts it in flight.
  Tx next_packet();
  // The packet `tx` left at `now`: its PSNs are in flight, and the timer runs if it was not.
  void on_transmit(const Tx& tx, core::TimePs now) {
    max_sent_ = std::max(max_sent_, tx.end_seq);
    if (deadline_ == kNever && timeout_ps_ > 0 && una_ < max_sent_) deadline_ = now + timeout();
  }

  // ---- Responses
  struct Progress {
    bool advanced = false;   // the oldest unacknowledged PSN moved on
    bool went_back = false;  // the cursor went back to it: discard anything prepared
  };
  Progress on_ack(std::uint32_t psn, core::TimePs now);
  Progress on_nak_sequence(std::uint32_t psn, core::TimePs now);
  // A fatal NAK (RNR, remote access, invalid request) at `psn`: acknowledges what precedes it.
  // False if the PSN is not in flight (a stale NAK to ignore); otherwise the first WQE not yet
  // retired after retiring the complete ones is the one that failed.
  bool on_nak_fatal(std::uint32_t psn, core::TimePs now);

  struct ReadResponse {
    enum class Kind : std::uint8_t { kAccepted, kDuplicate, kOutOfOrder, kUnexpected };
    Kind kind = Kind::kDuplicate;
    std::uint64_t wqe = 0;    // kAccepted: the READ it belongs to
    std::uint32_t index = 0;  // kAccepted: response packet of the message
    bool last = false;        // kAccepted: the READ's last response
    Progress progress;
  };
  ReadResponse on_read_response(std::uint32_t psn, core::TimePs now);

  // ---- Retransmission timer
  core::TimePs timer_deadline() const { return deadline_; }
  enum class Timeout : std::uint8_t { kNotDue, kRetransmit, kExceeded };
  Timeout on_timer(core::TimePs now);
  int retries() const { return retries_; }

  // ---- Retirement, in posting order
  enum class HeadState : std::uint8_t { kNone, kInFlight, kWaitingForData, kDone };
  HeadState head_state(core::TimePs now) const;
  // Removes the oldest WQE (done or, when the QP fails, not).
  SendWqe pop_head();

  // ---- State, for the NIC and tests
  std::uint64_t unacked_seq() const { return una_; }
  std::uint64_t send_seq() const { return send_seq_; }
  std::uint64_t sent_seq() const { return max_sent_; }  // one past the highest ever on the wire
  std::uint64_t next_seq() const { return next_seq_; }
  std::uint32_t psn_of(std::uint64_t seq) const { return space_.psn(seq); }

 private:
  bool in_flight(std::uint64_t seq) const { return seq < max_sent_; }
  std::uint64_t seq_of(std::uint32_t psn) const { return space_.seq_at_or_after(una_, psn); }
  // Moves the oldest unacknowledged PSN towards `target`, stopping at the first missing
  // response of a READ; true if it stopped short.
  bool reach(std::uint64_t target);
  void progressed(std::uint64_t old_una, core::TimePs now, Progress& p);
  void go_back(core::TimePs now, Progress& p);
  void restart_timer(core::TimePs now);
  // The timer's length now: with backoff, doubled for each expiry since the last progress.
  core::TimePs timeout() const {
    return backoff_ ? timeout_ps_ << std::min(retries_, 16) : timeout_ps_;
  }

  std::uint32_t mtu_;
  int ack_every_;
  core::TimePs timeout_ps_;
  int retry_limit_;
  bool backoff_;
  PsnSpace space_;

  core::Ring<SendWqe> sq_;
  std::uint64_t retired_ = 0;   // number of the WQE at the ring's front
  std::uint64_t next_seq_ = 0;  // first sequence number of the next WQE posted
  std::uint64_t una_ = 0;       // oldest unacknowledged sequence number
  std::uint64_t una_wqe_ = 0;   // number of the WQE holding una_
  std::uint64_t send_seq_ = 0;  // next sequence number to transmit
  std::uint64_t send_wqe_ = 0;  // number of the WQE holding send_seq_
  std::uint64_t max_sent_ = 0;
  static constexpr std::uint64_t kNoGap = std::numeric_limits<std::uint64_t>::max();
  std::uint64_t gap_seq_ = kNoGap;  // una_ when we last went back for an implied NAK
  int since_ack_request_ = 0;

  core::TimePs deadline_ = kNever;
  int retries_ = 0;
};

}  // namespace podsim::roce
