// Global memory as one flat byte array at a base address, for running kernels without the chip:
// the kernel library's functional runs and the executor's tests. Counts what it serves.
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#include "hw/tpc/executor.h"

namespace podsim::tpc {

class FlatMemory : public GlobalAccess {
 public:
  FlatMemory(std::uint64_t base, std::uint64_t bytes) : base_(base), bytes_(bytes, 0) {}

  bool load(int, std::uint64_t address, std::uint8_t* data, std::uint32_t bytes) override {
    if (!inside(address, bytes)) return false;
    std::memcpy(data, bytes_.data() + (address - base_), bytes);
    loads_ += 1;
    return true;
  }
  bool store(int, std::uint64_t address, const std::uint8_t* data, std::uint32_t bytes) override {
    if (!inside(address, bytes)) return false;
    std::memcpy(bytes_.data() + (address - base_), data, bytes);
    stores_ += 1;
    return true;
  }
  void fence() override { fences_ += 1; }

  std::uint8_t* at(std::uint64_t address) { return bytes_.data() + (address - base_); }
  std::uint64_t base() const { return base_; }
  std::uint64_t size() const { return bytes_.size(); }
  std::uint64_t loads() const { return loads_; }
  std::uint64_t stores() const { return stores_; }
  std::uint64_t fences() const { return fences_; }

 private:
  bool inside(std::uint64_t address, std::uint64_t n) const {
    return address >= base_ && n <= bytes_.size() && address - base_ <= bytes_.size() - n;
  }

  std::uint64_t base_;
  std::vector<std::uint8_t> bytes_;
  std::uint64_t loads_ = 0, stores_ = 0, fences_ = 0;
};

}  // namespace podsim::tpc
