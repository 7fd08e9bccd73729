#include "hw/flow/max_min.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <stdexcept>

namespace podsim::flow {

namespace {
// Capacity left below this share of a link's capacity counts as full (rounding in the filling).
constexpr double kFull = 1e-12;
// Rates within this share of each other are equal (rounding in the filling).
constexpr double kTie = 1e-9;
}  // namespace

int MaxMinSolver::add_link(double capacity) {
  if (!(capacity > 0)) {
    throw std::invalid_argument(fmt::format("flow link capacity {} is not positive", capacity));
  }
  links_.emplace_back();
  links_.back().capacity = capacity;
  return static_cast<int>(links_.size()) - 1;
}

int MaxMinSolver::add_flow(const std::vector<int>& links, double limit) {
  std::vector<Use> uses;
  uses.reserve(links.size());
  for (int l : links) uses.push_back({l, 1});
  return add_weighted_flow(uses, limit);
}

int MaxMinSolver::add_weighted_flow(const std::vector<Use>& uses, double limit) {
  std::vector<int> sorted;
  for (const Use& u : uses) {
    if (u.link < 0 || u.link >= static_cast<int>(links_.size())) {
      throw std::invalid_argument(fmt::format("flow over unknown link {}", u.link));
    }
    if (!(u.weight > 0)) {
      throw std::invalid_argument(
          fmt::format("flow uses link {} with weight {}: weights are positive", u.link, u.weight));
    }
    sorted.push_back(u.link);
  }
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) {
    throw std::invalid_argument(fmt::format("flow crosses link {} twice",
                                            *std::adjacent_find(sorted.begin(), sorted.end())));
  }
  if (uses.empty() && !(limit < kUnlimited)) {
    throw std::invalid_argument("a flow with no link needs a finite rate limit");
  }
  if (!(limit > 0))
    throw std::invalid_argument(fmt::format("flow limit {} is not positive", limit));
  int id = static_cast<int>(flows_.size());
  if (!free_ids_.empty()) {
    std::pop_heap(free_ids_.begin(), free_ids_.end(), std::greater<int>());
    id = free_ids_.back();
    free_ids_.pop_back();
  } else {
    flows_.emplace_back();
  }
  Flow& f = flows_[static_cast<std::size_t>(id)];
  f = Flow{};
  f.uses = uses;
  f.limit = limit;
  f.live = true;
  if (uses.empty()) f.rate = limit;
  added_.push_back(id);
  for (const Use& u : uses) {
    Link& link = links_[static_cast<std::size_t>(u.link)];
    f.slot.push_back(static_cast<std::uint32_t>(link.flows.size()));
    link.flows.push_back(id);
    link.weights.push_back(u.weight);
  }
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
  Flow& f = flows_[static_cast<std::size_t>(flow)];
  for (std::size_t i = 0; i < f.uses.size(); ++i) {
    Link& link = links_[static_cast<std::size_t>(f.uses[i].link)];
    // The last flow on the link takes the leaving one's place.
    const int moved = link.flows.back();
    link.flows[f.slot[i]] = moved;
    link.weights[f.slot[i]] = link.weights.back();
    link.flows.pop_back();
    link.weights.pop_back();
    if (moved != flow) {
      Flow& m = flows_[static_cast<std::size_t>(moved)];
      for (std::size_t j = 0; j < m.uses.size(); ++j) {
        if (m.uses[j].link == f.uses[i].link) m.slot[j] = f.slot[i];
      }
    }
    touch(f.uses[i].link);
  }
  f = Flow{};
  free_ids_.push_back(flow);
  std::push_heap(free_ids_.begin(), free_ids_.end(), std::greater<int>());
  --live_;
}

void MaxMinSolver::touch(int link) {
  Link& l = links_[static_cast<std::size_t>(link)];
  if (l.dirty) return;
  l.dirty = true;
  dirty_.push_back(link);
}

// Link `link` joins the solve; when it was full, its fastest flows (those it may hold) will join.
void MaxMinSolver::reach_link(int link) {
  Link& l = links_[static_cast<std::size_t>(link)];
  if (l.mark == mark_) return;
  l.mark = mark_;
  group_links_.push_back(link);
  if (l.full) full_reached_.push_back(link);
}

// Flow `id` is recomputed; the links it crosses join the solve.
void MaxMinSolver::join(int id) {
  Flow& f = flows_[static_cast<std::size_t>(id)];
  if (f.mark == mark_) return;
  f.mark = mark_;
  group_flows_.push_back(id);
  for (const Use& u : f.uses) reach_link(u.link);
}

// The fastest flows of every full link reached join, until none is left out.
void MaxMinSolver::reach() {
  while (!full_reached_.empty()) {
    const Link& l = links_[static_cast<std::size_t>(full_reached_.back())];
    full_reached_.pop_back();
    for (int id : l.flows) {
      if (flows_[static_cast<std::size_t>(id)].rate >= l.fastest * (1 - kTie)) join(id);
    }
  }
}

