// The flow network's own arithmetic and events: a lone frame's latency through switches as the
// packet network gives it, flows sharing a link ending when max-min says, rates recomputed when
// a flow ends, deliveries at their times, and bad input.
#include <gtest/gtest.h>

#include <systemc>
#include <vector>

#include "core/kernel.h"
#include "hw/flow/flow_network.h"

namespace podsim::flow {
namespace {

using core::TimePs;
constexpr TimePs kUs = 1000000;

FlowLink link(bool to_switch, bool cut_through) {
  FlowLink l;
  l.rate = core::Bandwidth{100e9};
  l.propagation_ps = kUs;
  l.to_switch = to_switch;
  l.cut_through = cut_through;
  l.switch_latency_ps = kUs / 2;
  return l;
}

struct Sink : FlowEndpoint {
  std::vector<std::pair<int, TimePs>> drained, delivered;
  void flow_drained(void* token) override {
    drained.push_back({int(reinterpret_cast<std::intptr_t>(token)), core::now_ps()});
  }
  void flow_delivered(int, void* token, std::uint32_t what) override {
    delivered.push_back({int(reinterpret_cast<std::intptr_t>(token)) + int(what), core::now_ps()});
  }
};

void* token(int i) { return reinterpret_cast<void*>(std::intptr_t{i}); }

// docs/network.md: one frame through one switch at 100 Gb/s with 1 us cables and a 0.5 us
// pipeline takes 5.76 ns + 1 us + 0.5 us + 334.24 ns + 1 us cut-through, and 334.24 ns + 1 us +
// 0.5 us + 334.24 ns + 1 us store-and-forward (a 4178-byte frame).
TEST(FlowNetwork, ALoneFrameTakesThePacketNetworksTime) {
  FlowNetwork net("net");
  const int cut = net.add_link(link(true, true)), store = net.add_link(link(true, false));
  const int last = net.add_link(link(false, false));
  const TimePs frame = 334240;
  EXPECT_EQ(net.serialization_ps(last, 4178), frame);
  EXPECT_EQ(net.tail_arrival({cut, last}, 4178, frame), 5760 + kUs + kUs / 2 + frame + kUs);
  EXPECT_EQ(net.tail_arrival({store, last}, 4178, frame), frame + kUs + kUs / 2 + frame + kUs);
  EXPECT_EQ(net.tail_arrival({last}, 4178, frame), frame + kUs);
}

TEST(FlowNetwork, FlowsShareALinkAndTheSurvivorSpeedsUp) {
  FlowNetwork net("net");
  const int l = net.add_link(link(false, false));
  Sink sink;
  const Route route{l};
  sc_core::sc_start(sc_core::SC_ZERO_TIME);
  // 125 000 bytes at 100 Gb/s take 10 us alone; two together share the link.
  net.start(route, nullptr, 0, 125000, sink, token(1));
  net.start(route, nullptr, 0, 250000, sink, token(2));
  sc_core::sc_start();
  ASSERT_EQ(sink.drained.size(), 2u);
  EXPECT_EQ(sink.drained[0], std::make_pair(1, 20 * kUs));  // half the link for 20 us
  EXPECT_EQ(sink.drained[1], std::make_pair(2, 30 * kUs));  // then the whole of it for 10 us
}

// With a solve interval, rates change only at its multiples: a flow started at 0.5 us runs from
// 3 us, and the share a drained flow leaves is given back at the next multiple after its end.
TEST(FlowNetwork, ASolveIntervalDefersRateChangesToItsMultiples) {
  FlowNetwork net("net");
  net.set_solve_interval(3 * kUs);
  const int l = net.add_link(link(false, false));
  Sink sink;
  const Route route{l};
  sc_core::sc_start(sc_core::sc_time(0.5, sc_core::SC_US));
  net.start(route, nullptr, 0, 125000, sink, token(1));  // 10 us alone
  net.start(route, nullptr, 0, 250000, sink, token(2));
  sc_core::sc_start();
  ASSERT_EQ(sink.drained.size(), 2u);
  // Both from 3 us at half the link: the first ends at 23 us; the second has 125 000 bytes left,
  // sends 6 250 more at half the link until 24 us, then the rest at the whole link in 9.5 us.
  EXPECT_EQ(sink.drained[0], std::make_pair(1, 23 * kUs));
  EXPECT_EQ(sink.drained[1], std::make_pair(2, 33 * kUs + kUs / 2));
}

// A flow started ahead (start_at) joins at its time, sharing the link from then on as one started
// then would; one withdrawn before its time never runs.
TEST(FlowNetwork, AFlowStartedAheadJoinsAtItsTimeUnlessWithdrawn) {
  FlowNetwork net("net");
  const int l = net.add_link(link(false, false));
  Sink sink;
  const Route route{l};
  sc_core::sc_start(sc_core::SC_ZERO_TIME);
  net.start(route, nullptr, 0, 250000, sink, token(1));               // 20 us alone
  net.start_at(10 * kUs, route, nullptr, 0, 125000, sink, token(2));  // 10 us alone
  net.start_at(12 * kUs, route, nullptr, 0, 125000, sink, token(3));
  EXPECT_TRUE(net.cancel_start(token(3)));
  EXPECT_FALSE(net.cancel_start(token(3)));
  sc_core::sc_start();
  // The first alone for 10 us (half its bytes), then both at half the link: each has 125 000
  // bytes left and ends 20 us later.
  ASSERT_EQ(sink.drained.size(), 2u);
  EXPECT_EQ(sink.drained[0], std::make_pair(1, 30 * kUs));
  EXPECT_EQ(sink.drained[1], std::make_pair(2, 30 * kUs));
  EXPECT_EQ(net.flows_started(), 2u);
}

TEST(FlowNetwork, DeliveriesComeAtTheirTimeToTheirEndpoint) {
  FlowNetwork net("net");
  Sink a, b;
  net.attach(4, a, 0);
  net.attach(5, b, 1);
  sc_core::sc_start(sc_core::SC_ZERO_TIME);
  net.deliver(7 * kUs, 5, token(30), 3);
  net.deliver(2 * kUs, 4, token(10), 0);
  EXPECT_THROW(net.deliver(kUs, 6, token(0), 0), std::invalid_argument);
  EXPECT_THROW(net.attach(4, b, 0), std::invalid_argument);
  sc_core::sc_start();
  ASSERT_EQ(a.delivered.size(), 1u);
  EXPECT_EQ(a.delivered[0], std::make_pair(10, 2 * kUs));
  ASSERT_EQ(b.delivered.size(), 1u);
  EXPECT_EQ(b.delivered[0], std::make_pair(33, 7 * kUs));
}

TEST(FlowNetwork, BadLinksAndRoutesAreRefused) {
  FlowNetwork net("net");
  FlowLink none;
  EXPECT_THROW(net.add_link(none), std::invalid_argument);
  EXPECT_THROW(net.route(1, 2, 0), std::invalid_argument);  // no router
  net.set_router([](fabric::EndpointId, fabric::EndpointId, std::uint16_t) { return Route{3}; });
  EXPECT_THROW(net.route(1, 2, 0), std::invalid_argument);  // names a link that is not there
}

}  // namespace
}  // namespace podsim::flow
