// The switch under the kernel: incast with and without PFC, forwarding and ECMP, exact latency
// in both forwarding modes, ECN marking, strict priority, pause from downstream, bad input.
// Each test builds stars of test NICs around switches and counts what arrives.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "core/kernel.h"
#include "hw/fabric/switch.h"

namespace podsim::fabric {
namespace {

using ::testing::HasSubstr;

constexpr core::TimePs kUs = 1000000;
constexpr core::TimePs kDataWire = 334240;  // a 4178-byte frame at 100 Gb/s
constexpr core::TimePs kHeaderWire = 5760;  // the 72 bytes a cut-through receiver waits for

struct Arrival {
  core::TimePs time;
  EndpointId source;
  std::uint32_t psn;
  std::uint8_t priority;
  Ecn ecn;
  std::uint16_t src_port;
};

// A RoCE-like port: sends `to_send` frames to `dst` as fast as its link takes them (honouring
// PFC from the switch), optionally sends planned PFC frames, and records what arrives.
class TestNic : public LinkEndpoint {
 public:
  explicit TestNic(EndpointId id) : id_(id) {}

  EndpointId dst = kNoEndpoint;
  int to_send = 0;
  std::uint32_t payload = 4096;
  std::uint8_t priority = 3;  // the lossless class
  Ecn ecn = Ecn::kEct0;
  bool control = false;             // ACK-sized frames instead of data
  bool distinct_src_ports = false;  // one flow per frame, for ECMP
  core::TimePs start_ps = 0;
  struct PfcPlan {
    core::TimePs at;
    std::uint8_t priority;
    std::uint16_t quanta;
  };
  std::vector<PfcPlan> pfc_plan;  // in time order

  int sent = 0;
  int pauses_received = 0, resumes_received = 0;
  std::vector<Arrival> arrivals;

  void connect(Link& link, int side) {
    link_ = &link;
    side_ = side;
    link.attach(side, *this, 0);
  }
  void start() { link_->wake(side_); }

  Packet* next_to_send(int, core::TimePs now, core::TimePs& retry_at) override {
    if (next_pfc_ < pfc_plan.size()) {
      if (pfc_plan[next_pfc_].at <= now) {
        retry_at = now;
        return pfc_frame(pfc_plan[next_pfc_++]);
      }
      retry_at = pfc_plan[next_pfc_].at;
    }
    if (sent == to_send) return nullptr;
    const core::TimePs ready = std::max(start_ps, paused_until_[priority]);
    if (now < ready) {
      retry_at = std::min(retry_at, ready);
      return nullptr;
    }
    retry_at = now;
    return data_frame(now);
  }

  void receive(Packet* p, int) override {
    if (p->kind == FrameKind::kPfcPause) {
      on_pfc(*p);
    } else {
      arrivals.push_back({core::now_ps(), p->source(), p->psn, p->priority, p->ecn, p->src_port});
    }
    packet_pool().release(p);
  }

 private:
  Packet* data_frame(core::TimePs now) {
    Packet* p = packet_pool().acquire_raw();
    p->src_mac = mac_of(id_);
    p->dst_mac = mac_of(dst);
    p->priority = priority;
    p->src_ip = ipv4_of(id_);
    p->dst_ip = ipv4_of(dst);
    p->ecn = ecn;
    p->src_port = static_cast<std::uint16_t>(distinct_src_ports ? 1000 + sent : 49152);
    p->opcode = control ? Opcode::kAcknowledge : Opcode::kWriteMiddle;
    p->has_aeth = control;
    p->payload_bytes = control ? 0 : payload;
    p->psn = static_cast<std::uint32_t>(sent++);
    p->created_ps = now;
    return p;
  }

  Packet* pfc_frame(const PfcPlan& plan) {
    Packet* p = packet_pool().acquire_raw();
    p->kind = FrameKind::kPfcPause;
    p->pfc_enable = static_cast<std::uint8_t>(1u << plan.priority);
    p->pfc_quanta[plan.priority] = plan.quanta;
    return p;
  }

