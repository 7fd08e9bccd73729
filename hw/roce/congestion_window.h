// A TCP sender's congestion window, for NICs that carry TCP over the reliable packet machinery
// (the hosts' front-end network with host.network.transport tcp): how many packets one
// connection may have in flight, grown by ACKs and cut by losses, timeouts and ECN echoes.
// Captures: slow start from an initial window of 10 segments [RFC 6928] counting every packet
// an ACK covers; Reno's congestion avoidance, one segment per window [RFC 5681], or CUBIC's
// cubic growth with its Reno-friendly region and fast convergence, Linux's default [RFC 9438];
// one reduction per window of data for losses and ECN echoes alike, no growth until the data
// sent before it is acknowledged [RFC 6582, RFC 3168 6.1.2]; after a timeout a loss window of
// one segment; the restart window after an idle period longer than the RTO [RFC 5681 4.1,
// Linux's tcp_slow_start_after_idle]; the receiver's window as a cap; the smoothed RTT from one
// timed packet at a time, none timed across a retransmission [RFC 6298, Karn].
// The window grows only while it limits the sender (Linux's judgement: half of it in flight in
// slow start, all of it in avoidance, within the last window of data), never past the
// receiver's window.
// Ignores: SACK and fast recovery's window inflation (the NIC recovers by go-back-N), pacing,
// HyStart's early exit from slow start, DCTCP's proportional cut, the RTO's own estimate (its
// minimum, Linux's 200 ms, is what a data centre's short RTTs give; its doubling at each expiry
// is the requester's timer's, requester.h), and byte counting within a packet (windows count
// packets of the path MTU). Plain C++.
#pragma once

#include <cstdint>
#include <limits>

#include "core/config_binding.h"
#include "core/stats.h"
#include "core/units.h"

namespace podsim::roce {

enum class WindowAlgorithm { kReno, kCubic };

struct WindowConfig {
  WindowAlgorithm algorithm = WindowAlgorithm::kCubic;
  int initial_window = 10;                 // segments
  core::ByteSize receive_window{6291456};  // 6 MiB
  bool ecn = false;
  bool restart_after_idle = true;
  core::Duration rto{200000000000};  // 200 ms
  double cubic_c = 0.4;
  double cubic_beta = 0.7;

  template <class V>
  void describe(V& v) {
    v.choice("algorithm", algorithm,
             core::Choices<WindowAlgorithm>{{"cubic", WindowAlgorithm::kCubic},
                                            {"reno", WindowAlgorithm::kReno}},
             core::Spec("window growth: cubic (Linux's default) or reno (one segment per RTT)")
                 .source("[T12] RFC 9438, RFC 5681"));
    v.field("initial_window", initial_window,
            core::Spec("segments a connection may send before its first ACK")
                .range(1, 1000)
                .source("[T12] RFC 6928: 10"));
    v.field("receive_window", receive_window,
            core::Spec("the receiver's window: at most this much data in flight")
                .positive()
                .source("[T12] Linux tcp_rmem's largest buffer, 6 MiB"));
    v.field("ecn", ecn,
            core::Spec("negotiate ECN: data is ECN-capable and a CE mark cuts the window as a "
                       "loss does; off, switches drop instead of marking")
                .source("[T12] RFC 3168; Linux tcp_ecn 2 does not ask for it"));
    v.field("restart_after_idle", restart_after_idle,
            core::Spec("after an idle period longer than the RTO, restart from the initial "
                       "window")
                .source("[T12] RFC 5681 4.1; Linux tcp_slow_start_after_idle 1"));
    v.field("rto", rto,
            core::Spec("retransmission timeout, doubled at each expiry in a row (the NIC's "
                       "retransmit_timeout does not apply)")
                .positive()
                .source("[T12] Linux TCP_RTO_MIN 200 ms"));
    v.field("cubic_c", cubic_c,
            core::Spec("CUBIC's C, segments per second cubed").positive().source("[T12] 0.4"));
    v.field("cubic_beta", cubic_beta,
            core::Spec("CUBIC's multiplicative decrease factor")
                .range(0.1, 0.95)
                .source("[T12] RFC 9438: 0.7"));
  }
};

class CongestionWindow {
 public:
  static constexpr std::uint64_t kUnlimited = std::numeric_limits<std::uint64_t>::max();

  CongestionWindow(const WindowConfig& config, std::uint32_t segment_bytes);

  // Packets that may be in flight now: the congestion window, at least one, within the
  // receiver's window.
  std::uint64_t allowed() const;

  // A packet ending at sequence number `end_seq` leaves at `now` with `in_flight` packets
  // already in flight; `retransmission` if any of it has been sent before.
  void on_send(std::uint64_t end_seq, std::uint64_t in_flight, bool retransmission,
               core::TimePs now);
  // An ACK moved the oldest unacknowledged sequence number to `una`, covering `acked` packets.
  void on_ack(std::uint64_t una, std::uint64_t acked, core::TimePs now);
  // A loss (a NAK for a gap, as three duplicate ACKs) or an ECN echo, with `sent_end` one past
  // the highest sequence number sent and `una` the oldest unacknowledged: cuts the window unless
  // a cut for the same window of data came before. True if it cut.
  bool on_congestion(std::uint64_t una, std::uint64_t sent_end, core::TimePs now);
  // The retransmission timer expired: a loss window of one segment.
  void on_timeout(std::uint64_t sent_end, core::TimePs now);
  // Go-back-N will resend what a timing was measuring: the sample would mix two sends.
  void forget_timing() { timing_ = false; }

  double cwnd() const { return cwnd_; }
  double ssthresh() const { return ssthresh_; }
  core::TimePs srtt_ps() const { return srtt_ps_; }
  int reductions() const { return reductions_; }
  // The window in segments, as a time-weighted statistic from now on.
  void observe(core::TimeWeighted* level, core::TimePs now);

  // CUBIC's window `t` seconds into an epoch that began after a cut from `w_max` (RFC 9438
  // eq. 1); public for tests.
  double cubic_at(double t_seconds) const;

 private:
  bool window_limited() const;
  void reduce(double factor, core::TimePs now);
  void grow_in_avoidance(double acked, core::TimePs now);
  void changed(core::TimePs now);

  WindowConfig config_;
  std::uint64_t receive_packets_;
  double cwnd_;
  double ssthresh_ = std::numeric_limits<double>::infinity();
  std::uint64_t recover_ = 0;     // no cut until una passes it
  std::uint64_t hold_until_ = 0;  // no growth until una passes it (after a loss or an echo)
  // CUBIC's epoch: when it began, the window before the cut and K; the Reno-friendly estimate.
  bool epoch_ = false;
  core::TimePs epoch_start_ = 0;
  double w_max_ = 0, k_ = 0, w_est_ = 0;
  double cwnd_prior_ = 0;  // the window before the last cut (W_est's alpha turns 1 there)
  // RTT sampling: one packet timed at a time.
  bool timing_ = false;
  std::uint64_t timed_end_ = 0;
  core::TimePs timed_at_ = 0;
  core::TimePs srtt_ps_ = 0;
  core::TimePs last_send_ = 0;
  bool sent_ = false;
  // Whether the window limits the sender: the most packets in flight in the current window of
  // data, which ends when una passes limit_mark_.
  std::uint64_t most_in_flight_ = 0, limit_mark_ = 0, sent_end_ = 0;
  int reductions_ = 0;
  core::TimeWeighted* level_ = nullptr;
};

}  // namespace podsim::roce
