#include "hw/roce/congestion_window.h"

#include <algorithm>
#include <cmath>

namespace podsim::roce {

CongestionWindow::CongestionWindow(const WindowConfig& config, std::uint32_t segment_bytes)
    : config_(config),
      receive_packets_(std::max<std::uint64_t>(1, config.receive_window.bytes / segment_bytes)),
      cwnd_(config.initial_window) {}

std::uint64_t CongestionWindow::allowed() const {
  const auto window = static_cast<std::uint64_t>(std::max(1.0, std::floor(cwnd_)));
  return std::min(window, receive_packets_);
}

void CongestionWindow::on_send(std::uint64_t end_seq, std::uint64_t in_flight, bool retransmission,
                               core::TimePs now) {
  const auto rto = static_cast<core::TimePs>(config_.rto.ps);
  if (config_.restart_after_idle && sent_ && in_flight == 0 && now - last_send_ > rto &&
      cwnd_ > config_.initial_window) {
    cwnd_ = config_.initial_window;
    epoch_ = false;  // CUBIC's curve starts again from here, not across the idle time
    changed(now);
  }
  sent_ = true;
  last_send_ = now;
  most_in_flight_ = std::max(most_in_flight_, in_flight + 1);
  sent_end_ = std::max(sent_end_, end_seq);
  if (!timing_ && !retransmission) {
    timing_ = true;
    timed_end_ = end_seq;
    timed_at_ = now;
  }
}

void CongestionWindow::on_ack(std::uint64_t una, std::uint64_t acked, core::TimePs now) {
  if (timing_ && una >= timed_end_) {
    timing_ = false;
    const core::TimePs sample = now - timed_at_;
    srtt_ps_ = srtt_ps_ == 0 ? sample : srtt_ps_ - srtt_ps_ / 8 + sample / 8;
  }
  // After a loss or an echo the window stays until the data sent before it is acknowledged;
  // and it grows only while it limits the sender [RFC 9438 5.8], never past the receiver's.
  const bool limited = window_limited();
  if (una >= limit_mark_) {
    // A window of data since the last look: judge the next one by what is in flight from now.
    limit_mark_ = sent_end_;
    most_in_flight_ = sent_end_ > una ? sent_end_ - una : 0;
  }
  if (acked == 0 || una < hold_until_ || !limited) return;
  double left = static_cast<double>(acked);
  if (cwnd_ < ssthresh_) {
    const double step = std::min(left, ssthresh_ - cwnd_);
    cwnd_ += step;
    left -= step;
  }
  if (left > 0) grow_in_avoidance(left, now);
  cwnd_ = std::min(cwnd_, static_cast<double>(receive_packets_));
  changed(now);
}

bool CongestionWindow::window_limited() const {
  // As Linux judges it: in slow start when half the window was in flight, in avoidance when
  // all of it was, at some point in the last window of data.
  const auto in_flight = static_cast<double>(most_in_flight_);
  return cwnd_ < ssthresh_ ? cwnd_ < 2 * in_flight : in_flight >= std::floor(cwnd_);
}

double CongestionWindow::cubic_at(double t) const {
  const double d = t - k_;
  return config_.cubic_c * d * d * d + w_max_;
}

void CongestionWindow::grow_in_avoidance(double acked, core::TimePs now) {
  if (config_.algorithm == WindowAlgorithm::kReno) {
    cwnd_ += acked / cwnd_;
    return;
  }
  if (!epoch_) {
    // Avoidance reached without a cut (from slow start): the curve starts flat at this window.
    epoch_ = true;
    epoch_start_ = now;
    w_max_ = cwnd_prior_ = cwnd_;
    k_ = 0;
    w_est_ = cwnd_;
  }
  const double t = static_cast<double>(now - epoch_start_) * 1e-12;
  const double rtt = static_cast<double>(srtt_ps_) * 1e-12;
  const double beta = config_.cubic_beta;
  const double alpha = w_est_ >= cwnd_prior_ ? 1.0 : 3 * (1 - beta) / (1 + beta);
  w_est_ += alpha * acked / cwnd_;
  if (cubic_at(t) < w_est_) {
    cwnd_ = std::max(cwnd_, w_est_);  // the Reno-friendly region
    return;
  }
  const double target = std::clamp(cubic_at(t + rtt), cwnd_, 1.5 * cwnd_);
  cwnd_ += (target - cwnd_) / cwnd_ * acked;
}

bool CongestionWindow::on_congestion(std::uint64_t una, std::uint64_t sent_end, core::TimePs now) {
  // Once per window of data: not before it is acknowledged, nor for data sent before the cut.
  if (una < recover_ || sent_end <= recover_) return false;
  recover_ = hold_until_ = sent_end;
  reduce(config_.algorithm == WindowAlgorithm::kReno ? 0.5 : config_.cubic_beta, now);
  return true;
}

void CongestionWindow::on_timeout(std::uint64_t sent_end, core::TimePs now) {
  // One cut for the timeout (none if the window was already cut for this data), then one
  // segment, sent again by slow start.
  if (sent_end > recover_) {
    reduce(config_.algorithm == WindowAlgorithm::kReno ? 0.5 : config_.cubic_beta, now);
  }
  recover_ = sent_end;
  hold_until_ = 0;  // slow start resends it
  cwnd_ = 1;
  epoch_ = false;  // avoidance, when it comes, starts a curve of its own [RFC 9438 4.8]
  timing_ = false;
  changed(now);
}

void CongestionWindow::reduce(double factor, core::TimePs now) {
  ++reductions_;
  const double before = cwnd_;
  cwnd_prior_ = before;
  // Fast convergence: a flow cut below its previous peak gives up more of it.
  w_max_ = epoch_ && before < w_max_ ? before * (1 + factor) / 2 : before;
  ssthresh_ = std::max(before * factor, 2.0);
  cwnd_ = ssthresh_;
  epoch_ = true;
  epoch_start_ = now;
  k_ = std::cbrt(std::max(0.0, w_max_ - cwnd_) / config_.cubic_c);
  w_est_ = cwnd_;
  changed(now);
}

void CongestionWindow::observe(core::TimeWeighted* level, core::TimePs now) {
  level_ = level;
  changed(now);
}

void CongestionWindow::changed(core::TimePs now) {
  if (level_) level_->set(cwnd_, now);
}

}  // namespace podsim::roce