// After a fill: a recomputed flow held by a link on which a kept flow is faster is not max-min
// fair (it could rise at the kept flow's expense); such kept flows join. Returns whether any did.
bool MaxMinSolver::join_overtaken() {
  bool joined = false;
  for (std::size_t i = 0, n = group_flows_.size(); i < n; ++i) {
    const Flow& f = flows_[static_cast<std::size_t>(group_flows_[i])];
    if (f.held_by < 0) continue;
    const Link& l = links_[static_cast<std::size_t>(f.held_by)];
    const double rate = f.rate;
    if (l.fastest_kept <= rate * (1 + kTie)) continue;
    for (int id : l.flows) {
      if (flows_[static_cast<std::size_t>(id)].rate > rate * (1 + kTie)) {
        joined = joined || flows_[static_cast<std::size_t>(id)].mark != mark_;
        join(id);
      }
    }
  }
  return joined;
}

namespace {
// `ids` (each marked `mark` in `items`, no repeats) in ascending order: a scan of every item in
// id order where they are many (cheaper than sorting a group that spans the fabric), a sort
// otherwise.
template <class Items>
void sort_marked(std::vector<int>& ids, const Items& items, std::uint64_t mark) {
  if (ids.size() * 8 < items.size()) return std::sort(ids.begin(), ids.end());
  ids.clear();
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (items[i].mark == mark) ids.push_back(static_cast<int>(i));
  }
}
}  // namespace

const std::vector<int>& MaxMinSolver::solve() {
  ++mark_;
  group_links_.clear();
  group_flows_.clear();
  for (int link : dirty_) {
    links_[static_cast<std::size_t>(link)].dirty = false;
    reach_link(link);
  }
  dirty_.clear();
  for (int id : added_) {
    if (flows_[static_cast<std::size_t>(id)].live) join(id);
  }
  added_.clear();
  do {
    reach();
    // Ascending flow ids: the sums below do not depend on how the flows were reached. (The
    // links' order does not matter: each is set up on its own and the heap orders them by level
    // and id.)
    sort_marked(group_flows_, flows_, mark_);
    set_room();
    fill();
  } while (join_overtaken());
  settle_links();
  return group_flows_;
}

// Each link's room for the recomputed flows: its capacity less the load of the flows kept.
void MaxMinSolver::set_room() {
  for (int id : group_links_) {
    Link& l = links_[static_cast<std::size_t>(id)];
    l.room = l.capacity;
    l.fastest_kept = 0;
    for (std::size_t i = 0; i < l.flows.size(); ++i) {
      const Flow& f = flows_[static_cast<std::size_t>(l.flows[i])];
      if (f.mark == mark_) continue;
      l.room -= l.weights[i] * f.rate;
      l.fastest_kept = std::max(l.fastest_kept, f.rate);
    }
    l.room = std::max(l.room, 0.0);
  }
}

// What the next solve needs to know of the links this one reached.
void MaxMinSolver::settle_links() {
  for (int id : group_links_) {
    Link& l = links_[static_cast<std::size_t>(id)];
    l.full = !l.flows.empty() && l.left <= kFull * l.capacity;
    l.fastest = 0;
    for (int f : l.flows) l.fastest = std::max(l.fastest, flows_[static_cast<std::size_t>(f)].rate);
  }
}

// Progressive filling over the gathered groups: in rounds for small groups, one bottleneck at a
// time for large ones (a round costs the whole group, a bottleneck the links of the flows it
// holds). Both give the max-min rates, equal up to rounding; the group's size alone decides.
void MaxMinSolver::fill() {
  constexpr std::size_t kLargeGroup = 64;  // links
  if (group_links_.size() < kLargeGroup) return fill_in_rounds();
  fill_by_bottleneck();
}

// Progressive filling in rounds: every round raises every unfrozen flow to the next level at
// which a link fills or a flow meets its limit. Cheapest for small groups.
void MaxMinSolver::fill_in_rounds() {
  for (int l : group_links_) {
    Link& link = links_[static_cast<std::size_t>(l)];
    link.left = link.room;
    link.weight = 0;
    link.unfrozen = 0;
  }
  std::vector<int> unfrozen;
  for (int id : group_flows_) {
    Flow& f = flows_[static_cast<std::size_t>(id)];
    if (f.uses.empty()) continue;
    f.rate = 0;
    f.frozen = false;
    unfrozen.push_back(id);
    for (const Use& u : f.uses) {
      Link& link = links_[static_cast<std::size_t>(u.link)];
      link.weight += u.weight;
      ++link.unfrozen;
    }
  }
  double level = 0;  // the rate every unfrozen flow has reached
  while (!unfrozen.empty()) {
    // The next level at which a link fills or a flow meets its limit.
    double next = kUnlimited;
    for (int l : group_links_) {
      const Link& link = links_[static_cast<std::size_t>(l)];
      if (link.unfrozen > 0) next = std::min(next, level + link.left / link.weight);
    }
    for (int id : unfrozen) next = std::min(next, flows_[static_cast<std::size_t>(id)].limit);
    const double rise = next - level;
    for (int l : group_links_) {
      Link& link = links_[static_cast<std::size_t>(l)];
      if (link.unfrozen > 0) link.left -= rise * link.weight;
    }
    level = next;
    std::size_t kept = 0;
    for (int id : unfrozen) {
      Flow& f = flows_[static_cast<std::size_t>(id)];
      f.rate = level;
      bool frozen = f.limit <= level;
      f.held_by = -1;
      for (const Use& u : f.uses) {
        const Link& link = links_[static_cast<std::size_t>(u.link)];
        if (frozen || link.left > kFull * link.capacity) continue;
        frozen = true;
        f.held_by = u.link;
      }
      if (!frozen) {
        unfrozen[kept++] = id;
        continue;
      }
      for (const Use& u : f.uses) {
        Link& link = links_[static_cast<std::size_t>(u.link)];
        link.weight = --link.unfrozen > 0 ? link.weight - u.weight : 0;
      }
    }
    unfrozen.resize(kept);
  }
}