  void on_pfc(const Packet& p) {
    bool resumed = false;
    for (int prio = 0; prio < 8; ++prio) {
      if (!(p.pfc_enable & (1u << prio))) continue;
      if (p.pfc_quanta[prio] == 0) {
        paused_until_[prio] = 0;
        resumed = true;
      } else {
        paused_until_[prio] =
            core::now_ps() +
            static_cast<core::TimePs>(link_->config().rate.time_for(64ull * p.pfc_quanta[prio]).ps);
      }
    }
    (resumed ? resumes_received : pauses_received)++;
    if (resumed) start();
  }

  EndpointId id_;
  Link* link_ = nullptr;
  int side_ = 0;
  std::size_t next_pfc_ = 0;
  core::TimePs paused_until_[8] = {};
};

LinkConfig link_config(double gbps, core::TimePs delay_ps) {
  LinkConfig c;
  c.rate = core::Bandwidth{gbps * 1e9};
  c.cable.delay = core::Duration{static_cast<std::int64_t>(delay_ps)};
  return c;
}

// A switch with a test NIC on every port; NIC i is endpoint i, reached through port i.
struct Star {
  Switch sw;
  std::vector<std::unique_ptr<Link>> links;
  std::vector<std::unique_ptr<TestNic>> nics;

  Star(const std::string& name, const SwitchConfig& config, const std::vector<LinkConfig>& link)
      : sw(name.c_str(), config) {
    for (int i = 0; i < config.ports; ++i) {
      const std::string link_name = name + "_link" + std::to_string(i);
      links.push_back(std::make_unique<Link>(link_name.c_str(), link[i]));
      nics.push_back(std::make_unique<TestNic>(static_cast<EndpointId>(i)));
      sw.attach(i, *links[i], 0);
      nics[i]->connect(*links[i], 1);
      sw.routes().set(static_cast<EndpointId>(i), {static_cast<std::uint16_t>(i)});
    }
  }
  Star(const std::string& name, const SwitchConfig& config, const LinkConfig& link)
      : Star(name, config, std::vector<LinkConfig>(config.ports, link)) {}

