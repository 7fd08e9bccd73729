// Max-min fair sharing of links among flows: the rates the flow-level network (flow_network.h)
// gives its transfers. Captures: each flow uses a set of links, each with a weight (the link
// carries weight x the flow's rate: 1 on the links its data crosses, a small fraction on the
// links its acknowledgements take back), and may have a rate limit of its own; rates are the
// max-min fair allocation, found by progressive filling: every unfrozen flow's rate rises at the
// same pace until a link fills or a flow meets its limit, and the flows held there freeze
// (in rounds over the whole group for small groups, one bottleneck at a time from a heap for
// large ones; the two agree up to rounding).
// Incremental: a flow's rate is set by its limit or by a full link on which it is among the
// fastest (its bottleneck), so a change can reach other flows only through the fastest flows
// on full links. solve() recomputes the flows added since the last solve and, transitively, the
// fastest flows on every full link that a recomputed or removed flow crosses; the others keep
// their rates and their loads. When a recomputed flow ends up held by a link on which a flow kept
// is faster, that flow is recomputed too and the solve repeated, so the rates are the max-min
// allocation of all live flows (up to rounding), however few were recomputed.
// Ignores: packets, queues and congestion control dynamics (PFC, DCQCN), which a flow model
// cannot follow; the caller adds framing overhead and latency.
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

#include "hw/flow/level_heap.h"

namespace podsim::flow {

class MaxMinSolver {
 public:
  static constexpr double kUnlimited = std::numeric_limits<double>::infinity();

  struct Use {
    int link = -1;
    double weight = 1;  // the link carries weight x the flow's rate
  };

  // A link of `capacity` (any unit, the same for every link and limit); returns its id.
  // Throws std::invalid_argument when the capacity is not positive.
  int add_link(double capacity);
  // A flow using `uses` (links from add_link, each at most once, weights positive), limited to
  // `limit`. Returns its id. Throws std::invalid_argument on an unknown or repeated link, a
  // weight that is not positive, or a flow with neither links nor a finite limit (its rate
  // would be unbounded).
  int add_weighted_flow(const std::vector<Use>& uses, double limit = kUnlimited);
  // The same with every weight 1.
  int add_flow(const std::vector<int>& links, double limit = kUnlimited);
  // Throws std::invalid_argument when `flow` is not a live flow.
  void remove_flow(int flow);

  // Recomputes the rates of the flows a change since the last solve can reach (above), and
  // returns those flows (ascending ids; their rates may or may not have changed). rate(flow) then
  // reads any live flow's rate. Deterministic: the same calls give the same rates, and a set of
  // flows added at once gets the same rates whatever order they came in.
  const std::vector<int>& solve();
  double rate(int flow) const;
  // The weighted sum of the live flows' rates over `link`, as of the last solve().
  double load(int link) const;
  int live_flows() const { return live_; }

 private:
  struct Flow {
    std::vector<Use> uses;
    std::vector<std::uint32_t> slot;  // the flow's place in each used link's `flows`
    double limit = kUnlimited;
    double rate = 0;
    std::uint64_t mark = 0;  // recomputed by the solve of this mark
    int held_by = -1;        // the link the fill froze it at (-1: its limit)
    bool live = false;
    bool frozen = false;
  };
  struct Link {
    double capacity = 0;
    std::vector<int> flows;       // live flows using it
    std::vector<double> weights;  // theirs on it
    // As of the last solve that reached it.
    bool full = false;
    double fastest = 0;  // the fastest flow's rate
    // Scratch of the solve that last reached the link.
    std::uint64_t mark = 0;
    double room = 0;          // its capacity less the load of the flows kept
    double fastest_kept = 0;  // the fastest flow's rate among those kept
    double left = 0;
    double weight = 0;  // of the unfrozen flows on it
    int unfrozen = 0;
    double base = 0;  // the level `left` was last brought to
    bool dirty = false;
  };
  // A level at which flow `id` meets its limit.
  struct Level {
    double at;
    int id;
  };
  void check_flow(int flow) const;
  void touch(int link);
  void reach_link(int link);
  void join(int flow);
  void reach();
  bool join_overtaken();
  void set_room();
  void settle_links();
  void fill();
  void fill_in_rounds();
  void fill_by_bottleneck();

  std::vector<Link> links_;
  std::vector<Flow> flows_;
  std::vector<int> free_ids_;  // removed flows' ids, reused lowest first
  std::vector<int> dirty_;     // links that lost a flow since the last solve
  std::vector<int> added_;     // flows added since the last solve
  std::uint64_t mark_ = 0;
  std::vector<int> group_links_;  // the links the solve reached and the flows it recomputes
  std::vector<int> group_flows_;
  std::vector<int> full_reached_;  // full links whose fastest flows have not joined yet
  LevelHeap link_levels_;          // fill()'s: where each link fills
  std::vector<Level> limit_heap_;  // fill()'s
  int live_ = 0;
};

}  // namespace podsim::flow
