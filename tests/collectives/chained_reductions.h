// A one-rank program both launchers' tests run: two 1 MiB int32 reductions, the second reading
// what the first wrote (dst = (a + b) + c), and the data to check it with.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <vector>

#include "collectives/program.h"
#include "hw/chip/chip.h"

namespace podsim::collectives::test {

struct ChainedReductions {
  static constexpr std::uint64_t kCount = 256 * 1024;  // 1 MiB of int32
  static constexpr std::uint64_t a = 0, b = 4 << 20, c = 8 << 20, mid = 12 << 20, dst = 16 << 20;

  static Command reduce(std::uint64_t to, std::uint64_t from_a, std::uint64_t from_b) {
    Command r;
    r.kind = Command::Kind::kReduce;
    r.type = core::DataType::kInt32;
    r.dst = to;
    r.src = from_a;
    r.b = from_b;
    r.bytes = 4 * kCount;
    return r;
  }

  ChainedReductions() : x(kCount), y(kCount), z(kCount) {
    std::iota(x.begin(), x.end(), 1);
    std::iota(y.begin(), y.end(), 1000);
    std::iota(z.begin(), z.end(), -77);
    program.signals = 2;
    Command first = reduce(mid, a, b);
    first.done = 0;
    Command second = reduce(dst, mid, c);
    second.wait = 0;
    second.wait_count = 1;
    second.done = 1;
    program.streams = {{first, second}};
  }

  // Writes the three inputs into `chip`'s memory.
  void load(chip::Chip& chip) {
    chip.debug_write(a, bytes(x), 4 * kCount);
    chip.debug_write(b, bytes(y), 4 * kCount);
    chip.debug_write(c, bytes(z), 4 * kCount);
  }
  // Checks every element of the result in `chip`'s memory.
  void check(chip::Chip& chip) {
    std::vector<std::int32_t> out(kCount);
    chip.debug_read(dst, bytes(out), 4 * kCount);
    for (std::uint64_t i = 0; i < kCount; ++i) ASSERT_EQ(out[i], x[i] + y[i] + z[i]) << i;
  }

  static std::uint8_t* bytes(std::vector<std::int32_t>& v) {
    return reinterpret_cast<std::uint8_t*>(v.data());
  }

  Program program;
  std::vector<std::int32_t> x, y, z;
};

}  // namespace podsim::collectives::test