  TestNic& nic(int i) { return *nics[i]; }
  void start() {
    for (auto& n : nics) n->start();
  }
  std::uint64_t total(core::Counter* Switch::PortStats::*stat) const {
    std::uint64_t sum = 0;
    for (int i = 0; i < sw.ports(); ++i) sum += (sw.port_stats(i).*stat)->value();
    return sum;
  }
};

SwitchConfig ports(int n) {
  SwitchConfig c;
  c.ports = n;
  return c;
}

// Runs until the fabric is idle (bounded, so a model that never settles fails instead of hangs).
void run_to_idle() {
  sc_core::sc_start(sc_core::sc_time(100, sc_core::SC_MS));
  EXPECT_FALSE(sc_core::sc_pending_activity()) << "the fabric never went idle";
  EXPECT_EQ(packet_pool().live(), 0u) << "packets leaked or stuck";
}

// Payload bits per second between the first and the last arrival.
double goodput_bps(const std::vector<Arrival>& arrivals, std::uint32_t payload) {
  const double span_s = static_cast<double>(arrivals.back().time - arrivals.front().time) * 1e-12;
  return static_cast<double>(arrivals.size() - 1) * payload * 8 / span_s;
}

// Frames of each source arrive in the order they were sent.
void expect_in_order(const std::vector<Arrival>& arrivals) {
  std::vector<long> last(64, -1);
  for (const Arrival& a : arrivals) {
    ASSERT_LT(a.source, last.size());
    EXPECT_GT(static_cast<long>(a.psn), last[a.source]) << "source " << a.source;
    last[a.source] = a.psn;
  }
}

// Seven senders at line rate into one receiver port; `frames` each.
void seven_to_one(Star& star, int frames) {
  for (int i = 0; i < 7; ++i) {
    star.nic(i).dst = 7;
    star.nic(i).to_send = frames;
  }
  star.start();
  run_to_idle();
}

// ----- (1), (2) incast -----

TEST(SwitchIncast, PfcMakesSevenToOneLosslessAtLineRate) {
  Star star("sw", ports(8), link_config(100, kUs));  // default 32 MiB buffer, PFC on
  const int frames = 1200;  // enough that each ingress class crosses alpha x free buffer
  seven_to_one(star, frames);

  const auto& rx = star.nic(7).arrivals;
  ASSERT_EQ(rx.size(), 7u * frames);
  EXPECT_EQ(star.total(&Switch::PortStats::drops_buffer), 0u);
  EXPECT_EQ(star.total(&Switch::PortStats::drops_headroom), 0u);
  EXPECT_EQ(star.total(&Switch::PortStats::drops_no_route), 0u);
  expect_in_order(rx);

  const auto pauses = star.total(&Switch::PortStats::pfc_pause_sent);
  const auto resumes = star.total(&Switch::PortStats::pfc_resume_sent);
  EXPECT_GT(pauses, 0u);
  EXPECT_GT(resumes, 0u);
  int nic_pauses = 0;
  for (int i = 0; i < 7; ++i) nic_pauses += star.nic(i).pauses_received;
  EXPECT_EQ(static_cast<std::uint64_t>(nic_pauses), pauses);

  const double goodput = goodput_bps(rx, 4096);
  EXPECT_GE(goodput, 0.97 * 100e9);
  EXPECT_LE(goodput, 100e9 * 4096 / 4178 * 1.000001);
  EXPECT_LE(star.sw.buffer_high_water().value(), star.sw.config().buffer.bytes);
  EXPECT_EQ(star.sw.port_stats(7).tx_frames->value(), 7u * frames);
  std::printf("incast 7:1 PFC: goodput %.3f Gb/s, %llu XOFF, %llu XON, buffer high water %llu B\n",
              goodput / 1e9, static_cast<unsigned long long>(pauses),
              static_cast<unsigned long long>(resumes),
              static_cast<unsigned long long>(star.sw.buffer_high_water().value()));
}

TEST(SwitchIncast, PfcKeepsASmallBufferLossless) {
  SwitchConfig c = ports(8);
  c.buffer = core::ByteSize{512 * 1024};  // 8 x 41.6 KB carved for reserve and headroom
  Star star("sw", c, link_config(100, kUs));
  seven_to_one(star, 300);
  EXPECT_EQ(star.nic(7).arrivals.size(), 7u * 300);
  EXPECT_EQ(star.total(&Switch::PortStats::drops_headroom), 0u);
  EXPECT_EQ(star.total(&Switch::PortStats::drops_buffer), 0u);
  EXPECT_GT(star.total(&Switch::PortStats::pfc_pause_sent), 10u);
  EXPECT_GE(goodput_bps(star.nic(7).arrivals, 4096), 0.97 * 100e9);
}

TEST(SwitchIncast, WithoutPfcASmallBufferDrops) {
  SwitchConfig c = ports(8);
  c.pfc.enabled = false;
  c.buffer = core::ByteSize{256 * 1024};
  Star star("sw", c, link_config(100, kUs));
  seven_to_one(star, 300);
  const auto drops = star.sw.port_stats(7).drops_buffer->value();
  EXPECT_GT(drops, 100u);
  EXPECT_EQ(star.nic(7).arrivals.size() + drops, 7u * 300);
  EXPECT_EQ(star.total(&Switch::PortStats::pfc_pause_sent), 0u);
  EXPECT_EQ(star.total(&Switch::PortStats::drops_headroom), 0u);
  for (int i = 0; i < 7; ++i) EXPECT_EQ(star.nic(i).pauses_received, 0);
  // Tail drop keeps the queue at the dynamic threshold: alpha x free of 256 KiB.
  EXPECT_LE(star.sw.port_stats(7).max_queue_bytes->value(), 256u * 1024 / 9 + 4200);
  std::printf("incast 7:1 no PFC, 256 KiB: %llu of %d frames dropped\n",
              static_cast<unsigned long long>(drops), 7 * 300);
}

// ----- (3) forwarding and ECMP -----

TEST(SwitchForwarding, FollowsTheRouteTable) {
  Star star("sw", ports(4), link_config(100, 0));
  star.nic(0).dst = 2;
  star.nic(0).to_send = 10;
  star.nic(1).dst = 3;
  star.nic(1).to_send = 20;
  star.nic(3).dst = 99;  // no route
  star.nic(3).to_send = 5;
  star.start();
  run_to_idle();
  ASSERT_EQ(star.nic(2).arrivals.size(), 10u);
  ASSERT_EQ(star.nic(3).arrivals.size(), 20u);
  for (const auto& a : star.nic(2).arrivals) EXPECT_EQ(a.source, 0u);
  for (const auto& a : star.nic(3).arrivals) EXPECT_EQ(a.source, 1u);
  EXPECT_TRUE(star.nic(0).arrivals.empty());
  EXPECT_TRUE(star.nic(1).arrivals.empty());
  EXPECT_EQ(star.sw.port_stats(3).drops_no_route->value(), 5u);
  EXPECT_EQ(star.sw.port_stats(2).tx_frames->value(), 10u);
  EXPECT_EQ(star.sw.port_stats(0).rx_frames->value(), 10u);
  EXPECT_EQ(star.sw.port_stats(0).rx_bytes->value(), 10u * (4178 - 20));
}

// Port 0 sends `flows` one-frame flows to endpoint 100, which ports 1-4 all reach.
std::unique_ptr<Star> ecmp_star(const std::string& name, std::uint64_t seed, int flows) {
  SwitchConfig c = ports(5);
  c.ecmp_seed = seed;
  auto star = std::make_unique<Star>(name, c, link_config(100, 0));
  star->sw.routes().set(100, {1, 2, 3, 4});
  star->nic(0).dst = 100;
  star->nic(0).to_send = flows;
  star->nic(0).payload = 256;
  star->nic(0).distinct_src_ports = true;
  return star;
}

// Which egress member each flow (by source port) took.
std::vector<int> member_of_flow(Star& star, int flows) {
  std::vector<int> member(flows, -1);
  for (int port = 1; port <= 4; ++port) {
    for (const Arrival& a : star.nic(port).arrivals) member[a.src_port - 1000] = port;
  }
  return member;
}

TEST(SwitchForwarding, EcmpSpreadsFlowsAndIsDeterministicPerSeed) {
  const int flows = 4000;
  auto a = ecmp_star("a", 7, flows), b = ecmp_star("b", 7, flows), c = ecmp_star("c", 8, flows);
  for (Star* s : {a.get(), b.get(), c.get()}) s->start();
  run_to_idle();

  const double mean = flows / 4.0;
  for (int port = 1; port <= 4; ++port) {
    const auto n = static_cast<double>(a->nic(port).arrivals.size());
    EXPECT_GE(n, 0.75 * mean) << "port " << port;
    EXPECT_LE(n, 1.25 * mean) << "port " << port;
    EXPECT_EQ(a->sw.port_stats(port).tx_frames->value(), a->nic(port).arrivals.size());
  }
  const auto ma = member_of_flow(*a, flows), mb = member_of_flow(*b, flows),
             mc = member_of_flow(*c, flows);
  EXPECT_EQ(std::count(ma.begin(), ma.end(), -1), 0);
  EXPECT_EQ(ma, mb);  // same seed, same split
  int moved = 0;
  for (int f = 0; f < flows; ++f) moved += ma[f] != mc[f];
  EXPECT_GT(moved, flows / 2);  // another seed splits independently (3/4 move on average)
  std::printf("ECMP 4000 flows over 4 ports: %zu %zu %zu %zu; seed 8 moves %d\n",
              a->nic(1).arrivals.size(), a->nic(2).arrivals.size(), a->nic(3).arrivals.size(),
              a->nic(4).arrivals.size(), moved);
}

// ----- (4) latency -----

// One frame from NIC 0 to NIC 1 through `star`.
void one_frame(Star& star) {
  star.nic(0).dst = 1;
  star.nic(0).to_send = 1;
  star.nic(0).start();
}

TEST(SwitchLatency, CutThroughAndStoreAndForwardAreExact) {
  const core::TimePs d = kUs;
  SwitchConfig cut = ports(2);
  SwitchConfig saf = ports(2);
  saf.mode = SwitchMode::kStoreAndForward;
  SwitchConfig fast = ports(2);  // no pipeline latency, egress four times faster than ingress
  fast.pipeline_latency = core::Duration{0};
  Star a("cut", cut, link_config(100, d));
  Star b("saf", saf, link_config(100, d));
  Star c("fast", fast, {link_config(100, d), link_config(400, d)});
  for (Star* s : {&a, &b, &c}) one_frame(*s);
  run_to_idle();

  const core::TimePs latency = 500000;  // the default pipeline latency
  ASSERT_EQ(a.nic(1).arrivals.size(), 1u);
  ASSERT_EQ(b.nic(1).arrivals.size(), 1u);
  ASSERT_EQ(c.nic(1).arrivals.size(), 1u);
  // Cut-through: the header is in after 72 bytes; egress serializes the whole frame.
  EXPECT_EQ(a.nic(1).arrivals[0].time, kHeaderWire + d + latency + kDataWire + d);
  // Store-and-forward: the whole frame is in before the pipeline starts.
  EXPECT_EQ(b.nic(1).arrivals[0].time, kDataWire + d + latency + kDataWire + d);
  EXPECT_EQ(b.nic(1).arrivals[0].time - a.nic(1).arrivals[0].time, kDataWire - kHeaderWire);
  // A faster egress cannot finish before the tail has arrived at the switch.
  EXPECT_EQ(c.nic(1).arrivals[0].time, kDataWire + d + d);
}

// ----- (5) ECN -----

TEST(SwitchEcn, MarksOnlyWhenTheQueueExceedsKmin) {
  SwitchConfig c = ports(4);
  c.pfc.enabled = false;
  c.ecn.kmin = core::ByteSize{40000};  // about 10 frames
  c.ecn.kmax = core::ByteSize{80000};
  c.ecn.pmax = 0.5;
  Star star("sw", c, link_config(100, kUs));
  // Alone, endpoint 0 never builds a queue; then 1 (ECT) and 2 (not ECT) share the egress.
  star.nic(0).dst = 3;
  star.nic(0).to_send = 50;
  for (int i : {1, 2}) {
    star.nic(i).dst = 3;
    star.nic(i).to_send = 200;
    star.nic(i).start_ps = 100 * kUs;
  }
  star.nic(2).ecn = Ecn::kNotEct;
  star.start();
  run_to_idle();

  std::vector<Ecn> from1;
  int marked = 0;
  for (const Arrival& a : star.nic(3).arrivals) {
    marked += a.ecn == Ecn::kCe;
    if (a.source == 0) {
      EXPECT_EQ(a.ecn, Ecn::kEct0) << "marked without a queue";
    } else if (a.source == 2) {
      EXPECT_EQ(a.ecn, Ecn::kNotEct) << "a non-ECT frame marked";
    } else {
      from1.push_back(a.ecn);
    }
  }
  ASSERT_EQ(from1.size(), 200u);
  // The queue grows by one frame per frame time: the first frames leave it below kmin, and
  // from about 20 frames (above kmax) every ECT frame is marked until it drains at the end.
  for (int i = 0; i < 3; ++i) EXPECT_EQ(from1[i], Ecn::kEct0) << i;
  for (int i = 12; i < 180; ++i) EXPECT_EQ(from1[i], Ecn::kCe) << i;
  EXPECT_EQ(star.sw.port_stats(3).ecn_marks->value(), static_cast<std::uint64_t>(marked));
  EXPECT_GE(marked, 168);
}

// ----- (6) strict priority -----

TEST(SwitchPriority, ControlFramesOvertakeData) {
  Star star("sw", ports(4), link_config(100, kUs));
  for (int i : {0, 1}) {
    star.nic(i).dst = 3;
    star.nic(i).to_send = 150;
  }
  TestNic& ack = star.nic(2);
  ack.dst = 3;
  ack.to_send = 1;
  ack.control = true;
  ack.priority = 6;  // the default control priority
  ack.start_ps = 20 * kUs;
  star.start();
  run_to_idle();

  const auto& rx = star.nic(3).arrivals;
  const auto it =
      std::find_if(rx.begin(), rx.end(), [](const Arrival& a) { return a.source == 2; });
  ASSERT_NE(it, rx.end());
  // By 20 us about 60 data frames are queued; the ACK waits only for the pipeline and the data
  // frame on the wire: 86 bytes to the switch, 0.5 us, at most one data frame, 86 bytes out.
  const core::TimePs ack_wire = 6880;
  EXPECT_LE(it->time, 20 * kUs + kHeaderWire + kUs + 500000 + kDataWire + ack_wire + kUs);
  const auto overtaken = rx.end() - it - 1;
  EXPECT_GT(overtaken, 200);
}

// ----- PFC from downstream -----

TEST(SwitchPfc, HonoursPauseFromDownstreamPerPriority) {
  Star star("sw", ports(3), link_config(100, kUs));
  star.nic(0).dst = 2;  // lossless class, priority 3
  star.nic(0).to_send = 300;
  star.nic(1).dst = 2;  // a lossy class, priority 1
  star.nic(1).to_send = 300;
  star.nic(1).priority = 1;
  // The receiver pauses priority 3 at 20 us, resumes it at 60 us, then pauses it at 80 us for
  // 1000 quanta (5.12 us) and lets the pause expire.
  star.nic(2).pfc_plan = {{20 * kUs, 3, 65535}, {60 * kUs, 3, 0}, {80 * kUs, 3, 1000}};
  star.start();
  run_to_idle();

  const auto& rx = star.nic(2).arrivals;
  ASSERT_EQ(rx.size(), 600u);
  const auto count = [&](std::uint8_t prio, core::TimePs from, core::TimePs to) {
    return std::count_if(rx.begin(), rx.end(), [&](const Arrival& a) {
      return a.priority == prio && a.time > from && a.time < to;
    });
  };
  // PFC frames reach the switch after 72 bytes and 1 us; a frame already on the wire finishes.
  const core::TimePs pause1 = 20 * kUs + kHeaderWire + kUs, resume1 = 60 * kUs + kHeaderWire + kUs;
  EXPECT_EQ(count(3, pause1 + kDataWire + kUs, resume1 + kDataWire + kUs), 0);
  EXPECT_GT(count(1, pause1 + kDataWire + kUs, resume1 + kDataWire + kUs), 100);
  EXPECT_GE(count(3, resume1, resume1 + 10 * kUs), 25);  // line rate after 1.3 us
  const core::TimePs pause2 = 80 * kUs + kHeaderWire + kUs, expiry = pause2 + 5120000;
  EXPECT_EQ(count(3, pause2 + kDataWire + kUs, expiry + kUs), 0);
  EXPECT_GE(count(3, expiry + kUs, expiry + kUs + 2 * kDataWire + 1), 1);
  EXPECT_EQ(star.sw.port_stats(2).pfc_pause_received->value(), 2u);
  EXPECT_EQ(star.sw.port_stats(2).pfc_resume_received->value(), 1u);
}

// ----- (7) bad input -----

TEST(SwitchConfigErrors, ConstructorAndAttachRejectBadInput) {
  SwitchConfig c = ports(2);
  c.ecn.kmin = core::ByteSize{2000000};
  try {
    Switch bad("bad", c);
    FAIL() << "bad config accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("ecn.kmax"));
  }
  Switch sw("sw", ports(2));
  Link l0("l0", link_config(100, 0)), l1("l1", link_config(100, 0));
  EXPECT_THROW(sw.attach(2, l0, 0), std::out_of_range);
  EXPECT_THROW(sw.attach(-1, l0, 0), std::out_of_range);
  sw.attach(0, l0, 0);
  EXPECT_THROW(sw.attach(0, l1, 0), std::logic_error);
}

}  // namespace
}  // namespace podsim::fabric
