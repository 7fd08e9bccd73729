// Max-min fair sharing of links among flows: the rates a flow-level network gives its transfers
// (the rack-scale speed issue's flow mode; not yet wired to the collectives, see
// docs/network.md). Captures: each flow crosses a set of links (its route, ECMP choice
// included) and may have a rate limit of its own (its NIC port or QP pacing); rates are the
// max-min fair allocation, found by progressive filling: every unfrozen flow's rate rises at
// the same pace until a link fills or a flow meets its limit, and the flows held there freeze.
// Ignores: packets, queues and congestion control dynamics (PFC, DCQCN), which a flow model
// cannot follow; the caller adds framing overhead and latency.
// Rates are recomputed on demand after flows come or go; a flow's id stays valid until removed.
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

namespace podsim::flow {

class MaxMinSolver {
 public:
  static constexpr double kUnlimited = std::numeric_limits<double>::infinity();

  // A link of `capacity` (any unit, the same for every link and limit); returns its id.
  // Throws std::invalid_argument when the capacity is not positive.
  int add_link(double capacity);
  // A flow over `links` (ids from add_link; a link may appear once), limited to `limit`.
  // Returns its id. Throws std::invalid_argument on an unknown or repeated link, or a flow with
  // neither links nor a finite limit (its rate would be unbounded).
  int add_flow(const std::vector<int>& links, double limit = kUnlimited);
  // Throws std::invalid_argument when `flow` is not a live flow.
  void remove_flow(int flow);

  // Recomputes every live flow's rate; rate(flow) then reads it. Deterministic: the result
  // depends only on the links and flows, not on the order flows came in.
  void solve();
  double rate(int flow) const;
  // The sum of the live flows' rates over `link`, as of the last solve().
  double load(int link) const;
  int live_flows() const { return live_; }

 private:
  struct Flow {
    std::vector<int> links;
    double limit = kUnlimited;
    double rate = 0;
    bool live = false;
  };
  void check_flow(int flow) const;

  std::vector<double> capacity_;
  std::vector<Flow> flows_;
  std::vector<int> free_ids_;  // removed flows' ids, reused
  int live_ = 0;
};

}  // namespace podsim::flow
