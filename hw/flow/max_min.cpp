#include "hw/flow/max_min.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace podsim::flow {

namespace {
// Capacity left below this share of a link's capacity counts as full (rounding in the filling).
constexpr double kFull = 1e-12;
}  // namespace

int MaxMinSolver::add_link(double capacity) {
  if (!(capacity > 0)) {
    throw std::invalid_argument(fmt::format("flow link capacity {} is not positive", capacity));
  }
  capacity_.push_back(capacity);
  return static_cast<int>(capacity_.size()) - 1;
}

int MaxMinSolver::add_flow(const std::vector<int>& links, double limit) {
  std::vector<int> sorted = links;
  std::sort(sorted.begin(), sorted.end());
  for (std::size_t i = 0; i < sorted.size(); ++i) {
    if (sorted[i] < 0 || sorted[i] >= static_cast<int>(capacity_.size())) {
      throw std::invalid_argument(fmt::format("flow over unknown link {}", sorted[i]));
    }
    if (i > 0 && sorted[i] == sorted[i - 1]) {
      throw std::invalid_argument(fmt::format("flow crosses link {} twice", sorted[i]));
    }
  }
  if (sorted.empty() && !(limit < kUnlimited)) {
    throw std::invalid_argument("a flow with no link needs a finite rate limit");
  }
  if (!(limit > 0))
    throw std::invalid_argument(fmt::format("flow limit {} is not positive", limit));
  int id = static_cast<int>(flows_.size());
  if (!free_ids_.empty()) {
    id = free_ids_.back();
    free_ids_.pop_back();
  } else {
    flows_.emplace_back();
  }
  flows_[static_cast<std::size_t>(id)] = Flow{std::move(sorted), limit, 0, true};
  ++live_;
  return id;
}

void MaxMinSolver::check_flow(int flow) const {
  if (flow < 0 || flow >= static_cast<int>(flows_.size()) ||
      !flows_[static_cast<std::size_t>(flow)].live) {
    throw std::invalid_argument(fmt::format("flow {} is not a live flow", flow));
  }
}

void MaxMinSolver::remove_flow(int flow) {
  check_flow(flow);
  flows_[static_cast<std::size_t>(flow)] = Flow{};
  free_ids_.push_back(flow);
  std::sort(free_ids_.rbegin(), free_ids_.rend());  // lowest id reused first: deterministic
  --live_;
}

void MaxMinSolver::solve() {
  const std::size_t links = capacity_.size();
  std::vector<double> left = capacity_;
  std::vector<int> unfrozen_on(links, 0);
  std::vector<std::size_t> unfrozen;
  for (std::size_t f = 0; f < flows_.size(); ++f) {
    if (!flows_[f].live) continue;
    flows_[f].rate = 0;
    unfrozen.push_back(f);
    for (int l : flows_[f].links) ++unfrozen_on[static_cast<std::size_t>(l)];
  }
  double level = 0;  // the rate every unfrozen flow has reached
  while (!unfrozen.empty()) {
    // The next level at which a link fills or a flow meets its limit.
    double next = MaxMinSolver::kUnlimited;
    for (std::size_t l = 0; l < links; ++l) {
      if (unfrozen_on[l] > 0) next = std::min(next, level + left[l] / unfrozen_on[l]);
    }
    for (std::size_t f : unfrozen) next = std::min(next, flows_[f].limit);
    const double rise = next - level;
    for (std::size_t l = 0; l < links; ++l) left[l] -= rise * unfrozen_on[l];
    level = next;
    std::vector<std::size_t> still;
    for (std::size_t f : unfrozen) {
      Flow& flow = flows_[f];
      flow.rate = level;
      bool frozen = flow.limit <= level;
      for (int l : flow.links) {
        frozen = frozen || left[static_cast<std::size_t>(l)] <=
                               kFull * capacity_[static_cast<std::size_t>(l)];
      }
      if (!frozen) {
        still.push_back(f);
        continue;
      }
      for (int l : flow.links) --unfrozen_on[static_cast<std::size_t>(l)];
    }
    unfrozen = std::move(still);
  }
}

double MaxMinSolver::rate(int flow) const {
  check_flow(flow);
  return flows_[static_cast<std::size_t>(flow)].rate;
}

double MaxMinSolver::load(int link) const {
  if (link < 0 || link >= static_cast<int>(capacity_.size())) {
    throw std::invalid_argument(fmt::format("unknown link {}", link));
  }
  double sum = 0;
  for (const Flow& f : flows_) {
    if (f.live && std::find(f.links.begin(), f.links.end(), link) != f.links.end()) sum += f.rate;
  }
  return sum;
}

}  // namespace podsim::flow
