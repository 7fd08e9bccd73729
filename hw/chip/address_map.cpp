#include "hw/chip/address_map.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace podsim::chip {

void AddressMap::add(std::string name, std::uint64_t base, std::uint64_t size, int port) {
  if (size == 0) throw std::invalid_argument(fmt::format("address map: region {} is empty", name));
  if (base + size - 1 < base) {
    throw std::invalid_argument(fmt::format(
        "address map: region {} at {:#x} of {} bytes wraps past 2^64", name, base, size));
  }
  const auto at = std::upper_bound(regions_.begin(), regions_.end(), base,
                                   [](std::uint64_t b, const Region& r) { return b < r.base; });
  const auto overlaps = [&](const Region& r) {
    return base <= r.base + (r.size - 1) && r.base <= base + (size - 1);
  };
  for (const Region* r :
       {at == regions_.begin() ? nullptr : &*(at - 1), at == regions_.end() ? nullptr : &*at}) {
    if (r && overlaps(*r)) {
      throw std::invalid_argument(
          fmt::format("address map: region {} [{:#x}, {:#x}) overlaps {} [{:#x}, {:#x})", name,
                      base, base + size, r->name, r->base, r->base + r->size));
    }
  }
  regions_.insert(at, Region{std::move(name), base, size, port});
}

const Region* AddressMap::decode(std::uint64_t address, std::uint64_t length) const {
  const auto after = std::upper_bound(regions_.begin(), regions_.end(), address,
                                      [](std::uint64_t a, const Region& r) { return a < r.base; });
  if (after == regions_.begin()) return nullptr;
  const Region& r = *(after - 1);
  return r.contains(address, length) ? &r : nullptr;
}

const Region* AddressMap::find(const std::string& name) const {
  const auto it = std::find_if(regions_.begin(), regions_.end(),
                               [&](const Region& r) { return r.name == name; });
  return it == regions_.end() ? nullptr : &*it;
}

}  // namespace podsim::chip
