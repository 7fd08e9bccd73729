// Switch arithmetic without the kernel: RED probability, ECMP hash, shared-buffer admission,
// PFC thresholds, and configuration checks.
#include "hw/fabric/switch.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <string>

#include "core/config_binding.h"
#include "core/config_tree.h"

namespace podsim::fabric {
namespace {

using ::testing::HasSubstr;
using Admit = SharedBuffer::Admit;
using Pfc = SharedBuffer::Pfc;

// ----- RED -----

TEST(SwitchRed, NothingAtOrBelowKminEverythingAtOrAboveKmax) {
  EXPECT_EQ(red_mark_probability(0, 1000, 5000, 0.2), 0.0);
  EXPECT_EQ(red_mark_probability(1000, 1000, 5000, 0.2), 0.0);
  EXPECT_EQ(red_mark_probability(5000, 1000, 5000, 0.2), 1.0);
  EXPECT_EQ(red_mark_probability(9000, 1000, 5000, 0.2), 1.0);
}

TEST(SwitchRed, LinearToPmaxInBetween) {
  EXPECT_DOUBLE_EQ(red_mark_probability(2000, 1000, 5000, 0.2), 0.05);
  EXPECT_DOUBLE_EQ(red_mark_probability(3000, 1000, 5000, 0.2), 0.1);
  EXPECT_DOUBLE_EQ(red_mark_probability(4999, 1000, 5000, 0.2), 0.2 * 3999 / 4000);
}

// ----- ECMP -----

TEST(SwitchEcmpHash, SameFlowSameMemberAndSeedChangesTheSplit) {
  const std::uint32_t src = ipv4_of(1), dst = ipv4_of(2);
  int differ = 0;
  for (std::uint16_t port = 0; port < 1000; ++port) {
    const auto a = ecmp_member(flow_hash(src, dst, port, 4791, kIpProtocolUdp, 7), 4);
    EXPECT_EQ(a, ecmp_member(flow_hash(src, dst, port, 4791, kIpProtocolUdp, 7), 4));
    EXPECT_LT(a, 4u);
    differ += a != ecmp_member(flow_hash(src, dst, port, 4791, kIpProtocolUdp, 8), 4);
  }
  // Another seed is an independent split: about 3/4 of the flows move.
  EXPECT_NEAR(differ, 750, 60);
}

TEST(SwitchEcmpHash, EveryTupleFieldMatters) {
  const auto base = flow_hash(1, 2, 3, 4, 17, 5);
  EXPECT_NE(base, flow_hash(9, 2, 3, 4, 17, 5));
  EXPECT_NE(base, flow_hash(1, 9, 3, 4, 17, 5));
  EXPECT_NE(base, flow_hash(1, 2, 9, 4, 17, 5));
  EXPECT_NE(base, flow_hash(1, 2, 3, 9, 17, 5));
  EXPECT_NE(base, flow_hash(1, 2, 3, 4, 6, 5));
  EXPECT_NE(base, flow_hash(1, 2, 3, 4, 17, 6));
  // Swapping source and destination is another flow (the reverse direction).
  EXPECT_NE(base, flow_hash(2, 1, 4, 3, 17, 5));
}

TEST(SwitchEcmpHash, SpreadsFlowsEvenly) {
  for (std::uint32_t members : {2u, 3u, 4u, 8u}) {
    std::array<int, 8> count{};
    const int flows = 40000;
    for (int i = 0; i < flows; ++i) {
      const auto h = flow_hash(ipv4_of(i % 64), ipv4_of(100), static_cast<std::uint16_t>(i),
                               kRoceV2UdpPort, kIpProtocolUdp, 1);
      count[ecmp_member(h, members)]++;
    }
    const double mean = static_cast<double>(flows) / members;
    for (std::uint32_t m = 0; m < members; ++m) {
      EXPECT_NEAR(count[m], mean, 0.05 * mean) << members << " members, member " << m;
    }
  }
}

// ----- Shared buffer -----

// The pool and every port's account, addressed by port number as a switch addresses them.
struct Buffer {
  explicit Buffer(const SharedBuffer::Params& p)
      : pool(p), ports(static_cast<std::size_t>(p.ports)) {}
  SharedBuffer::Verdict admit(int in, int out, int priority, std::uint32_t bytes) {
    return pool.admit(ports[in], ports[out], priority, bytes);
  }
  Pfc release(int in, int out, int priority, std::uint32_t bytes) {
    return pool.release(ports[in], ports[out], priority, bytes);
  }
  std::uint64_t queue_bytes(int out, int priority) const {
    return ports[out].queue_bytes[priority];
  }
  std::uint64_t port_queue_bytes(int out) const { return ports[out].port_bytes; }
  const SharedBuffer::Ingress& ingress(int port) const { return ports[port].ingress; }
  std::uint64_t threshold() const { return pool.threshold(); }
  std::uint64_t used() const { return pool.used(); }
  std::uint64_t high_water() const { return pool.high_water(); }
  std::uint64_t shared_used() const { return pool.shared_used(); }
  std::uint64_t shared_capacity() const { return pool.shared_capacity(); }

