// Links: exact serialization and propagation, pull-based sending, loss and corruption.
#include <gtest/gtest.h>

#include <vector>

#include "core/kernel.h"
#include "hw/fabric/link.h"

namespace podsim::fabric {
namespace {

// Sends `count` frames of `payload` bytes as fast as the link takes them; records arrivals.
class TestEndpoint : public LinkEndpoint {
 public:
  int to_send = 0;
  std::uint32_t payload = 4096;
  bool cut = false;
  core::TimePs hold_until = 0;  // nothing may leave before this time (like a PFC pause)
  std::vector<core::TimePs> arrivals;
  std::vector<std::uint32_t> psns;
  std::uint32_t next_psn = 0;

  Packet* next_to_send(int, core::TimePs now, core::TimePs& retry_at) override {
    if (to_send == 0) return nullptr;
    if (now < hold_until) {
      retry_at = hold_until;
      return nullptr;
    }
    --to_send;
    Packet* p = packet_pool().acquire_raw();
    p->opcode = Opcode::kWriteMiddle;
    p->payload_bytes = payload;
    p->psn = next_psn++;
    if (to_send > 0) retry_at = now;
    return p;
  }
  void receive(Packet* p, int) override {
    arrivals.push_back(core::now_ps());
    psns.push_back(p->psn);
    packet_pool().release(p);
  }
  bool cut_through(int) const override { return cut; }
};

LinkConfig hundred_gig(core::Duration delay) {
  LinkConfig c;
  c.rate = core::Bandwidth{100e9};
  c.cable.delay = delay;
  return c;
}

TEST(Link, FramesArriveAfterSerializationAndPropagation) {
  Link link("link", hundred_gig(core::Duration{1000000}));  // 1 us
  TestEndpoint a, b;
  link.attach(0, a, 0);
  link.attach(1, b, 0);
  a.to_send = 3;
  link.wake(0);
  sc_core::sc_start();
  // 4178 wire bytes at 100 Gb/s are 334.24 ns; frames leave back to back.
  ASSERT_EQ(b.arrivals.size(), 3u);
  EXPECT_EQ(b.arrivals[0], 334240u + 1000000u);
  EXPECT_EQ(b.arrivals[1], 2 * 334240u + 1000000u);
  EXPECT_EQ(b.arrivals[2], 3 * 334240u + 1000000u);
  EXPECT_EQ(link.stats(0).frames->value(), 3u);
  EXPECT_EQ(link.stats(0).bytes->value(), 3u * 4178);
  EXPECT_EQ(link.stats(0).busy_ps->value(), 3u * 334240);
  EXPECT_TRUE(a.arrivals.empty());
}

TEST(Link, BothDirectionsAreIndependent) {
  Link link("link", hundred_gig(core::Duration{0}));
  TestEndpoint a, b;
  link.attach(0, a, 0);
  link.attach(1, b, 0);
  a.to_send = 2;
  b.to_send = 2;
  link.wake(0);
  link.wake(1);
  sc_core::sc_start();
  EXPECT_EQ(a.arrivals, (std::vector<core::TimePs>{334240, 668480}));
  EXPECT_EQ(b.arrivals, (std::vector<core::TimePs>{334240, 668480}));
}

TEST(Link, LengthGivesFiveNanosecondsPerMeter) {
  LinkConfig c = hundred_gig(core::Duration{0});
  c.cable.length = core::Length{3};
  EXPECT_EQ(c.cable.propagation().ps, 15000);
  Link link("link", c);
  TestEndpoint a, b;
  link.attach(0, a, 0);
  link.attach(1, b, 0);
  a.to_send = 1;
  a.payload = 0;  // a minimum-size frame: 84 bytes on the wire, 6.72 ns
  link.wake(0);
  sc_core::sc_start();
  ASSERT_EQ(b.arrivals.size(), 1u);
  EXPECT_EQ(b.arrivals[0], 6720u + 15000u);
}

TEST(Link, SenderThatWaitsIsAskedAgainAtItsRetryTime) {
  Link link("link", hundred_gig(core::Duration{0}));
  TestEndpoint a, b;
  link.attach(0, a, 0);
  link.attach(1, b, 0);
  a.to_send = 1;
  a.hold_until = 5000000;
  link.wake(0);
  sc_core::sc_start();
  ASSERT_EQ(b.arrivals.size(), 1u);
  EXPECT_EQ(b.arrivals[0], 5000000u + 334240u);
}

TEST(Link, CutThroughReceiverGetsTheHeader) {
  Link link("link", hundred_gig(core::Duration{1000}));
  TestEndpoint a, b;
  b.cut = true;
  link.attach(0, a, 0);
  link.attach(1, b, 0);
  a.to_send = 1;
  link.wake(0);
  sc_core::sc_start();
  ASSERT_EQ(b.arrivals.size(), 1u);
  EXPECT_EQ(b.arrivals[0], 5760u + 1000u);  // 72 bytes at 100 Gb/s, then propagation
}

TEST(Link, LossAndCorruptionAreSeededAndCounted) {
  LinkConfig c = hundred_gig(core::Duration{0});
  c.cable.loss_rate = 0.1;
  c.cable.corruption_rate = 0.05;
  c.seed = 42;
  Link link("link", c);
  TestEndpoint a, b;
  link.attach(0, a, 0);
  link.attach(1, b, 0);
  a.to_send = 10000;
  a.payload = 64;
  link.wake(0);
  sc_core::sc_start();
  const auto lost = link.stats(0).lost->value();
  const auto corrupted = link.stats(0).corrupted->value();
  EXPECT_EQ(b.arrivals.size() + lost + corrupted, 10000u);
  EXPECT_NEAR(static_cast<double>(lost), 1000, 150);
  EXPECT_NEAR(static_cast<double>(corrupted), 450, 100);
  // Survivors arrive in order.
  for (std::size_t i = 1; i < b.psns.size(); ++i) EXPECT_LT(b.psns[i - 1], b.psns[i]);
  EXPECT_EQ(packet_pool().live(), 0u);
}

// Regression: a run stopped while frames were on the wire left them out of the pool, and the
// pool's check at exit aborted the process.
TEST(Link, FramesInFlightWhenARunStopsGoBackToThePool) {
  const auto live_before = packet_pool().live();
  {
    Link link("link", hundred_gig(core::Duration{1000000}));
    TestEndpoint a, b;
    link.attach(0, a, 0);
    link.attach(1, b, 0);
    a.to_send = 5;
    link.wake(0);
    sc_core::sc_start(sc_core::sc_time(500, sc_core::SC_NS));  // all five still propagating
    EXPECT_TRUE(b.arrivals.empty());
    EXPECT_EQ(packet_pool().live(), live_before + 2);  // two left in 500 ns; more were not sent
  }
  EXPECT_EQ(packet_pool().live(), live_before);
}

TEST(Link, AttachingASideTwiceIsAnError) {
  Link link("link", hundred_gig(core::Duration{0}));
  TestEndpoint a, b;
  link.attach(0, a, 0);
  EXPECT_THROW(link.attach(0, b, 0), std::logic_error);
}

TEST(LinkConfigTest, RejectsBadValues) {
  LinkConfig c;
  c.rate = core::Bandwidth{0};
  EXPECT_THROW(Link("l1", c), std::invalid_argument);
  c.rate = core::Bandwidth{1e9};
  c.cable.loss_rate = 1.5;
  EXPECT_THROW(Link("l2", c), std::invalid_argument);
}

}  // namespace
}  // namespace podsim::fabric
