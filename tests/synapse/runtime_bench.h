// What the Synapse-level SystemC tests share: a runtime on chip 0 of a functional hls1 box
// (tests/driver/with_device.h), its copy and compute streams made.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "synapse/runtime.h"
#include "tests/driver/with_device.h"

namespace podsim::synapse::test {

inline constexpr HostRegion kHost{4ull << 30, 1ull << 30};

struct Bench {
  Runtime& rt;
  StreamId h2d, d2h, compute;
};

// Runs `body`; every error the chip recorded fails the test.
inline void with_runtime(const std::function<void(Bench&)>& body) {
  driver::test::with_device([&](driver::Device& device, host::HostCpu&, system::SystemModel& m) {
    Runtime rt(device, m.host(0).memory(), kHost);
    Bench b{rt, rt.create_stream(StreamKind::kHostToDevice),
            rt.create_stream(StreamKind::kDeviceToHost), rt.create_stream(StreamKind::kCompute)};
    try {
      body(b);
    } catch (...) {
      for (const auto& e : m.chip(0).errors())
        ADD_FAILURE() << "chip error: " << e.block << ": " << e.detail;
      throw;
    }
    for (const auto& e : m.chip(0).errors())
      ADD_FAILURE() << "chip error: " << e.block << ": " << e.detail;
  });
}

// Every result of `got` within `tolerance` of the largest magnitude of the same-named tensor of
// `want` (which holds them all, and may hold more).
inline void expect_results_match(const std::map<std::string, std::vector<double>>& got,
                                 const std::map<std::string, std::vector<double>>& want,
                                 double tolerance) {
  for (const auto& [name, values] : got) {
    ASSERT_TRUE(want.count(name)) << name;
    const std::vector<double>& w = want.at(name);
    ASSERT_EQ(values.size(), w.size()) << name;
    double scale = 0, worst = 0;
    for (double v : w) scale = std::max(scale, std::abs(v));
    for (std::size_t i = 0; i < w.size(); ++i) worst = std::max(worst, std::abs(values[i] - w[i]));
    EXPECT_GT(scale, 0) << name << " is all zeros: the check would not see a wrong result";
    EXPECT_LE(worst, tolerance * scale) << name << " (largest " << scale << ")";
  }
}

}  // namespace podsim::synapse::test