  SharedBuffer pool;
  std::vector<SharedBuffer::PortAccount> ports;
};

SharedBuffer::Params lossy_params(std::uint64_t capacity) {
  SharedBuffer::Params p;
  p.capacity = capacity;
  p.alpha = 0.125;
  p.ports = 4;
  p.priorities = 8;
  return p;
}

TEST(SwitchBufferLossy, TailDropsWhenTheQueueExceedsAlphaTimesFree) {
  Buffer b(lossy_params(800000));
  EXPECT_EQ(b.threshold(), 100000u);
  // Frames of 10000 bytes: a queue of q admits the next while q + 10000 <= alpha x free.
  int admitted = 0;
  while (b.admit(0, 1, 0, 10000).admit == Admit::kAccepted) ++admitted;
  // q + 10000 <= (800000 - q) / 8  =>  q <= 8.9 frames of 10000: 9 fit (q = 80000 -> 90000).
  EXPECT_EQ(admitted, 9);
  EXPECT_EQ(b.queue_bytes(1, 0), 90000u);
  EXPECT_EQ(b.used(), 90000u);
  EXPECT_EQ(b.threshold(), (800000u - 90000u) / 8);
  // Another queue still gets its share of what is left, which is now smaller.
  int other = 0;
  while (b.admit(0, 2, 0, 10000).admit == Admit::kAccepted) ++other;
  EXPECT_EQ(other, 8);  // q + 10000 <= (710000 - q) / 8  =>  q <= 70000
  EXPECT_EQ(b.high_water(), 170000u);
}

TEST(SwitchBufferLossy, ReleaseFreesTheQueueAndTheThreshold) {
  Buffer b(lossy_params(800000));
  for (int i = 0; i < 5; ++i) ASSERT_EQ(b.admit(3, 1, 2, 10000).admit, Admit::kAccepted);
  EXPECT_EQ(b.port_queue_bytes(1), 50000u);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(b.release(3, 1, 2, 10000), Pfc::kNone);
  EXPECT_EQ(b.used(), 0u);
  EXPECT_EQ(b.shared_used(), 0u);
  EXPECT_EQ(b.queue_bytes(1, 2), 0u);
  EXPECT_EQ(b.threshold(), 100000u);
  EXPECT_EQ(b.high_water(), 50000u);
}

SharedBuffer::Params lossless_params() {
  SharedBuffer::Params p = lossy_params(1000000);
  p.lossless_priority = 3;
  p.reserve = 4096;
  p.headroom = 30000;
  p.resume_offset = 3072;
  return p;
}

TEST(SwitchBufferLossless, ReserveAndHeadroomAreCarvedOutPerPort) {
  Buffer b(lossless_params());
  EXPECT_EQ(b.shared_capacity(), 1000000u - 4 * (4096 + 30000));
  EXPECT_EQ(b.threshold(), (1000000u - 4 * 34096) / 8);
}

// Fills ingress port 0's lossless class with `frame`-byte frames until it sends XOFF.
void fill_until_pause(Buffer& b, std::uint32_t frame) {
  for (int i = 0; i < 1000; ++i) {
    const auto v = b.admit(0, 1, 3, frame);
    ASSERT_EQ(v.admit, Admit::kAccepted);
    if (v.pfc == Pfc::kPause) return;
    ASSERT_EQ(v.pfc, Pfc::kNone);
  }
  FAIL() << "no XOFF";
}

// Releases frames of ingress port 0 until XON, checking that XON comes at the first release
// after which headroom is empty and shared + resume offset <= threshold; returns the releases.
int drain_until_resume(Buffer& b, std::uint32_t frame, std::uint64_t resume_offset) {
  const auto& g = b.ingress(0);
  for (int released = 1; released < 1000; ++released) {
    const Pfc change = b.release(0, 1, 3, frame);
    const bool rule =
        g.headroom == 0 && (g.shared == 0 || g.shared + resume_offset <= b.threshold());
    EXPECT_EQ(change == Pfc::kResume, rule) << "release " << released;
    if (change == Pfc::kResume) return released;
  }
  ADD_FAILURE() << "no XON";
  return -1;
}

TEST(SwitchBufferLossless, PausesAtTheThresholdUsesHeadroomAndResumesBelowTheOffset) {
  Buffer b(lossless_params());
  const std::uint32_t frame = 4000;
  // The first frame fits in the reserve.
  auto v = b.admit(0, 1, 3, frame);
  EXPECT_EQ(v.admit, Admit::kAccepted);
  EXPECT_EQ(v.pfc, Pfc::kNone);
  EXPECT_EQ(b.ingress(0).reserve, 4000u);
  EXPECT_EQ(b.ingress(0).shared, 0u);
  // Then the shared pool, until XOFF.
  fill_until_pause(b, frame);
  EXPECT_TRUE(b.ingress(0).xoff);
  // The frame that would take the class's shared bytes past alpha x free shared bytes goes to
  // headroom instead, and that sends XOFF.
  const std::uint64_t shared = b.ingress(0).shared;
  EXPECT_LE(shared, b.threshold());
  EXPECT_GT(shared + frame, b.threshold());
  EXPECT_EQ(b.ingress(0).reserve, 4096u);
  EXPECT_EQ(b.ingress(0).headroom, frame);
  EXPECT_EQ(b.used(), 4096u + shared + frame);
  // Frames still in flight go to headroom too (no further PFC change) until it is full.
  int in_headroom = 0;
  while ((v = b.admit(0, 1, 3, frame)).admit == Admit::kAccepted) {
    EXPECT_EQ(v.pfc, Pfc::kNone);
    ++in_headroom;
  }
  EXPECT_EQ(in_headroom, 6);  // 7 x 4000 <= 30000
  EXPECT_EQ(v.admit, Admit::kDroppedHeadroom);
  EXPECT_EQ(b.ingress(0).headroom, 28000u);
  // Draining: headroom empties first; XON once it is empty and shared + 3072 <= threshold.
  // Shared bytes stopped at 95904 under a threshold of 95964, so after the 7 frames of headroom
  // one more frame must leave: 91904 + 3072 <= 96464.
  EXPECT_EQ(drain_until_resume(b, frame, 3072), 8);
  EXPECT_FALSE(b.ingress(0).xoff);
}

TEST(SwitchBufferLossless, ResumeOffsetHoldsXonBack) {
  SharedBuffer::Params p = lossless_params();
  p.resume_offset = 20000;
  Buffer b(p);
  fill_until_pause(b, 4000);
  // One frame sits in headroom and shared is 60 bytes under the threshold; each release from
  // shared widens that gap by 4000 + 500 (the threshold rises by alpha x 4000), so XON needs
  // 60 + 4500 n >= 20000: n = 5 after the headroom frame.
  EXPECT_EQ(drain_until_resume(b, 4000, 20000), 6);
}

TEST(SwitchBufferLossless, NeverDropsWhileHeadroomLastsAndIgnoresEgressQueueLength) {
  SharedBuffer::Params p = lossless_params();
  p.alpha = 0.001;  // a lossy queue would be dropping after a frame or two
  Buffer b(p);
  int accepted = 0;
  SharedBuffer::Verdict v;
  while ((v = b.admit(2, 1, 3, 1000)).admit == Admit::kAccepted) ++accepted;
  EXPECT_EQ(v.admit, Admit::kDroppedHeadroom);
  // reserve 4096 + shared up to ~863 bytes + headroom 30000
  EXPECT_GE(accepted, 34);
  EXPECT_EQ(b.ingress(2).headroom, 30000u);
  // The lossy class on the same egress is tail-dropped at once.
  EXPECT_EQ(b.admit(2, 1, 0, 1000).admit, Admit::kDroppedBuffer);
}

TEST(SwitchBufferLossless, ThresholdIsDynamic) {
  // Many congested ingress classes share the buffer: each one's threshold shrinks as the
  // buffer fills, so XOFF comes earlier for later ones.
  Buffer b(lossless_params());
  std::uint64_t first_pause_bytes = 0, last_pause_bytes = 0;
  for (int port = 0; port < 4; ++port) {
    while (b.admit(port, 1, 3, 1000).pfc != Pfc::kPause) {
    }
    const auto& g = b.ingress(port);
    (port == 0 ? first_pause_bytes : last_pause_bytes) = g.reserve + g.shared;
  }
  EXPECT_GT(first_pause_bytes, last_pause_bytes);
}

// ----- Configuration -----

std::string validation_error(const SwitchConfig& c) {
  try {
    core::validate_config(c);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(valid)";
}

TEST(SwitchConfigTest, DefaultsAreValidAndSourced) {
  SwitchConfig c;
  EXPECT_EQ(validation_error(c), "(valid)");
  EXPECT_EQ(c.buffer.bytes, 32u << 20);
  EXPECT_EQ(c.pfc.headroom.bytes, 37500u);
  EXPECT_EQ(c.ecn.kmin.bytes, 400000u);
  EXPECT_EQ(c.ecn.kmax.bytes, 1600000u);
  EXPECT_DOUBLE_EQ(c.alpha, 0.125);
  for (const auto& row : core::config_schema<SwitchConfig>("switch")) {
    if (row.path == "switch.ports" || row.path == "switch.ecn.enabled" ||
        row.path == "switch.pfc.enabled") {
      continue;
    }
    EXPECT_FALSE(row.source.empty()) << row.path;
  }
}

TEST(SwitchConfigTest, ErrorsNameTheKey) {
  SwitchConfig c;
  c.ports = 0;
  EXPECT_THAT(validation_error(c), HasSubstr("ports"));
  c = SwitchConfig{};
  c.ecn.kmax = core::ByteSize{1000};
  EXPECT_THAT(validation_error(c), HasSubstr("ecn.kmax: must be greater than kmin"));
  c = SwitchConfig{};
  c.ecn.pmax = 1.5;
  EXPECT_THAT(validation_error(c), HasSubstr("ecn.pmax"));
  c = SwitchConfig{};
  c.pfc.lossless_priority = 8;
  EXPECT_THAT(validation_error(c), HasSubstr("pfc.lossless_priority"));
  c = SwitchConfig{};
  c.priorities = 4;
  EXPECT_THAT(validation_error(c), HasSubstr("control_priority: must be below priorities"));
  c = SwitchConfig{};
  c.control_priority = 3;
  EXPECT_THAT(validation_error(c), HasSubstr("control_priority: must differ"));
  c = SwitchConfig{};
  c.buffer = core::ByteSize{1 << 20};  // 32 ports x 41596 B of reserve and headroom exceed it
  EXPECT_THAT(validation_error(c), HasSubstr("buffer: must exceed"));
  c.pfc.enabled = false;
  EXPECT_EQ(validation_error(c), "(valid)");
  c = SwitchConfig{};
  c.alpha = 0;
  EXPECT_THAT(validation_error(c), HasSubstr("alpha"));
  c = SwitchConfig{};
  c.pipeline_latency = core::Duration{-1};
  EXPECT_THAT(validation_error(c), HasSubstr("pipeline_latency"));
  c = SwitchConfig{};
  c.pfc.pause_quanta = 70000;
  EXPECT_THAT(validation_error(c), HasSubstr("pfc.pause_quanta"));
  c = SwitchConfig{};
  c.buffer = core::ByteSize{4ull << 30};
  EXPECT_THAT(validation_error(c), HasSubstr("buffer: must be below 4 GiB"));
}

TEST(SwitchConfigTest, BindsFromYamlWithLocatedErrors) {
  const auto c = core::bind_config<SwitchConfig>(
      core::parse_yaml("ports: 8\nbuffer: 12MiB\nmode: store-and-forward\npipeline_latency: 1us\n"
                       "ecn: {kmin: 5KB, kmax: 200KB, pmax: 0.01}\npfc: {enabled: false}\n",
                       "switch.yaml"));
  EXPECT_EQ(c.ports, 8);
  EXPECT_EQ(c.buffer.bytes, 12u << 20);
  EXPECT_EQ(c.mode, SwitchMode::kStoreAndForward);
  EXPECT_EQ(c.pipeline_latency.ps, 1000000);
  EXPECT_EQ(c.ecn.kmin.bytes, 5000u);
  EXPECT_FALSE(c.pfc.enabled);

  try {
    core::bind_config<SwitchConfig>(
        core::parse_yaml("mode: cut-thru\necn: {kmin: 2MB}\n", "switch.yaml"));
    FAIL() << "bad config accepted";
  } catch (const core::ConfigError& e) {
    // Cross-key rules (kmin < kmax) wait until every key on its own is valid.
    ASSERT_EQ(e.diagnostics().size(), 1u);
    EXPECT_EQ(e.diagnostics()[0].key_path, "mode");
    EXPECT_THAT(e.what(),
                HasSubstr("switch.yaml:1:7: error: key 'mode': 'cut-thru' is not one of"));
  }
  try {
    core::bind_config<SwitchConfig>(core::parse_yaml("ecn: {kmin: 2MB}\n", "switch.yaml"));
    FAIL() << "bad config accepted";
  } catch (const core::ConfigError& e) {
    ASSERT_EQ(e.diagnostics().size(), 1u);
    EXPECT_EQ(e.diagnostics()[0].key_path, "ecn.kmax");
    EXPECT_THAT(e.what(), HasSubstr("switch.yaml:"));
  }
}

}  // namespace
}  // namespace podsim::fabric