// One bottleneck at a time: each link's level of saturation (the common rate at which it fills:
// its base level plus what is left over the weight of its unfrozen flows) waits in a heap, and
// so does each limited flow's limit; the lowest is taken, the flows it holds freeze there, and
// only the links those flows cross are brought up to that level and moved to their new
// saturation level. Each step costs the frozen flows' links, not the whole group's.
void MaxMinSolver::fill_by_bottleneck() {
  if (link_levels_.ids() != static_cast<int>(links_.size())) {
    link_levels_.reset(static_cast<int>(links_.size()));
  }
  link_levels_.clear();
  limit_heap_.clear();
  int unfrozen = 0;
  for (int l : group_links_) {
    Link& link = links_[static_cast<std::size_t>(l)];
    link.left = link.room;
    link.weight = 0;
    link.unfrozen = 0;
    link.base = 0;
  }
  for (int id : group_flows_) {
    Flow& f = flows_[static_cast<std::size_t>(id)];
    if (f.uses.empty()) continue;
    f.rate = 0;
    f.frozen = false;
    ++unfrozen;
    if (f.limit != kUnlimited) limit_heap_.push_back({f.limit, id});
    for (const Use& u : f.uses) {
      Link& link = links_[static_cast<std::size_t>(u.link)];
      link.weight += u.weight;
      ++link.unfrozen;
    }
  }
  const auto later = [](const Level& a, const Level& b) {
    return a.at != b.at ? a.at > b.at : a.id > b.id;
  };
  for (int l : group_links_) {
    const Link& link = links_[static_cast<std::size_t>(l)];
    if (link.unfrozen > 0) link_levels_.set(l, link.left / link.weight);
  }
  std::make_heap(limit_heap_.begin(), limit_heap_.end(), later);
  // Freezes `id` at `level` (held by link `by`, -1 for its limit); the links it crosses are brought
  // to that level without it.
  const auto freeze = [&](int id, double level, int by) {
    Flow& f = flows_[static_cast<std::size_t>(id)];
    f.rate = level;
    f.frozen = true;
    f.held_by = by;
    --unfrozen;
    for (const Use& u : f.uses) {
      Link& link = links_[static_cast<std::size_t>(u.link)];
      link.left -= (level - link.base) * link.weight;
      link.base = level;
      link.weight = --link.unfrozen > 0 ? link.weight - u.weight : 0;
      if (link.unfrozen == 0) {
        link_levels_.erase(u.link);
        continue;
      }
      link_levels_.set(u.link, level + std::max(link.left, 0.0) / link.weight);
    }
  };
  std::vector<int> held;
  while (unfrozen > 0) {
    const double by_link = link_levels_.empty() ? kUnlimited : link_levels_.top().at;
    const double by_limit = limit_heap_.empty() ? kUnlimited : limit_heap_.front().at;
    if (by_limit <= by_link) {
      const int id = limit_heap_.front().id;
      std::pop_heap(limit_heap_.begin(), limit_heap_.end(), later);
      limit_heap_.pop_back();
      if (!flows_[static_cast<std::size_t>(id)].frozen) freeze(id, by_limit, -1);
      continue;
    }
    const int l = link_levels_.top().id;
    link_levels_.pop();
    // Its unfrozen flows, in id order (the link's list is in the order flows came).
    held.clear();
    for (int id : links_[static_cast<std::size_t>(l)].flows) {
      const Flow& f = flows_[static_cast<std::size_t>(id)];
      if (f.mark == mark_ && !f.frozen) held.push_back(id);
    }
    std::sort(held.begin(), held.end());
    for (int id : held) freeze(id, by_link, l);
  }
}

double MaxMinSolver::rate(int flow) const {
  check_flow(flow);
  return flows_[static_cast<std::size_t>(flow)].rate;
}

double MaxMinSolver::load(int link) const {
  if (link < 0 || link >= static_cast<int>(links_.size())) {
    throw std::invalid_argument(fmt::format("unknown link {}", link));
  }
  double sum = 0;
  for (int id : links_[static_cast<std::size_t>(link)].flows) {
    const Flow& f = flows_[static_cast<std::size_t>(id)];
    for (const Use& u : f.uses) {
      if (u.link == link) sum += u.weight * f.rate;
    }
  }
  return sum;
}

}  // namespace podsim::flow
