#include "hw/roce/dcqcn.h"

#include <algorithm>

namespace podsim::roce {

namespace {
constexpr double kRecovered = 1 - 1e-6;  // Rc within 1 ppm of the line rate counts as recovered
constexpr double kNegligibleAlpha = 1e-30;
}  // namespace

Dcqcn::Dcqcn(const DcqcnConfig& config, double line_rate_bps)
    : config_(config),
      line_(line_rate_bps),
      rc_(line_rate_bps),
      rt_(line_rate_bps),
      alpha_(config.initial_alpha) {}

double Dcqcn::decayed(double alpha, std::uint64_t periods, double g) {
  // Repeated multiplication rather than pow(), so results are the same on every libm.
  for (std::uint64_t i = 0; i < periods && alpha > kNegligibleAlpha; ++i) alpha *= 1 - g;
  return alpha > kNegligibleAlpha ? alpha : 0.0;
}

double Dcqcn::alpha(core::TimePs now) const {
  if (!cut_once_ || now <= alpha_ps_) return alpha_;
  const auto period = static_cast<core::TimePs>(config_.alpha_update_period.ps);
  const std::uint64_t periods = (now - alpha_ps_) / period;
  if (periods == 0 || !cnp_in_period_) return decayed(alpha_, periods, config_.g);
  // Per period: the first boundary takes in the CNP that came during its period.
  return decayed((1 - config_.g) * alpha_ + config_.g, periods - 1, config_.g);
}

void Dcqcn::update_alpha(core::TimePs now) {
  if (!cut_once_ || now <= alpha_ps_) return;
  const auto period = static_cast<core::TimePs>(config_.alpha_update_period.ps);
  const std::uint64_t periods = (now - alpha_ps_) / period;
  if (periods == 0) return;
  alpha_ = alpha(now);
  alpha_ps_ += periods * period;
  cnp_in_period_ = false;
}

void Dcqcn::advance(core::TimePs now) {
  for (;;) {
    const core::TimePs next = std::min(pending_cut_ps_, next_increase_ps_);
    if (next > now) return;
    if (pending_cut_ps_ <= next_increase_ps_) {
      pending_cut_ps_ = kNever;
      cut(next);
    } else {
      next_increase_ps_ += static_cast<core::TimePs>(config_.rate_increase_period.ps);
      increase(next, true);
    }
  }
}

void Dcqcn::on_cnp(core::TimePs now) {
  advance(now);
  if (config_.alpha_update == AlphaUpdate::kPerPeriod) {
    update_alpha(now);
    if (cut_once_) cnp_in_period_ = true;  // the first CNP starts the alpha timer instead
  }
  const auto period = static_cast<core::TimePs>(config_.rate_decrease_period.ps);
  if (cut_once_ && now < last_cut_ps_ + period) {
    if (pending_cut_ps_ == kNever) pending_cut_ps_ = last_cut_ps_ + period;
    return;
  }
  cut(now);
}

void Dcqcn::on_sent(std::uint64_t bytes, core::TimePs now) {
  if (config_.byte_counter.bytes == 0 || !limited()) return;
  advance(now);
  bytes_ += bytes;
  while (bytes_ >= config_.byte_counter.bytes && limited()) {
    bytes_ -= config_.byte_counter.bytes;
    increase(now, false);
  }
}

void Dcqcn::cut(core::TimePs at) {
  const bool per_cut = config_.alpha_update == AlphaUpdate::kPerCut;
  if (!per_cut) update_alpha(at);
  const double a = alpha(at);
  if (config_.clamp_target == ClampTarget::kEveryCut || timer_events_ > 0 || !cut_once_) {
    rt_ = rc_;
  }
  set_rate(std::max(config_.min_rate.bits_per_second, rc_ * (1 - a / 2)), at);
  if (per_cut || !cut_once_) {
    // Per cut: alpha as it decayed up to the cut, then raised; its timer restarts here. Per
    // period, the first cut starts the timer.
    alpha_ = per_cut ? (1 - config_.g) * a + config_.g : a;
    alpha_ps_ = at;
  }
  cut_once_ = true;
  last_cut_ps_ = at;
  ++cuts_;
  timer_events_ = byte_events_ = 0;
  bytes_ = 0;
  next_increase_ps_ = at + static_cast<core::TimePs>(config_.rate_increase_period.ps);
}

void Dcqcn::increase(core::TimePs at, bool from_timer) {
  (from_timer ? timer_events_ : byte_events_)++;
  const std::uint64_t t = timer_events_;
  const std::uint64_t b = config_.byte_counter.bytes == 0 ? timer_events_ : byte_events_;
  const auto f = static_cast<std::uint64_t>(config_.fast_recovery_rounds);
  if (std::max(t, b) > f) {
    const double rounds =
        config_.hyper_increase_grows ? static_cast<double>(std::min(t, b) - f) : 1.0;
    const double step = std::min(t, b) > f ? rounds * config_.hyper_increase.bits_per_second
                                           : config_.additive_increase.bits_per_second;
    rt_ = std::min(line_, rt_ + step);
  }
  double rc = (rt_ + rc_) / 2;
  if (rt_ >= line_ && rc >= line_ * kRecovered) rc = line_;
  set_rate(rc, at);
  if (!limited() && rt_ >= line_) next_increase_ps_ = kNever;  // recovered: timers stop
}

void Dcqcn::set_rate(double rc, core::TimePs at) {
  rc_ = rc;
  if (observer_) observer_->set(rc_ / 1e9, at);
}

void Dcqcn::observe(core::TimeWeighted* level, core::TimePs now) {
  observer_ = level;
  if (observer_) observer_->set(rc_ / 1e9, now);
}

}  // namespace podsim::roce
