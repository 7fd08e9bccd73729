// The responder's PSN rules for one Reliable Connected QP (IBTA vol. 1 9.7.5): is an arriving
// request the expected one, a duplicate, or ahead of a gap; and when is an ACK due.
// Captures: the expected PSN with 24-bit wrap; one NAK (PSN sequence error) per gap, after which
// packets ahead of the gap are dropped silently until the expected PSN arrives, or until
// `nak_interval` has passed and the gap is NAKed again (HPCC's NAK rate limit: a lost NAK or a
// lost retransmission then costs that interval, not a retransmission timeout; an interval of 0
// NAKs each gap once and leaves the rest to the timer); cumulative ACKs coalesced to one per
// `ack_every` packets and forced by AckReq; duplicates dropped and re-ACKed on the same rule; READ
// requests advancing the PSN by their response count; the message sequence number (MSN).
// Ignores: what the packets carry (placement, receives, READ responses are the NIC's); RNR and
// access errors (reported by the NIC without changing PSN state).
#pragma once

#include <cstdint>

#include "core/units.h"
#include "hw/roce/psn.h"

namespace podsim::roce {

class Responder {
 public:
  enum class Verdict : std::uint8_t {
    kNew,            // the expected PSN: take it
    kDuplicate,      // behind the expected PSN: drop, maybe re-ACK, re-execute a READ
    kSequenceError,  // ahead of a gap, first since the gap opened: drop and NAK
    kIgnore,         // ahead of a gap already NAKed: drop silently
  };

  explicit Responder(int ack_every = 1, core::TimePs nak_interval_ps = 0,
                     std::uint32_t initial_psn = 0)
      : space_(initial_psn),
        ack_every_(ack_every < 1 ? 1 : ack_every),
        nak_interval_ps_(nak_interval_ps) {}

  // Before any packet: the PSN the requester starts at.
  void set_initial_psn(std::uint32_t psn) { space_ = PsnSpace(psn); }

  Verdict classify(std::uint32_t psn, core::TimePs now) {
    const std::uint32_t ahead = psn_distance(expected_psn(), psn);
    if (ahead == 0) return Verdict::kNew;
    if (ahead >= kPsnHalf) return Verdict::kDuplicate;
    if (nak_sent_ && (nak_interval_ps_ == 0 || now < nak_ps_ + nak_interval_ps_)) {
      return Verdict::kIgnore;
    }
    nak_sent_ = true;
    nak_ps_ = now;
    return Verdict::kSequenceError;
  }

  // Takes the expected packet; true when an ACK is due now.
  bool accept(bool ack_request) {
    ++expected_;
    nak_sent_ = false;
    return count_towards_ack(ack_request);
  }
  // Takes the expected READ request, whose responses use `responses` PSNs. The responses
  // acknowledge everything before them, so the ACK coalescing count starts over.
  void accept_read(std::uint32_t responses) {
    expected_ += responses;
    nak_sent_ = false;
    unacked_ = 0;
  }
  // A duplicate was dropped; true when it should be re-ACKed.
  bool duplicate(bool ack_request) { return count_towards_ack(ack_request); }
  // Some other response (a NAK, a READ response) carried the acknowledgement.
  void acknowledged() { unacked_ = 0; }

  std::uint64_t expected_seq() const { return expected_; }
  std::uint32_t expected_psn() const { return space_.psn(expected_); }
  // The PSN an ACK carries: the last one received in order.
  std::uint32_t ack_psn() const { return psn_add(expected_psn(), kPsnMask); }
  // The sequence number of a PSN behind the expected one; false if it lies before the QP's
  // first PSN (a stray packet from a previous connection).
  bool duplicate_seq(std::uint32_t psn, std::uint64_t* seq) const {
    const std::uint32_t back = space_.behind(expected_, psn);
    if (back > expected_) return false;
    *seq = expected_ - back;
    return true;
  }
  std::uint32_t psn_of(std::uint64_t seq) const { return space_.psn(seq); }

  std::uint32_t msn() const { return msn_; }
  void complete_message() { msn_ = psn_add(msn_, 1); }

 private:
  bool count_towards_ack(bool ack_request) {
    if (ack_request || ++unacked_ >= ack_every_) {
      unacked_ = 0;
      return true;
    }
    return false;
  }

  PsnSpace space_;
  int ack_every_;
  core::TimePs nak_interval_ps_;
  std::uint64_t expected_ = 0;
  int unacked_ = 0;
  bool nak_sent_ = false;
  core::TimePs nak_ps_ = 0;
  std::uint32_t msn_ = 0;
};

}  // namespace podsim::roce
