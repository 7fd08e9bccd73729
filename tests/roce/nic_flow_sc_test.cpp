// The RoCE v2 NIC over the flow-level network: each message one flow, timed as the packet path
// times it (side by side with two NICs on a real link in the same run), the same bytes and
// completions, the same errors, and QPs sharing their port.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/kernel.h"
#include "core/memory_target.h"
#include "core/random.h"
#include "hw/fabric/link.h"
#include "hw/flow/flow_network.h"
#include "hw/roce/nic.h"
#include "tests/roce/nic_test_support.h"
#include "tests/support/test_support.h"

namespace podsim::roce {
namespace {

using core::TimePs;
using namespace nic_test;  // NOLINT: the NIC tests' shared helpers
using ::testing::HasSubstr;

constexpr core::Duration kCable{500000};  // 500 ns

// Two single-port NICs with their memories, one QP each way; `wire` joins them by a link, or
// (null) by a flow network of the same rate and cable.
struct Pair {
  core::MemoryTarget mem_a, mem_b;
  Nic a, b;
  CompletionQueue a_send, a_recv, b_send, b_recv;
  Recorder a_sent, a_received, b_sent, b_received;
  std::uint32_t qa = 0, qb = 0;

  Pair(const std::string& prefix, bool functional, std::uint64_t memory = 64 * kMiB)
      : mem_a((prefix + "mem_a").c_str(), memory_config(functional, memory)),
        mem_b((prefix + "mem_b").c_str(), memory_config(functional, memory)),
        a((prefix + "nic_a").c_str(), 1, RoceConfig{}, functional),
        b((prefix + "nic_b").c_str(), 1, RoceConfig{}, functional) {
    a.memory_socket.bind(mem_a.target_socket);
    b.memory_socket.bind(mem_b.target_socket);
    a_sent.attach(a_send);
    a_received.attach(a_recv);
    b_sent.attach(b_send);
    b_received.attach(b_recv);
  }
  void connect() {
    qa = a.create_qp(0, a_send, a_recv);
    qb = b.create_qp(0, b_send, b_recv);
    a.connect_qp(qa, kAddrB, qb);
    b.connect_qp(qb, kAddrA, qa);
  }
  void post(std::uint64_t wr_id, SendOpcode op, std::uint64_t local, std::uint64_t remote,
            std::uint64_t length, std::uint32_t imm = 0) {
    SendRequest r;
    r.wr_id = wr_id;
    r.opcode = op;
    r.local_address = local;
    r.remote_address = remote;
    r.length = length;
    r.immediate = imm;
    a.post_send(qa, r);
  }
};

fabric::LinkConfig link_config() {
  fabric::LinkConfig c;
  c.rate = core::Bandwidth{100e9};
  c.cable.delay = kCable;
  return c;
}

struct LinkPair : Pair {
  fabric::Link link;
  explicit LinkPair(bool functional, std::uint64_t memory = 64 * kMiB,
                    const std::string& prefix = "link_")
      : Pair(prefix, functional, memory), link((prefix + "link").c_str(), link_config()) {
    a.attach(0, link, 0, kAddrA);
    b.attach(0, link, 1, kAddrB);
    connect();
  }
};

struct FlowPair : Pair {
  flow::FlowNetwork net;
  explicit FlowPair(bool functional, std::uint64_t memory = 64 * kMiB,
                    const std::string& prefix = "flow_")
      : Pair(prefix, functional, memory), net((prefix + "net").c_str()) {
    flow::FlowLink l;
    l.rate = core::Bandwidth{100e9};
    l.propagation_ps = static_cast<TimePs>(kCable.ps);
    net.add_link(l);  // 0: A to B
    net.add_link(l);  // 1: B to A
    net.set_router([](fabric::EndpointId src, fabric::EndpointId, std::uint16_t) {
      return flow::Route{src == kAddrA ? 0 : 1};
    });
    a.attach(0, net, kAddrA, l.rate);
    b.attach(0, net, kAddrB, l.rate);
    connect();
  }
};

TEST(NicFlow, SmallWriteLatencyIsThePacketPathsToThePicosecond) {
  FlowPair p(false);
  start();
  p.post(7, SendOpcode::kWrite, 0x100, 0x200, 8);
  sc_core::sc_start();
  ASSERT_EQ(p.a_sent.entries.size(), 1u);
  // As tests/roce/nic_sc_test.cpp adds it up: pipeline, read, 106 wire bytes, cable, pipeline,
  // write, 86-byte ACK, cable, pipeline.
  EXPECT_EQ(p.a_sent.entries[0].at,
            500000u + 10004u + 8480u + 500000u + 500000u + 10004u + 6880u + 500000u + 500000u);
}

// Each opcode alone completes when the packet path's does, with the same counts on the NICs.
TEST(NicFlow, EveryOperationCompletesWhenThePacketPathsDoes) {
  const SendOpcode ops[] = {SendOpcode::kSend, SendOpcode::kWriteWithImmediate, SendOpcode::kRead,
                            SendOpcode::kWrite};
  std::vector<std::unique_ptr<LinkPair>> packets;
  std::vector<std::unique_ptr<FlowPair>> flows;
  for (int i = 0; i < 4; ++i) {
    packets.push_back(std::make_unique<LinkPair>(false, 64 * kMiB, fmt::format("l{}_", i)));
    flows.push_back(std::make_unique<FlowPair>(false, 64 * kMiB, fmt::format("f{}_", i)));
  }
  start();
  for (int i = 0; i < 4; ++i) {
    for (Pair* p : {static_cast<Pair*>(packets[i].get()), static_cast<Pair*>(flows[i].get())}) {
      p->b.post_recv(p->qb, RecvRequest{11, 0x400000, 1 << 20});
      p->post(1, ops[i], 0, 0x100000, 300000 * (i + 1), 9);
    }
  }
  sc_core::sc_start();
  for (int i = 0; i < 4; ++i) {
    const Pair &p = *packets[i], &f = *flows[i];
    ASSERT_EQ(p.a_sent.entries.size(), 1u);
    ASSERT_EQ(f.a_sent.entries.size(), 1u);
    EXPECT_EQ(f.a_sent.entries[0].c.opcode, p.a_sent.entries[0].c.opcode);
    EXPECT_EQ(f.a_sent.entries[0].c.status, CompletionStatus::kSuccess);
    const double at = double(p.a_sent.entries[0].at);
    EXPECT_NEAR(double(f.a_sent.entries[0].at), at, 1e-4 * at) << to_string(ops[i]);
    EXPECT_EQ(f.b_received.entries.size(), p.b_received.entries.size());
    for (std::size_t k = 0; k < f.b_received.entries.size(); ++k) {
      EXPECT_NEAR(double(f.b_received.entries[k].at), double(p.b_received.entries[k].at),
                  1e-4 * double(p.b_received.entries[k].at));
    }
    for (auto get : {&Nic::PortStats::tx_packets, &Nic::PortStats::tx_bytes,
                     &Nic::PortStats::acks_sent, &Nic::PortStats::data_bytes_sent}) {
      EXPECT_EQ((f.a.port_stats(0).*get)->value(), (p.a.port_stats(0).*get)->value());
      EXPECT_EQ((f.b.port_stats(0).*get)->value(), (p.b.port_stats(0).*get)->value());
    }
  }
}

TEST(NicFlow, SendWriteWithImmediateAndReadMoveTheRightBytes) {
  FlowPair p(true);
  const auto send_data = random_bytes(10000, 1);
  const auto write_data = random_bytes(5000, 2);
  const auto read_data = random_bytes(20000, 3);
  p.mem_a.backing().write(0x10000, send_data.data(), send_data.size());
  p.mem_a.backing().write(0x20000, write_data.data(), write_data.size());
  p.mem_b.backing().write(0x90000, read_data.data(), read_data.size());
  start();
  p.b.post_recv(p.qb, RecvRequest{11, 0x40000, 16384});
  p.b.post_recv(p.qb, RecvRequest{12, 0, 0});
  p.post(1, SendOpcode::kSend, 0x10000, 0, send_data.size());
  p.post(2, SendOpcode::kWriteWithImmediate, 0x20000, 0x60000, write_data.size(), 0xABCD1234);
  p.post(3, SendOpcode::kRead, 0x30000, 0x90000, read_data.size());
  sc_core::sc_start();
  ASSERT_EQ(p.a_sent.entries.size(), 3u);
  for (const auto& e : p.a_sent.entries) EXPECT_EQ(e.c.status, CompletionStatus::kSuccess);
  ASSERT_EQ(p.b_received.entries.size(), 2u);
  EXPECT_EQ(p.b_received.entries[0].c.byte_len, 10000u);
  EXPECT_EQ(p.b_received.entries[1].c.immediate, 0xABCD1234u);
  EXPECT_TRUE(p.b_received.entries[1].c.has_immediate);
  EXPECT_TRUE(read_memory(p.mem_b, 0x40000, send_data.size()) == send_data);
  EXPECT_TRUE(read_memory(p.mem_b, 0x60000, write_data.size()) == write_data);
  EXPECT_TRUE(read_memory(p.mem_a, 0x30000, read_data.size()) == read_data);
}

TEST(NicFlow, ErrorsCompleteAsOnThePacketPath) {
  FlowPair rnr(true, 16 * kMiB);
  start();
  rnr.post(1, SendOpcode::kWriteWithImmediate, 0, 0, 100);  // no receive posted
  rnr.post(2, SendOpcode::kWrite, 0, 0, 100);
  sc_core::sc_start(sc_core::sc_time(1, sc_core::SC_MS));
  ASSERT_EQ(rnr.a_sent.entries.size(), 2u);
  EXPECT_EQ(rnr.a_sent.entries[0].c.status, CompletionStatus::kRnrRetryExceeded);
  EXPECT_EQ(rnr.a_sent.entries[1].c.status, CompletionStatus::kFlushed);
  EXPECT_EQ(rnr.a.qp_state(rnr.qa), Nic::QpState::kError);
}

TEST(NicFlow, AccessAndLengthErrorsAreReported) {
  FlowPair remote(true, 16 * kMiB);
  start();
  remote.b.post_recv(remote.qb, RecvRequest{21, 0, 4096});
  remote.post(1, SendOpcode::kSend, 0, 0, 10000);  // longer than the receive
  sc_core::sc_start(sc_core::sc_time(1, sc_core::SC_MS));
  ASSERT_EQ(remote.a_sent.entries.size(), 1u);
  EXPECT_EQ(remote.a_sent.entries[0].c.status, CompletionStatus::kRemoteInvalidRequest);
  ASSERT_EQ(remote.b_received.entries.size(), 1u);
  EXPECT_EQ(remote.b_received.entries[0].c.status, CompletionStatus::kLocalLengthError);
  EXPECT_EQ(remote.b.qp_state(remote.qb), Nic::QpState::kError);
}

TEST(NicFlow, MemoryOutsideEitherSideFails) {
  FlowPair p(true, 16 * kMiB), q(true, 16 * kMiB, "second_");
  start();
  p.post(1, SendOpcode::kWrite, 0, 16 * kMiB - 100, 200);  // past the end of B's memory
  q.post(1, SendOpcode::kWrite, 32 * kMiB, 0, 200);        // past the end of A's
  sc_core::sc_start(sc_core::sc_time(1, sc_core::SC_MS));
  ASSERT_EQ(p.a_sent.entries.size(), 1u);
  EXPECT_EQ(p.a_sent.entries[0].c.status, CompletionStatus::kRemoteAccessError);
  ASSERT_EQ(q.a_sent.entries.size(), 1u);
  EXPECT_EQ(q.a_sent.entries[0].c.status, CompletionStatus::kLocalAccessError);
}

// Two QPs on one port share it: two 4 MiB WRITEs end together, at twice one's time.
TEST(NicFlow, QpsOnOnePortShareItEqually) {
  FlowPair one(false), two(false, 64 * kMiB, "two_");
  CompletionQueue s2, r2, s3, r3;
  Recorder second;
  second.attach(s2);
  const std::uint32_t q2 = two.a.create_qp(0, s2, r2), q3 = two.b.create_qp(0, s3, r3);
  two.a.connect_qp(q2, kAddrB, q3);
  two.b.connect_qp(q3, kAddrA, q2);
  start();
  one.post(1, SendOpcode::kWrite, 0, 0, 4 * kMiB);
  two.post(1, SendOpcode::kWrite, 0, 0, 4 * kMiB);
  SendRequest r;
  r.length = 4 * kMiB;
  two.a.post_send(q2, r);
  sc_core::sc_start();
  ASSERT_EQ(two.a_sent.entries.size(), 1u);
  ASSERT_EQ(second.entries.size(), 1u);
  const double alone = double(one.a_sent.entries[0].at);
  EXPECT_NEAR(double(two.a_sent.entries[0].at), double(second.entries[0].at), 1e-5 * alone);
  EXPECT_NEAR(double(two.a_sent.entries[0].at) / alone, 2.0, 0.01);
}

TEST(NicFlow, APeerThatIsNotThereIsRefused) {
  FlowPair p(false);
  CompletionQueue s, r;
  const std::uint32_t q = p.a.create_qp(0, s, r);
  p.a.connect_qp(q, kAddrB, 99);
  start();
  SendRequest w;
  w.length = 8;
  try {
    p.a.post_send(q, w);
    FAIL() << "posted to a QP that does not exist";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("QP 99 at endpoint 2, which does not exist"));
  }
  // The QP keeps its far end once found; a refused one has none, so it is refused again.
  EXPECT_THROW(p.a.post_send(q, w), std::invalid_argument);
}

}  // namespace
}  // namespace podsim::roce
