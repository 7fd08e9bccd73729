// Where each block of a chip sits in the chip's physical address space, and the decode every
// access goes through.
// Captures: named regions (base, size, the router port of the block behind them), checks that
// they neither overlap nor wrap, and the decode of a whole access: a bulk transaction goes to one
// block, so one that straddles two regions or leaves the map is an error. Ignores: address
// translation (the MMU belongs to the driver issue) and aliases.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace podsim::chip {

struct Region {
  std::string name;
  std::uint64_t base = 0, size = 0;
  int port = 0;  // the router's initiator port the block is bound to
  bool contains(std::uint64_t address, std::uint64_t length) const {
    return address >= base && length <= size && address - base <= size - length;
  }
};

class AddressMap {
 public:
  // Throws std::invalid_argument naming the region on a zero size, a wrap past 2^64 or an
  // overlap with a region added before.
  void add(std::string name, std::uint64_t base, std::uint64_t size, int port);
  // The region holding all of [address, address + length), or nullptr.
  const Region* decode(std::uint64_t address, std::uint64_t length) const;
  // The region called `name`, or nullptr.
  const Region* find(const std::string& name) const;
  const std::vector<Region>& regions() const { return regions_; }  // by base

 private:
  std::vector<Region> regions_;
};

}  // namespace podsim::chip
