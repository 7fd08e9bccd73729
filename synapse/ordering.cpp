#include "synapse/ordering.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <limits>
#include <stdexcept>

namespace podsim::synapse {

std::vector<std::size_t> issue_order(const std::vector<OrderTask>& tasks) {
  const std::size_t n = tasks.size();
  std::vector<std::vector<std::size_t>> next(n);
  std::vector<std::size_t> waiting(n, 0);  // dependencies not yet issued
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t d : tasks[i].after) {
      if (d >= i)
        throw std::invalid_argument(fmt::format(
            "issue order: task {} follows task {}, not earlier in program order", i, d));
      next[d].push_back(i);
      ++waiting[i];
    }
  }
  // The longest estimated path from the end of each task to the graph's end (its tail).
  std::vector<double> tail(n, 0);
  for (std::size_t i = n; i-- > 0;) {
    for (std::size_t s : next[i]) tail[i] = std::max(tail[i], tasks[s].ns + tail[s]);
  }
  std::array<double, 3> engine_free{0, 0, 0};
  std::vector<double> finish(n, 0), inputs_at(n, 0);  // inputs_at: when its inputs are done
  std::vector<std::size_t> ready, order;
  for (std::size_t i = 0; i < n; ++i) {
    if (waiting[i] == 0) ready.push_back(i);
  }
  order.reserve(n);
  while (!ready.empty()) {
    std::size_t pick = 0;
    double pick_start = std::numeric_limits<double>::infinity();
    for (std::size_t r = 0; r < ready.size(); ++r) {
      const std::size_t t = ready[r];
      const double start =
          std::max(engine_free[static_cast<std::size_t>(tasks[t].engine)], inputs_at[t]);
      const std::size_t best = ready[pick];
      if (start < pick_start ||
          (start == pick_start && (tail[t] > tail[best] || (tail[t] == tail[best] && t < best)))) {
        pick = r;
        pick_start = start;
      }
    }
    const std::size_t t = ready[pick];
    ready.erase(ready.begin() + static_cast<std::ptrdiff_t>(pick));
    finish[t] = pick_start + tasks[t].ns;
    engine_free[static_cast<std::size_t>(tasks[t].engine)] = finish[t];
    order.push_back(t);
    for (std::size_t s : next[t]) {
      inputs_at[s] = std::max(inputs_at[s], finish[t]);
      if (--waiting[s] == 0) ready.push_back(s);
    }
  }
  return order;
}

}  // namespace podsim::synapse
