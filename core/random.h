// A small, fast, seeded random generator for per-packet decisions (loss injection, ECN marking,
// ECMP seeds). std::mt19937_64 carries 2.5 KB of state, too much to give every link and switch
// port of a multi-rack system its own stream; this one carries 32 bytes (xoshiro256**, seeded
// through splitmix64) and gives the same sequence on every platform.
#pragma once

#include <cstdint>

namespace podsim::core {

class Random {
 public:
  explicit Random(std::uint64_t seed = 1) { reseed(seed); }

  void reseed(std::uint64_t seed) {
    for (auto& word : state_) word = splitmix(seed);
  }
  std::uint64_t next() {
    const std::uint64_t result = rotl(state_[1] * 5, 7) * 9;
    const std::uint64_t t = state_[1] << 17;
    state_[2] ^= state_[0];
    state_[3] ^= state_[1];
    state_[1] ^= state_[2];
    state_[0] ^= state_[3];
    state_[2] ^= t;
    state_[3] = rotl(state_[3], 45);
    return result;
  }
  // Uniform in [0, 1).
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  bool chance(double probability) { return probability > 0 && uniform() < probability; }

  // A well-mixed 64-bit value of x: stream seeds for sub-components, ECMP hashes.
  static std::uint64_t mix(std::uint64_t x) { return splitmix(x); }
  // (splitmix advances its argument; mix works on a copy.)

 private:
  static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  static std::uint64_t splitmix(std::uint64_t& x) {
    std::uint64_t z = (x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  std::uint64_t state_[4];
};

}  // namespace podsim::core
