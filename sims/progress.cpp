#include "sims/progress.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>

namespace podsim::sims {

ProgressBar::ProgressBar(std::string label, bool allowed)
    : label_(std::move(label)),
      enabled_(allowed && ::isatty(STDERR_FILENO)),
      start_(Clock::now()),
      last_draw_(start_) {}

ProgressBar::~ProgressBar() {
  if (drawn_) std::fprintf(stderr, "\r\033[K");
}

void ProgressBar::update(double fraction) {
  if (!enabled_) return;
  const auto now = Clock::now();
  if (now - start_ < std::chrono::seconds(1) || now - last_draw_ < std::chrono::milliseconds(100)) {
    return;
  }
  last_draw_ = now;
  drawn_ = true;
  constexpr int kWidth = 40;
  fraction = std::clamp(fraction, 0.0, 1.0);
  const int filled = static_cast<int>(fraction * kWidth);
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  std::fprintf(stderr, "\r%s [%s%s] %5.1f%% %6.1fs", label_.c_str(),
               std::string(filled, '#').c_str(), std::string(kWidth - filled, '.').c_str(),
               100 * fraction, elapsed);
  std::fflush(stderr);
}

}  // namespace podsim::sims
