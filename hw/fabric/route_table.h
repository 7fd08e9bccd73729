// A switch's forwarding table: an array indexed by destination endpoint, each entry naming a
// group of equal-cost egress ports. Captures ECMP groups shared between destinations (a fat
// tree's "any uplink" is one group for thousands of destinations), so a table for 8192
// endpoints costs 4 bytes per endpoint. Ignores longest-prefix matching: endpoint addresses are
// dense, so the destination IP minus the base is the index.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "hw/fabric/packet.h"

namespace podsim::fabric {

class RouteTable {
 public:
  struct Group {
    const std::uint16_t* ports = nullptr;
    std::uint32_t count = 0;
  };

  RouteTable() = default;
  explicit RouteTable(std::size_t endpoints) : group_of_(endpoints, kNone) {}

  std::size_t endpoints() const { return group_of_.size(); }
  // Candidate egress ports for `dst`; identical sets share one group. Ports must be non-empty.
  void set(EndpointId dst, std::vector<std::uint16_t> ports) {
    set_group(dst, add_group(std::move(ports)));
  }
  // The same in two steps, for many destinations that share one set of ports.
  std::uint32_t add_group(std::vector<std::uint16_t> ports);
  void set_group(EndpointId dst, std::uint32_t group) {
    if (dst >= group_of_.size()) group_of_.resize(dst + 1, kNone);
    group_of_[dst] = group;
  }
  // Count 0 when `dst` is unknown or unreachable.
  Group lookup(EndpointId dst) const {
    if (dst >= group_of_.size() || group_of_[dst] == kNone) return {};
    const auto g = group_of_[dst];
    return {ports_.data() + group_start_[g], group_start_[g + 1] - group_start_[g]};
  }
  // A hint that lookup(dst) comes soon.
  void prefetch(EndpointId dst) const {
    if (dst < group_of_.size()) __builtin_prefetch(&group_of_[dst]);
  }
  // Frees the build-time index once the table is complete.
  void seal() { index_.clear(); }

 private:
  static constexpr std::uint32_t kNone = 0xffffffffu;
  std::vector<std::uint32_t> group_of_;
  std::vector<std::uint32_t> group_start_{0};
  std::vector<std::uint16_t> ports_;
  std::map<std::vector<std::uint16_t>, std::uint32_t> index_;
};

inline std::uint32_t RouteTable::add_group(std::vector<std::uint16_t> ports) {
  auto it = index_.find(ports);
  if (it == index_.end()) {
    const auto group = static_cast<std::uint32_t>(group_start_.size() - 1);
    ports_.insert(ports_.end(), ports.begin(), ports.end());
    group_start_.push_back(static_cast<std::uint32_t>(ports_.size()));
    it = index_.emplace(std::move(ports), group).first;
  }
  return it->second;
}

}  // namespace podsim::fabric
