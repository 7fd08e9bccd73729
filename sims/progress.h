// A one-line progress bar on stderr for runs that take a while. It appears only when stderr is a
// terminal and the run has lasted over a second, so pipes, logs and short runs stay clean.
#pragma once

#include <chrono>
#include <string>

namespace podsim::sims {

class ProgressBar {
 public:
  // `allowed` is false under --quiet; the terminal check is done here.
  ProgressBar(std::string label, bool allowed);
  ~ProgressBar();
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  // fraction in [0, 1]; redraws at most ten times a second.
  void update(double fraction);

 private:
  using Clock = std::chrono::steady_clock;
  std::string label_;
  bool enabled_;
  bool drawn_ = false;
  Clock::time_point start_, last_draw_;
};

}  // namespace podsim::sims
