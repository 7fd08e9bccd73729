// DCQCN's reaction point: the sending rate of one QP, cut on congestion notifications and raised
// again by timer and byte counter (Zhu et al., SIGCOMM'15, section 3.1; parameter sets in
// [N2]).
// Captures: on a CNP, Rt = Rc, Rc = Rc (1 - alpha/2), alpha = (1 - g) alpha + g, at most one cut
// per rate-decrease period (a CNP inside the period is applied when it ends); alpha decaying by
// (1 - g) per alpha period without a CNP, from the first CNP on; increase events from the
// rate-increase timer and, when enabled, the byte counter, both restarted by a cut. With T timer
// and B byte-counter events since the cut and F fast-recovery rounds: max(T, B) <= F is fast
// recovery (Rc = (Rt + Rc) / 2), min(T, B) > F is hyper increase (Rt += (min(T, B) - F) HAI),
// otherwise additive increase (Rt += AI), each followed by Rc = (Rt + Rc) / 2. With the byte
// counter disabled B follows T, so timer-only DCQCN goes from fast recovery straight to hyper
// increase. Rt and Rc never exceed the line rate nor Rc falls below the minimum; within 1 ppm of
// the line rate the QP counts as recovered and its timers stop.
// Timers are evaluated lazily: advance(now) replays every timer event up to `now` in time order,
// so an idle QP costs nothing and the result equals an event-driven run.
// Where deployed NICs differ (DcqcnConfig's profile `nic`, after [N2]'s simulator): a cut sets
// Rt = Rc only when a timer increase came since the previous cut; alpha moves once per alpha
// period, (1 - g) alpha + g when a CNP came in it, (1 - g) alpha otherwise, and not at cuts; hyper
// increase adds HAI per event.
// Ignores: the notification point (the NIC sends CNPs) and rate limiting itself (the NIC paces
// packets at rate()).
#pragma once

#include <cstdint>
#include <limits>

#include "core/stats.h"
#include "core/units.h"
#include "hw/roce/roce_config.h"

namespace podsim::roce {

class Dcqcn {
 public:
  static constexpr core::TimePs kNever = std::numeric_limits<core::TimePs>::max();

  Dcqcn(const DcqcnConfig& config, double line_rate_bps);

  // A CNP for this QP arrived at `now` (times never go backwards).
  void on_cnp(core::TimePs now);
  // `bytes` were sent at `now`; drives the byte counter.
  void on_sent(std::uint64_t bytes, core::TimePs now);
  // Applies every timer event due by `now`.
  void advance(core::TimePs now);

  // The current rate Rc and target Rt in bit/s, as of the last advance().
  double rate() const { return rc_; }
  double target_rate() const { return rt_; }
  double line_rate() const { return line_; }
  bool limited() const { return rc_ < line_; }
  // Alpha as of `now` (decay included).
  double alpha(core::TimePs now) const;
  std::uint64_t cuts() const { return cuts_; }

  // Records Rc in Gb/s at each change.
  void observe(core::TimeWeighted* level, core::TimePs now);

 private:
  void cut(core::TimePs at);
  // Per-period alpha: folds the alpha periods ended by `now` into alpha_.
  void update_alpha(core::TimePs now);
  void increase(core::TimePs at, bool from_timer);
  void set_rate(double rc, core::TimePs at);
  static double decayed(double alpha, std::uint64_t periods, double g);

  DcqcnConfig config_;
  double line_;
  double rc_, rt_;
  double alpha_;
  bool cut_once_ = false;
  bool cnp_in_period_ = false;  // per-period alpha: a CNP came since the last alpha event
  core::TimePs alpha_ps_ = 0;   // time of the last alpha event
  core::TimePs last_cut_ps_ = 0;
  core::TimePs pending_cut_ps_ = kNever;
  core::TimePs next_increase_ps_ = kNever;
  std::uint64_t timer_events_ = 0, byte_events_ = 0;
  std::uint64_t bytes_ = 0;  // since the last byte-counter event
  std::uint64_t cuts_ = 0;
  core::TimeWeighted* observer_ = nullptr;
};

}  // namespace podsim::roce
