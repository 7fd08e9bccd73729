#include "sims/parallel/partition.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <stdexcept>

namespace podsim::parallel {
namespace {

using Kind = system::TopologyNode::Kind;

// Switches tier by tier, leaves first: each to the part most of its cabled ports lead to (NICs,
// or switches already placed), a tie to the part holding the fewest switches so far.
void place_switches(const system::Topology& t, Partition& p) {
  std::vector<int> switches_in(static_cast<std::size_t>(p.parts), 0);
  int top_tier = 0;
  for (const auto& node : t.nodes) top_tier = std::max(top_tier, node.tier);
  for (int tier = 0; tier <= top_tier; ++tier) {
    for (std::size_t n = 0; n < t.nodes.size(); ++n) {
      if (t.nodes[n].kind != Kind::kSwitch || t.nodes[n].tier != tier) continue;
      std::vector<int> ports_to(static_cast<std::size_t>(p.parts), 0);
      for (int link : t.link_of_port[n]) {
        if (link < 0) continue;
        const auto& l = t.links[static_cast<std::size_t>(link)];
        const int other = l.a.node == static_cast<int>(n) ? l.b.node : l.a.node;
        const int part = p.part_of_node[static_cast<std::size_t>(other)];
        if (part >= 0) ++ports_to[static_cast<std::size_t>(part)];
      }
      int best = 0;
      for (int q = 1; q < p.parts; ++q) {
        const auto uq = static_cast<std::size_t>(q), ub = static_cast<std::size_t>(best);
        if (ports_to[uq] > ports_to[ub] ||
            (ports_to[uq] == ports_to[ub] && switches_in[uq] < switches_in[ub])) {
          best = q;
        }
      }
      p.part_of_node[n] = best;
      ++switches_in[static_cast<std::size_t>(best)];
    }
  }
}

void cut(const system::Topology& t, Partition& p) {
  p.lookahead_ps = std::numeric_limits<core::TimePs>::max();
  for (std::size_t i = 0; i < t.links.size(); ++i) {
    const auto& l = t.links[i];
    if (p.part_of_node[static_cast<std::size_t>(l.a.node)] ==
        p.part_of_node[static_cast<std::size_t>(l.b.node)]) {
      continue;
    }
    const auto delay = static_cast<core::TimePs>(l.config.cable.propagation().ps);
    if (delay < 2) {
      throw std::invalid_argument(
          fmt::format("cannot split the system among processes: the cable from {} to {} has no "
                      "propagation delay (2 ps at least), and the processes' windows need one",
                      t.nodes[static_cast<std::size_t>(l.a.node)].name,
                      t.nodes[static_cast<std::size_t>(l.b.node)].name));
    }
    p.cut_links.push_back(static_cast<int>(i));
    p.lookahead_ps = std::min(p.lookahead_ps, delay);
  }
}

}  // namespace

Partition partition_by_box(const system::Topology& t, int parts) {
  const int per_box = std::max(t.chips_per_box_, 1);
  Partition p;
  p.parts = parts;
  p.boxes = t.chips / per_box;
  if (parts < 1 || parts > p.boxes) {
    throw std::invalid_argument(
        fmt::format("{} processes: the system has {} box{}, and each process needs at least one",
                    parts, p.boxes, p.boxes == 1 ? "" : "es"));
  }
  for (int q = 0; q < parts; ++q) {
    p.first_box.push_back(static_cast<int>(static_cast<long long>(q) * p.boxes / parts));
  }
  p.part_of_chip.resize(static_cast<std::size_t>(t.chips));
  for (int c = 0; c < t.chips; ++c) {
    const int box = c / per_box;
    const auto it = std::upper_bound(p.first_box.begin(), p.first_box.end(), box);
    p.part_of_chip[static_cast<std::size_t>(c)] = static_cast<int>(it - p.first_box.begin()) - 1;
  }
  p.part_of_node.assign(t.nodes.size(), -1);
  for (std::size_t n = 0; n < t.nodes.size(); ++n) {
    if (t.nodes[n].kind == Kind::kNic) {
      p.part_of_node[n] = p.part_of_chip[static_cast<std::size_t>(t.nodes[n].chip)];
    }
  }
  place_switches(t, p);
  cut(t, p);
  return p;
}

std::string Partition::describe() const {
  std::string boxes_text;
  for (int q = 0; q < parts; ++q) {
    const int first = first_box[static_cast<std::size_t>(q)];
    const int last = (q + 1 < parts ? first_box[static_cast<std::size_t>(q + 1)] : boxes) - 1;
    if (q > 0) boxes_text += " | ";
    boxes_text += first == last ? fmt::format("{}", first) : fmt::format("{}-{}", first, last);
  }
  std::string text =
      fmt::format("{} process{}, by box: boxes {}; {} cable{} cut", parts, parts == 1 ? "" : "es",
                  boxes_text, cut_links.size(), cut_links.size() == 1 ? "" : "s");
  if (!cut_links.empty()) {
    text += fmt::format(", lookahead {}",
                        core::to_string(core::Duration{static_cast<std::int64_t>(lookahead_ps)}));
  }
  return text;
}

}  // namespace podsim::parallel
