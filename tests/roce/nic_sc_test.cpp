// The RoCE v2 NIC over a real link and memories: goodput, exact latency, loss recovery, retry
// exhaustion, SEND/RECV, WRITE with immediate, READ, PSN wrap, DCQCN, PFC and bad verbs calls.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/event_queue.h"
#include "core/kernel.h"
#include "core/memory_target.h"
#include "core/random.h"
#include "core/trace.h"
#include "hw/fabric/link.h"
#include "hw/roce/nic.h"
#include "tests/roce/nic_test_support.h"
#include "tests/support/chrome_trace_check.h"
#include "tests/support/test_support.h"

namespace podsim::roce {
namespace {

using core::TimePs;
using namespace nic_test;  // NOLINT: the NIC tests' shared helpers
using ::testing::HasSubstr;

constexpr TimePs kUs = 1000000;

fabric::LinkConfig link_config(core::Duration delay = core::Duration{1000000}) {
  fabric::LinkConfig c;
  c.rate = core::Bandwidth{100e9};
  c.cable.delay = delay;
  return c;
}

// The DCQCN tests below were written against HPCC's timers and NVIDIA's CNP interval.
RoceConfig roce_config() {
  RoceConfig c;
  c.dcqcn = DcqcnConfig::hpcc();
  c.cnp_interval = core::Duration{4000000};
  return c;
}

// Two single-port NICs joined by one link, each with its own memory, one QP each way.
struct Pair {
  fabric::Link link;
  core::MemoryTarget mem_a, mem_b;
  Nic a, b;
  CompletionQueue a_send, a_recv, b_send, b_recv;
  Recorder a_sent, a_received, b_sent, b_received;
  std::uint32_t qa = 0, qb = 0;

  Pair(const fabric::LinkConfig& lc, const RoceConfig& rc, const core::MemoryTargetConfig& mc,
       std::uint32_t psn_a = 0, std::uint32_t psn_b = 0, const char* prefix = "")
      : link((std::string(prefix) + "link").c_str(), lc),
        mem_a((std::string(prefix) + "mem_a").c_str(), mc),
        mem_b((std::string(prefix) + "mem_b").c_str(), mc),
        a((std::string(prefix) + "nic_a").c_str(), 1, rc, mc.functional),
        b((std::string(prefix) + "nic_b").c_str(), 1, rc, mc.functional) {
    a.memory_socket.bind(mem_a.target_socket);
    b.memory_socket.bind(mem_b.target_socket);
    a.attach(0, link, 0, kAddrA);
    b.attach(0, link, 1, kAddrB);
    a_sent.attach(a_send);
    a_received.attach(a_recv);
    b_sent.attach(b_send);
    b_received.attach(b_recv);
    qa = a.create_qp(0, a_send, a_recv);
    qb = b.create_qp(0, b_send, b_recv);
    a.connect_qp(qa, kAddrB, qb, psn_a, psn_b);
    b.connect_qp(qb, kAddrA, qa, psn_b, psn_a);
  }

  void post_write(std::uint64_t wr_id, std::uint64_t local, std::uint64_t remote,
                  std::uint64_t length, SendOpcode op = SendOpcode::kWrite, std::uint32_t imm = 0) {
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

// ---------------------------------------------------------------------------------------------
// (a) Goodput of one large WRITE

TEST(Nic, OneGibWriteRunsAtLineRateTimesPayloadShare) {
  Pair p(link_config(), roce_config(), memory_config(false, 2048 * kMiB));
  start();
  const std::uint64_t bytes = 1024 * kMiB;
  p.post_write(1, 0, 0, bytes);
  sc_core::sc_start();
  ASSERT_EQ(p.a_sent.entries.size(), 1u);
  const auto& done = p.a_sent.entries[0];
  EXPECT_EQ(done.c.status, CompletionStatus::kSuccess);
  EXPECT_EQ(done.c.opcode, CompletionOpcode::kWrite);
  const double seconds = static_cast<double>(done.at) * 1e-12;
  const double goodput = static_cast<double>(bytes) * 8 / seconds;
  const double expected = 100e9 * 4096.0 / 4178.0;  // [N1]: 98.04 Gb/s
  EXPECT_NEAR(goodput / expected, 1.0, 0.001) << "goodput " << goodput / 1e9 << " Gb/s";
  const auto& s = p.a.port_stats(0);
  EXPECT_EQ(s.data_packets_sent->value(), 262144u);
  EXPECT_EQ(s.retransmitted_packets->value(), 0u);
  EXPECT_EQ(p.b.port_stats(0).acks_sent->value(), 262144u);  // one per packet by default
  EXPECT_EQ(s.tx_bytes->value(), 262144u * 4178 + 16);       // RETH on the first packet
  EXPECT_EQ(fabric::packet_pool().live(), 0u);
}

// ---------------------------------------------------------------------------------------------
// (b) Latency of a small WRITE, component by component

TEST(Nic, SmallWriteLatencyIsTheSumOfItsParts) {
  const core::Duration prop{500000};  // 500 ns of cable
  const core::MemoryTargetConfig mc = memory_config(false);
  RoceConfig rc = roce_config();
  Pair p(link_config(prop), rc, mc);
  start();
  p.post_write(7, 0x100, 0x200, 8);
  sc_core::sc_start();
  ASSERT_EQ(p.a_sent.entries.size(), 1u);
  EXPECT_EQ(p.a_sent.entries[0].c.wr_id, 7u);

  const TimePs mem = static_cast<TimePs>(mc.latency.ps + mc.bandwidth.time_for(8).ps);
  // WRITE ONLY with 8 bytes: MAC 14 + IPv4 20 + UDP 8 + BTH 12 + RETH 16 + 8 + ICRC 4 + FCS 4
  // = 86-byte frame, + 20 preamble/IFG = 106 wire bytes. ACK: 14+20+8+12+AETH 4+4+4 = 66 + 20.
  constexpr std::uint32_t kWriteWire = 106, kAckWire = 86;
  const TimePs expected = static_cast<TimePs>(rc.tx_pipeline_latency.ps)     // doorbell to packet
                          + mem                                              // payload read
                          + p.link.serialization_ps(kWriteWire)              // 8.48 ns
                          + static_cast<TimePs>(prop.ps)                     // to B
                          + static_cast<TimePs>(rc.rx_pipeline_latency.ps)   // B's RX pipeline
                          + mem                                              // payload write
                          + p.link.serialization_ps(kAckWire)                // 6.88 ns
                          + static_cast<TimePs>(prop.ps)                     // back to A
                          + static_cast<TimePs>(rc.rx_pipeline_latency.ps);  // A takes the ACK
  EXPECT_EQ(p.a_sent.entries[0].at, expected);
  EXPECT_EQ(expected,
            500000u + 10004u + 8480u + 500000u + 500000u + 10004u + 6880u + 500000u + 500000u);
  EXPECT_EQ(p.link.stats(0).bytes->value(), kWriteWire);
  EXPECT_EQ(p.link.stats(1).bytes->value(), kAckWire);
}

// ---------------------------------------------------------------------------------------------
// (c) Loss recovery with go-back-N

TEST(Nic, LossyLinkDeliversEveryByteAndCountsEveryRetransmission) {
  fabric::LinkConfig lc = link_config();
  lc.cable.loss_rate = 0.01;
  lc.seed = 7;
  Pair p(lc, roce_config(), memory_config(true));
  const std::uint64_t bytes = 64 * kMiB;
  const auto data = random_bytes(bytes, 99);
  p.mem_a.backing().write(0, data.data(), bytes);
  start();
  p.post_write(1, 0, 100 * kMiB, bytes);
  sc_core::sc_start();
  ASSERT_EQ(p.a_sent.entries.size(), 1u);
  EXPECT_EQ(p.a_sent.entries[0].c.status, CompletionStatus::kSuccess);
  EXPECT_TRUE(read_memory(p.mem_b, 100 * kMiB, bytes) == data) << "data differ";

  const auto& sa = p.a.port_stats(0);
  const auto& sb = p.b.port_stats(0);
  const std::uint64_t packets = bytes / 4096;
  const std::uint64_t lost = p.link.stats(0).lost->value();  // A to B carries only data
  EXPECT_GT(lost, 100u);
  EXPECT_GT(p.link.stats(1).lost->value(), 100u);  // ACKs and NAKs were lost too
  // Every data packet sent is either one of the message's or a retransmission...
  EXPECT_EQ(sa.data_packets_sent->value(), packets + sa.retransmitted_packets->value());
  // ...every lost one was sent again, and each one sent arrived or was lost.
  EXPECT_GE(sa.retransmitted_packets->value(), lost);
  EXPECT_EQ(sb.data_packets_received->value() + lost, sa.data_packets_sent->value());
  EXPECT_EQ(sb.data_packets_received->value(),
            packets + sb.duplicates_received->value() + sb.out_of_sequence_received->value());
  EXPECT_GT(sb.naks_sent->value(), 0u);
  EXPECT_EQ(p.a.completion_errors().value(), 0u);
  // NAKs repeated after nak_interval recover lost NAKs and lost retransmissions; the timer is
  // left for losses at the end of the message, with nothing behind them to reveal the gap.
  EXPECT_LE(sa.timeouts->value(), 3u);
  EXPECT_LT(sa.retransmitted_packets->value(), 100 * lost);
  EXPECT_EQ(fabric::packet_pool().live(), 0u);
}

// ---------------------------------------------------------------------------------------------
// (c') TCP's congestion window (window_control)

RoceConfig tcp_config() {
  RoceConfig c;
  c.dcqcn.enabled = false;
  c.window_control = true;
  return c;
}

// A window of four packets over a 20 us cable: each round trip carries four packets, so the
// write takes its packets / 4 round trips instead of its time at line rate.
TEST(Nic, TheWindowBoundsThePacketsInFlight) {
  RoceConfig rc = tcp_config();
  rc.window.receive_window = core::ByteSize{4 * 4096};
  Pair p(link_config(core::Duration{20000000}), rc, memory_config(false));
  start();
  const std::uint64_t bytes = 1 * kMiB;  // 256 packets
  p.post_write(1, 0, 0, bytes);
  sc_core::sc_start();
  ASSERT_EQ(p.a_sent.entries.size(), 1u);
  const TimePs rtt = 2 * 20 * kUs;
  const TimePs took = p.a_sent.entries[0].at;
  EXPECT_GT(took, (256 / 4 - 1) * rtt);
  EXPECT_LT(took, (256 / 4 + 2) * (rtt + 3 * kUs));  // the pipelines and frames on each trip
  EXPECT_EQ(p.a.port_stats(0).retransmitted_packets->value(), 0u);
}

// Losses cut the window (once per window of data) and go-back-N resends: every byte arrives,
// and the QP's window is a statistic from its first cut on.
TEST(Nic, LossesCutTheWindowAndEveryByteArrives) {
  fabric::LinkConfig lc = link_config();
  lc.cable.loss_rate = 0.002;
  lc.seed = 11;
  Pair p(lc, tcp_config(), memory_config(true));
  const std::uint64_t bytes = 16 * kMiB;
  const auto data = random_bytes(bytes, 5);
  p.mem_a.backing().write(0, data.data(), bytes);
  start();
  p.post_write(1, 0, 64 * kMiB, bytes);
  sc_core::sc_start();
  ASSERT_EQ(p.a_sent.entries.size(), 1u);
  EXPECT_EQ(p.a_sent.entries[0].c.status, CompletionStatus::kSuccess);
  EXPECT_TRUE(read_memory(p.mem_b, 64 * kMiB, bytes) == data) << "data differ";
  EXPECT_GT(p.a.port_stats(0).retransmitted_packets->value(), 0u);
  ASSERT_TRUE(core::stats_registry().contains("nic_a.qp2.cwnd"));
  EXPECT_GT(p.a.port_stats(0).naks_received->value(), 0u);
  EXPECT_EQ(fabric::packet_pool().live(), 0u);
}

// ---------------------------------------------------------------------------------------------
// (d) Retry exhaustion

TEST(Nic, TotalLossFailsAfterRetryLimitTimeoutsAtTheExpectedTime) {
  fabric::LinkConfig lc = link_config();
  lc.cable.loss_rate = 1.0;
  RoceConfig rc = roce_config();
  rc.retransmit_timeout = 5;  // 4.096 us x 32 = 131.072 us
  const core::MemoryTargetConfig mc = memory_config(false);
  Pair p(lc, rc, mc);
  start();
  p.post_write(1, 0, 0, 8);
  p.post_write(2, 0, 0, 8);
  sc_core::sc_start();
  ASSERT_EQ(p.a_sent.entries.size(), 2u);
  EXPECT_EQ(p.a_sent.entries[0].c.wr_id, 1u);
  EXPECT_EQ(p.a_sent.entries[0].c.status, CompletionStatus::kRetryExceeded);
  EXPECT_EQ(p.a_sent.entries[1].c.wr_id, 2u);
  EXPECT_EQ(p.a_sent.entries[1].c.status, CompletionStatus::kFlushed);
  // Each send starts tx_pipeline + payload read after the post or the timeout before it; the
  // timer starts when the packet leaves. The original and 7 retries each time out: error at
  // 8 x (pipeline + read + timeout).
  const TimePs rto = 131072000;
  const TimePs start_up = 500000 + static_cast<TimePs>(mc.latency.ps + mc.bandwidth.time_for(8).ps);
  EXPECT_EQ(p.a_sent.entries[0].at, 8 * (start_up + rto));
  EXPECT_EQ(p.a_sent.entries[1].at, p.a_sent.entries[0].at);
  const auto& s = p.a.port_stats(0);
  EXPECT_EQ(s.timeouts->value(), 8u);
  // The second WRITE goes out behind the first each round: 2 packets, 7 rounds of retries.
  EXPECT_EQ(s.retransmitted_packets->value(), 14u);
  EXPECT_EQ(s.data_packets_sent->value(), 16u);
  EXPECT_EQ(p.a.qp_state(p.qa), Nic::QpState::kError);
  try {
    p.post_write(3, 0, 0, 8);
    ADD_FAILURE() << "posting to a QP in error must throw";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("error state"));
  }
  EXPECT_EQ(fabric::packet_pool().live(), 0u);
}

// ---------------------------------------------------------------------------------------------
// (e) SEND/RECV, WRITE with immediate, READ

TEST(Nic, SendWriteWithImmediateAndReadMoveTheRightBytes) {
  Pair p(link_config(), roce_config(), memory_config(true));
  const auto send_data = random_bytes(10000, 1);
  const auto write_data = random_bytes(5000, 2);
  const auto read_data = random_bytes(20000, 3);
  p.mem_a.backing().write(0x10000, send_data.data(), send_data.size());
  p.mem_a.backing().write(0x20000, write_data.data(), write_data.size());
  p.mem_b.backing().write(0x90000, read_data.data(), read_data.size());
  start();
  p.b.post_recv(p.qb, RecvRequest{11, 0x40000, 16384});
  p.b.post_recv(p.qb, RecvRequest{12, 0, 0});  // takes the immediate only
  p.post_write(1, 0x10000, 0, send_data.size(), SendOpcode::kSend);
  p.post_write(2, 0x20000, 0x60000, write_data.size(), SendOpcode::kWriteWithImmediate, 0xABCD1234);
  p.post_write(3, 0x30000, 0x90000, read_data.size(), SendOpcode::kRead);
  sc_core::sc_start();

  ASSERT_EQ(p.a_sent.entries.size(), 3u);
  const CompletionOpcode ops[] = {CompletionOpcode::kSend, CompletionOpcode::kWrite,
                                  CompletionOpcode::kRead};
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(p.a_sent.entries[i].c.wr_id, static_cast<std::uint64_t>(i + 1));
    EXPECT_EQ(p.a_sent.entries[i].c.opcode, ops[i]);
    EXPECT_EQ(p.a_sent.entries[i].c.status, CompletionStatus::kSuccess);
  }
  ASSERT_EQ(p.b_received.entries.size(), 2u);
  const Completion& r1 = p.b_received.entries[0].c;
  EXPECT_EQ(r1.wr_id, 11u);
  EXPECT_EQ(r1.opcode, CompletionOpcode::kRecv);
  EXPECT_EQ(r1.byte_len, 10000u);
  EXPECT_FALSE(r1.has_immediate);
  const Completion& r2 = p.b_received.entries[1].c;
  EXPECT_EQ(r2.wr_id, 12u);
  EXPECT_EQ(r2.opcode, CompletionOpcode::kRecvWriteWithImmediate);
  EXPECT_TRUE(r2.has_immediate);
  EXPECT_EQ(r2.immediate, 0xABCD1234u);
  EXPECT_EQ(r2.byte_len, 5000u);
  EXPECT_TRUE(read_memory(p.mem_b, 0x40000, send_data.size()) == send_data);
  EXPECT_TRUE(read_memory(p.mem_b, 0x60000, write_data.size()) == write_data);
  EXPECT_TRUE(read_memory(p.mem_a, 0x30000, read_data.size()) == read_data);
  // A READ completes only when its data is in place, after the WRITE's ACK.
  EXPECT_GT(p.a_sent.entries[2].at, p.a_sent.entries[1].at);
  EXPECT_EQ(p.a.completions().value(), 3u);
  EXPECT_EQ(p.b.completions().value(), 2u);
}

TEST(Nic, SendWithImmediateCarriesIt) {
  Pair p(link_config(), roce_config(), memory_config(true));
  start();
  p.b.post_recv(p.qb, RecvRequest{5, 0x1000, 64});
  p.post_write(1, 0, 0, 64, SendOpcode::kSendWithImmediate, 77);
  sc_core::sc_start();
  ASSERT_EQ(p.b_received.entries.size(), 1u);
  EXPECT_EQ(p.b_received.entries[0].c.immediate, 77u);
  EXPECT_TRUE(p.b_received.entries[0].c.has_immediate);
}

TEST(Nic, PolledCompletionQueueAndItsEvent) {
  fabric::Link link("link", link_config());
  core::MemoryTarget mem_a("mem_a", memory_config(false)), mem_b("mem_b", memory_config(false));
  Nic a("nic_a", 1, roce_config(), false), b("nic_b", 1, roce_config(), false);
  a.memory_socket.bind(mem_a.target_socket);
  b.memory_socket.bind(mem_b.target_socket);
  a.attach(0, link, 0, kAddrA);
  b.attach(0, link, 1, kAddrB);
  CompletionQueue sa, ra, sb, rb;
  const std::uint32_t qa = a.create_qp(0, sa, ra), qb = b.create_qp(0, sb, rb);
  a.connect_qp(qa, kAddrB, qb);
  b.connect_qp(qb, kAddrA, qa);
  start();
  SendRequest r;
  r.wr_id = 9;
  r.length = 4096;
  a.post_send(qa, r);
  r.wr_id = 10;
  r.signaled = false;  // no completion for this one
  a.post_send(qa, r);
  sc_core::sc_start();
  EXPECT_EQ(sa.size(), 1u);
  EXPECT_EQ(sa.delivered(), 1u);
  const auto c = sa.poll();
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->wr_id, 9u);
  EXPECT_FALSE(sa.poll().has_value());
  EXPECT_EQ(a.requester(qa).unacked_seq(), 2u);
}

TEST(Nic, SendWithoutReceiveFailsWithRnr) {
  Pair p(link_config(), roce_config(), memory_config(true));
  start();
  p.post_write(1, 0, 0, 100, SendOpcode::kSend);
  p.post_write(2, 0, 0, 100, SendOpcode::kWrite);
  sc_core::sc_start();
  ASSERT_EQ(p.a_sent.entries.size(), 2u);
  EXPECT_EQ(p.a_sent.entries[0].c.status, CompletionStatus::kRnrRetryExceeded);
  EXPECT_EQ(p.a_sent.entries[1].c.status, CompletionStatus::kFlushed);
  // The RNR NAK, then a sequence NAK for the WRITE that arrived behind the refused SEND.
  EXPECT_EQ(p.b.port_stats(0).naks_sent->value(), 2u);
}

TEST(Nic, SendLargerThanTheReceiveFailsBothSides) {
  Pair p(link_config(), roce_config(), memory_config(true));
  start();
  p.b.post_recv(p.qb, RecvRequest{21, 0, 4096});
  p.b.post_recv(p.qb, RecvRequest{22, 0, 4096});
  p.post_write(1, 0, 0, 10000, SendOpcode::kSend);
  sc_core::sc_start();
  ASSERT_EQ(p.a_sent.entries.size(), 1u);
  EXPECT_EQ(p.a_sent.entries[0].c.status, CompletionStatus::kRemoteInvalidRequest);
  ASSERT_EQ(p.b_received.entries.size(), 2u);
  EXPECT_EQ(p.b_received.entries[0].c.status, CompletionStatus::kLocalLengthError);
  EXPECT_EQ(p.b_received.entries[1].c.status, CompletionStatus::kFlushed);
  EXPECT_EQ(p.b.qp_state(p.qb), Nic::QpState::kError);
}

TEST(Nic, RemoteAccessOutsideMemoryIsReported) {
  Pair p(link_config(), roce_config(), memory_config(true, 16 * kMiB));
  start();
  p.post_write(1, 0, 16 * kMiB - 100, 200);  // runs past the end of B's memory
  sc_core::sc_start();
  ASSERT_EQ(p.a_sent.entries.size(), 1u);
  EXPECT_EQ(p.a_sent.entries[0].c.status, CompletionStatus::kRemoteAccessError);
}

TEST(Nic, LocalAccessOutsideMemoryIsReported) {
  Pair p(link_config(), roce_config(), memory_config(true, 16 * kMiB));
  start();
  p.post_write(1, 32 * kMiB, 0, 200);
  sc_core::sc_start();
  ASSERT_EQ(p.a_sent.entries.size(), 1u);
  EXPECT_EQ(p.a_sent.entries[0].c.status, CompletionStatus::kLocalAccessError);
  EXPECT_EQ(fabric::packet_pool().live(), 0u);
}

TEST(Nic, LossyReadsAndWritesInterleavedStayCorrect) {
  fabric::LinkConfig lc = link_config();
  lc.cable.loss_rate = 0.03;
  lc.seed = 11;
  RoceConfig rc = roce_config();
  rc.retransmit_timeout = 8;  // 1 ms: tail losses recover quickly
  Pair p(lc, rc, memory_config(true));
  const auto a_data = random_bytes(4 * kMiB, 5);
  const auto b_data = random_bytes(4 * kMiB, 6);
  p.mem_a.backing().write(0, a_data.data(), a_data.size());
  p.mem_b.backing().write(0, b_data.data(), b_data.size());
  start();
  for (int i = 0; i < 8; ++i) {
    const std::uint64_t off = static_cast<std::uint64_t>(i) * 512 * 1024;
    // WRITE A[off] -> B[64 MiB + off], READ B[off] -> A[64 MiB + off], alternating.
    p.post_write(2 * i, off, 64 * kMiB + off, 512 * 1024, SendOpcode::kWrite);
    p.post_write(2 * i + 1, 64 * kMiB + off, off, 512 * 1024, SendOpcode::kRead);
  }
  sc_core::sc_start();
  ASSERT_EQ(p.a_sent.entries.size(), 16u);
  for (std::size_t i = 0; i < 16; ++i) {
    EXPECT_EQ(p.a_sent.entries[i].c.wr_id, i);
    EXPECT_EQ(p.a_sent.entries[i].c.status, CompletionStatus::kSuccess);
  }
  EXPECT_TRUE(read_memory(p.mem_b, 64 * kMiB, a_data.size()) == a_data);
  EXPECT_TRUE(read_memory(p.mem_a, 64 * kMiB, b_data.size()) == b_data);
  EXPECT_GT(p.link.stats(1).lost->value(), 0u);  // READ responses were lost and re-requested
  EXPECT_GT(p.b.port_stats(0).duplicates_received->value(), 0u);
  EXPECT_EQ(fabric::packet_pool().live(), 0u);
}

// ---------------------------------------------------------------------------------------------
// (f) PSN wrap

TEST(Nic, PsnsWrapAt2To24) {
  fabric::LinkConfig lc = link_config();
  lc.cable.loss_rate = 0.02;
  lc.seed = 3;
  RoceConfig rc = roce_config();
  rc.retransmit_timeout = 8;
  const std::uint32_t start_psn = 0xFFFFF0, start_psn_b = 0xFFFFE0;
  Pair p(lc, rc, memory_config(true), start_psn, start_psn_b);
  const auto data = random_bytes(kMiB, 8);
  const auto back = random_bytes(256 * 1024, 9);
  p.mem_a.backing().write(0, data.data(), data.size());
  p.mem_b.backing().write(8 * kMiB, back.data(), back.size());
  start();
  p.post_write(1, 0, 4 * kMiB, data.size());                        // 256 PSNs
  p.post_write(2, kMiB, 8 * kMiB, back.size(), SendOpcode::kRead);  // 64 more
  // And B to A across B's own wrap.
  SendRequest r;
  r.wr_id = 3;
  r.local_address = 8 * kMiB;
  r.remote_address = 2 * kMiB;
  r.length = back.size();
  p.b.post_send(p.qb, r);
  sc_core::sc_start();
  ASSERT_EQ(p.a_sent.entries.size(), 2u);
  ASSERT_EQ(p.b_sent.entries.size(), 1u);
  EXPECT_EQ(p.a_sent.entries[0].c.status, CompletionStatus::kSuccess);
  EXPECT_EQ(p.a_sent.entries[1].c.status, CompletionStatus::kSuccess);
  EXPECT_EQ(p.b_sent.entries[0].c.status, CompletionStatus::kSuccess);
  EXPECT_TRUE(read_memory(p.mem_b, 4 * kMiB, data.size()) == data);
  EXPECT_TRUE(read_memory(p.mem_a, kMiB, back.size()) == back);
  EXPECT_TRUE(read_memory(p.mem_a, 2 * kMiB, back.size()) == back);
  const Requester& q = p.a.requester(p.qa);
  EXPECT_EQ(q.next_seq(), 320u);
  EXPECT_EQ(q.psn_of(q.next_seq()), (start_psn + 320) & 0xFFFFFF);  // 0x000130: wrapped
  EXPECT_EQ(p.b.requester(p.qb).psn_of(64), 0x000020u);             // B's 64 packets wrapped too
  EXPECT_GT(p.a.port_stats(0).retransmitted_packets->value(), 0u);
}

// ---------------------------------------------------------------------------------------------
// (g) ECN, CNP and DCQCN

// A store-and-forward middlebox between two links that marks CE on ECN-capable data going from
// port 0 to port 1 while told to, as a congested switch egress would.
class Marker : public fabric::LinkEndpoint {
 public:
  Marker(fabric::Link& to_a, fabric::Link& to_b) : links_{&to_a, &to_b} {
    to_a.attach(1, *this, 0);
    to_b.attach(0, *this, 1);
  }
  int mark_remaining = 0;  // marks this many data packets, then stops
  TimePs mark_until = 0;   // or marks every data packet until this time
  std::uint64_t marked = 0;

  fabric::Packet* next_to_send(int port, TimePs now, TimePs& retry_at) override {
    if (queue_[port].empty()) return nullptr;
    fabric::Packet* p = queue_[port].front();
    queue_[port].pop_front();
    retry_at = now;
    return p;
  }
  void receive(fabric::Packet* p, int port) override {
    const int out = 1 - port;
    const bool data =
        p->opcode != fabric::Opcode::kAcknowledge && p->opcode != fabric::Opcode::kCnp;
    const bool ect = p->ecn == fabric::Ecn::kEct0 || p->ecn == fabric::Ecn::kEct1;
    if (port == 0 && data && ect && (mark_remaining > 0 || core::now_ps() < mark_until)) {
      if (mark_remaining > 0) --mark_remaining;
      p->ecn = fabric::Ecn::kCe;
      ++marked;
    }
    queue_[out].push_back(p);
    links_[out]->wake(out == 0 ? 1 : 0);
  }

 private:
  fabric::Link* links_[2];
  std::deque<fabric::Packet*> queue_[2];
};

struct MarkedPair {
  fabric::Link to_a{"to_a", link_config(core::Duration{500000})};
  fabric::Link to_b{"to_b", link_config(core::Duration{500000})};
  core::MemoryTarget mem_a{"mem_a", memory_config(false, 2048 * kMiB)};
  core::MemoryTarget mem_b{"mem_b", memory_config(false, 2048 * kMiB)};
  Nic a, b;
  Marker marker{to_a, to_b};
  CompletionQueue a_send, a_recv, b_send, b_recv;
  std::uint32_t qa = 0, qb = 0;
  explicit MarkedPair(const RoceConfig& rc = roce_config()) : a("nic_a", 1, rc), b("nic_b", 1, rc) {
    a.memory_socket.bind(mem_a.target_socket);
    b.memory_socket.bind(mem_b.target_socket);
    a.attach(0, to_a, 0, kAddrA);
    b.attach(0, to_b, 1, kAddrB);
    qa = a.create_qp(0, a_send, a_recv);
    qb = b.create_qp(0, b_send, b_recv);
    a.connect_qp(qa, kAddrB, qb);
    b.connect_qp(qb, kAddrA, qa);
  }
  // Fraction of [from, to) that A's transmitter spent sending.
  double busy_between(TimePs from, TimePs to) {
    sc_core::sc_start(
        core::to_sc_time(core::Duration{static_cast<std::int64_t>(from - core::now_ps())}));
    const auto before = to_a.stats(0).busy_ps->value();
    sc_core::sc_start(core::to_sc_time(core::Duration{static_cast<std::int64_t>(to - from)}));
    return static_cast<double>(to_a.stats(0).busy_ps->value() - before) /
           static_cast<double>(to - from);
  }
};

TEST(Nic, CnpHalvesTheSenderRateWhichThenRecovers) {
  MarkedPair m;
  start();
  SendRequest r;
  r.length = 512 * kMiB;  // about 44 ms at line rate
  m.a.post_send(m.qa, r);
  EXPECT_NEAR(m.busy_between(50 * kUs, 100 * kUs), 1.0, 0.01);  // +-1 frame at the edges
  m.marker.mark_remaining = 1;  // exactly one CE mark, so exactly one CNP
  sc_core::sc_start(core::to_sc_time(core::Duration{20 * 1000000}));
  EXPECT_EQ(m.marker.marked, 1u);
  EXPECT_EQ(m.b.port_stats(0).cnps_sent->value(), 1u);
  EXPECT_EQ(m.a.port_stats(0).cnps_received->value(), 1u);
  // Alpha starts at 1: Rc = Rc (1 - 1/2).
  EXPECT_EQ(m.a.qp_rate(m.qa), 50e9);
  // Paced at 50 Gb/s, the transmitter is busy half the time.
  EXPECT_NEAR(m.busy_between(130 * kUs, 330 * kUs), 0.5, 0.005);
  // One rate-increase period (300 us) later, fast recovery: half way back to Rt = 100 Gb/s.
  sc_core::sc_start(
      core::to_sc_time(core::Duration{static_cast<std::int64_t>(450 * kUs - core::now_ps())}));
  EXPECT_EQ(m.a.qp_rate(m.qa), 75e9);
  EXPECT_NEAR(m.busy_between(460 * kUs, 660 * kUs), 0.75, 0.005);
  // After about 20 periods the QP is back at line rate and sends back to back.
  EXPECT_NEAR(m.busy_between(10000 * kUs, 11000 * kUs), 1.0, 0.002);
  EXPECT_EQ(m.a.qp_rate(m.qa), 100e9);
  EXPECT_TRUE(core::stats_registry().contains("nic_a.qp2.dcqcn_rate"));
}

// TCP without ECN sends Not-ECT data, which a congested switch drops rather than marks.
TEST(Nic, TcpWithoutEcnIsNotMarked) {
  RoceConfig rc = tcp_config();
  MarkedPair m(rc);
  start();
  SendRequest r;
  r.length = 4 * kMiB;
  m.marker.mark_remaining = 1000000;
  m.a.post_send(m.qa, r);
  sc_core::sc_start();
  EXPECT_EQ(m.marker.marked, 0u);
  EXPECT_EQ(m.a.port_stats(0).cnps_received->value(), 0u);
}

// With ECN negotiated, a CE mark comes back as a CNP (TCP's ECN echo), which cuts the window
// instead of DCQCN's rate; nothing is lost or resent.
TEST(Nic, TcpWithEcnCutsTheWindowOnMarks) {
  RoceConfig rc = tcp_config();
  rc.window.ecn = true;
  MarkedPair m(rc);
  start();
  SendRequest r;
  r.length = 4 * kMiB;
  m.a.post_send(m.qa, r);
  sc_core::sc_start(core::to_sc_time(core::Duration{100 * 1000000}));  // 100 us: grown past 10
  m.marker.mark_remaining = 3;
  sc_core::sc_start();
  EXPECT_EQ(m.marker.marked, 3u);
  EXPECT_GT(m.a.port_stats(0).cnps_received->value(), 0u);
  EXPECT_TRUE(core::stats_registry().contains("nic_a.qp2.cwnd"));
  EXPECT_EQ(m.a.port_stats(0).retransmitted_packets->value(), 0u);
}

TEST(Nic, CnpsAreRateLimitedPerQp) {
  MarkedPair m;
  start();
  SendRequest r;
  r.length = 64 * kMiB;
  m.a.post_send(m.qa, r);
  sc_core::sc_start(core::to_sc_time(core::Duration{50 * 1000000}));
  m.marker.mark_until = 90 * kUs;  // every data packet for 40 us
  sc_core::sc_start(core::to_sc_time(core::Duration{100 * 1000000}));
  // At most one CNP per 4 us: 11 in 40 us at the very most, whatever the number of marks.
  const auto cnps = m.b.port_stats(0).cnps_sent->value();
  EXPECT_GE(cnps, 5u);
  EXPECT_LE(cnps, 11u);
  EXPECT_GE(m.marker.marked, 2 * cnps);
  EXPECT_EQ(m.a.port_stats(0).cnps_received->value(), cnps);
  // Each CNP at least 4 us after the last cut: one cut per CNP, and the rate fell well below half.
  EXPECT_LT(m.a.qp_rate(m.qa), 25e9);
}

// ---------------------------------------------------------------------------------------------
// PFC

TEST(Nic, PfcPauseStopsDataForItsQuantaAndResumes) {
  Pair p(link_config(), roce_config(), memory_config(false));
  start();
  p.post_write(1, 0, 0, 64 * kMiB);
  sc_core::sc_start(core::to_sc_time(core::Duration{50 * 1000000}));
  auto pause = [&](std::uint16_t quanta) {
    fabric::Packet* f = fabric::packet_pool().acquire_raw();
    f->kind = fabric::FrameKind::kPfcPause;
    f->pfc_enable = 1 << 3;
    f->pfc_quanta[3] = quanta;
    p.a.receive(f, 0);
  };
  const auto frames = [&] { return p.link.stats(0).frames->value(); };
  const auto busy = [&] { return p.link.stats(0).busy_ps->value(); };
  pause(1000);  // 1000 x 512 bit times at 100 Gb/s = 5.12 us
  const auto f0 = frames();
  sc_core::sc_start(core::to_sc_time(core::Duration{5000000}));
  EXPECT_EQ(frames(), f0);  // the frame on the wire finished; nothing new started
  sc_core::sc_start(core::to_sc_time(core::Duration{1000000}));
  EXPECT_GE(frames(), f0 + 2);  // resumed at 5.12 us
  pause(65535);                 // 335.5 us
  const auto f1 = frames();
  const auto b1 = busy();
  sc_core::sc_start(core::to_sc_time(core::Duration{100 * 1000000}));
  EXPECT_EQ(frames(), f1);
  EXPECT_EQ(busy(), b1);
  pause(0);  // XON resumes at once
  sc_core::sc_start(core::to_sc_time(core::Duration{10 * 1000000}));
  EXPECT_NEAR(static_cast<double>(frames() - f1), 10e-6 * 100e9 / 8 / 4178, 2);
  EXPECT_EQ(p.a.port_stats(0).pfc_pauses_received->value(), 2u);
  // ACKs travel in another class and are not paused by a pause of class 3 at B.
  sc_core::sc_start();
  EXPECT_EQ(p.a_sent.entries.size(), 1u);
}

// ---------------------------------------------------------------------------------------------
// Scheduling, coalescing, determinism, tracing

TEST(Nic, AckCoalescingSendsOneAckPerNPackets) {
  RoceConfig rc = roce_config();
  rc.ack_every = 8;
  Pair p(link_config(), rc, memory_config(false));
  start();
  p.post_write(1, 0, 0, 64 * 4096 + 100);  // 65 packets: ACKs after 8, 16, ..., 64 and 65
  sc_core::sc_start();
  ASSERT_EQ(p.a_sent.entries.size(), 1u);
  EXPECT_EQ(p.b.port_stats(0).acks_sent->value(), 9u);
  EXPECT_EQ(p.a.port_stats(0).acks_received->value(), 9u);
}

// Regression: while a retransmission timer was armed far ahead, every nearer timer (here a
// receive completion) left one stale queue callback behind at the far deadline, tens of
// thousands of them in a 128-chip all-reduce.
TEST(Nic, NearTimersLeaveNoStaleCallbacksBehindAFarTimeout) {
  Pair p(link_config(), roce_config(), memory_config(false));
  start();
  p.post_write(1, 0, 0, 16 * kMiB);  // keeps a's timeout armed throughout
  constexpr int kMessages = 600;
  for (int i = 0; i < kMessages; ++i) {
    p.a.post_recv(p.qa, RecvRequest{static_cast<std::uint64_t>(i), 0, 0});
    SendRequest r;
    r.wr_id = static_cast<std::uint64_t>(i);
    r.opcode = SendOpcode::kWriteWithImmediate;
    r.local_address = 0x100000;
    r.remote_address = 0x200000;
    r.length = 64;
    p.b.post_send(p.qb, r);
  }
  sc_core::sc_start();
  ASSERT_EQ(p.a_received.entries.size(), static_cast<std::size_t>(kMessages));
  ASSERT_EQ(p.a_sent.entries.size(), 1u);
  // Frames in flight each way and their arrivals (about 100 here), not a callback per message.
  EXPECT_LT(core::event_queue().peak_pending(), static_cast<std::size_t>(kMessages / 3));
}

TEST(Nic, QpsOnOnePortShareItRoundRobin) {
  fabric::Link link("link", link_config());
  core::MemoryTarget mem_a("mem_a", memory_config(false)), mem_b("mem_b", memory_config(false));
  Nic a("nic_a", 1, roce_config(), false), b("nic_b", 1, roce_config(), false);
  a.memory_socket.bind(mem_a.target_socket);
  b.memory_socket.bind(mem_b.target_socket);
  a.attach(0, link, 0, kAddrA);
  b.attach(0, link, 1, kAddrB);
  CompletionQueue cq_a, cq_b;
  Recorder done;
  done.attach(cq_a);
  std::uint32_t qa[3], qb[3];
  for (int i = 0; i < 3; ++i) {
    qa[i] = a.create_qp(0, cq_a, cq_a);
    qb[i] = b.create_qp(0, cq_b, cq_b);
  }
  for (int i = 0; i < 3; ++i) {
    a.connect_qp(qa[i], kAddrB, qb[i]);
    b.connect_qp(qb[i], kAddrA, qa[i]);
  }
  start();
  for (int i = 0; i < 3; ++i) {
    SendRequest r;
    r.wr_id = static_cast<std::uint64_t>(i);
    r.length = 4 * kMiB;
    a.post_send(qa[i], r);
  }
  sc_core::sc_start();
  ASSERT_EQ(done.entries.size(), 3u);
  const double packet_ps = 334240;
  // Interleaved packet by packet, the three finish within one packet time of each other...
  EXPECT_LE(done.entries[2].at - done.entries[0].at, static_cast<TimePs>(3 * packet_ps));
  // ...and together at line rate, after about 3.5 us of pipelines and cable before the first
  // packet's ACK returns.
  const double expected = 3.0 * 1024 * packet_ps + 3.5e6;
  EXPECT_NEAR(static_cast<double>(done.entries[2].at) / expected, 1.0, 0.001);
}

TEST(Nic, PortsOfOneNicRunIndependently) {
  // A has two ports, to B and to C; a 16 MiB WRITE goes out of each at once.
  fabric::Link ab("ab", link_config()), ac("ac", link_config());
  core::MemoryTarget mem_a("mem_a", memory_config(false)), mem_b("mem_b", memory_config(false)),
      mem_c("mem_c", memory_config(false));
  Nic a("nic_a", 2, roce_config(), false), b("nic_b", 1, roce_config(), false),
      c("nic_c", 1, roce_config(), false);
  a.memory_socket.bind(mem_a.target_socket);
  b.memory_socket.bind(mem_b.target_socket);
  c.memory_socket.bind(mem_c.target_socket);
  a.attach(0, ab, 0, 10);
  a.attach(1, ac, 0, 11);
  b.attach(0, ab, 1, 20);
  c.attach(0, ac, 1, 30);
  CompletionQueue cq_a, cq_b, cq_c;
  Recorder done;
  done.attach(cq_a);
  const std::uint32_t q0 = a.create_qp(0, cq_a, cq_a), q1 = a.create_qp(1, cq_a, cq_a);
  const std::uint32_t qb = b.create_qp(0, cq_b, cq_b), qc = c.create_qp(0, cq_c, cq_c);
  a.connect_qp(q0, 20, qb);
  b.connect_qp(qb, 10, q0);
  a.connect_qp(q1, 30, qc);
  c.connect_qp(qc, 11, q1);
  start();
  SendRequest r;
  r.length = 16 * kMiB;
  a.post_send(q0, r);
  r.wr_id = 1;
  a.post_send(q1, r);
  sc_core::sc_start();
  ASSERT_EQ(done.entries.size(), 2u);
  // Each port at line rate on its own. They share A's memory, so one port's payload reads
  // queue behind the other's: 1.672 ns for 4 KiB at 2.45 TB/s.
  const TimePs read_4k = static_cast<TimePs>(memory_config(false).bandwidth.time_for(4096).ps);
  EXPECT_EQ(done.entries[1].at - done.entries[0].at, read_4k);
  EXPECT_NEAR(static_cast<double>(done.entries[0].at) / (4096 * 334240.0 + 3.5e6), 1.0, 0.001);
  EXPECT_EQ(a.port_stats(0).data_packets_sent->value(), 4096u);
  EXPECT_EQ(a.port_stats(1).data_packets_sent->value(), 4096u);
  EXPECT_EQ(a.address(1), 11u);
}

TEST(Nic, IdenticalSystemsGiveIdenticalResults) {
  fabric::LinkConfig lc = link_config();
  lc.cable.loss_rate = 0.02;
  lc.seed = 5;
  RoceConfig rc = roce_config();
  rc.retransmit_timeout = 8;
  Pair one(lc, rc, memory_config(false), 0, 0, "one_");
  Pair two(lc, rc, memory_config(false), 0, 0, "two_");
  start();
  for (Pair* p : {&one, &two}) {
    p->post_write(1, 0, 0, 8 * kMiB);
    p->post_write(2, 0, 0, kMiB, SendOpcode::kRead);
  }
  sc_core::sc_start();
  ASSERT_EQ(one.a_sent.entries.size(), 2u);
  ASSERT_EQ(two.a_sent.entries.size(), 2u);
  for (int i = 0; i < 2; ++i) EXPECT_EQ(one.a_sent.entries[i].at, two.a_sent.entries[i].at);
  EXPECT_EQ(one.a.port_stats(0).retransmitted_packets->value(),
            two.a.port_stats(0).retransmitted_packets->value());
  EXPECT_GT(one.a.port_stats(0).retransmitted_packets->value(), 0u);
}

TEST(Nic, TracesOneSpanPerMessage) {
  test::TempDir dir;
  const auto path = (dir / "nic.json").string();
  core::trace_writer().open(path);
  Pair p(link_config(), roce_config(), memory_config(false));
  start();
  for (int i = 0; i < 3; ++i) p.post_write(static_cast<std::uint64_t>(i), 0, 0, 100000);
  sc_core::sc_start();
  core::trace_writer().close();
  const auto trace = nlohmann::json::parse(test::read_text(path));
  EXPECT_THAT(test::check_chrome_trace(trace), ::testing::IsEmpty());
  int spans = 0;
  for (const auto& e : trace["traceEvents"]) spans += e["ph"] == "X" && e["name"] == "write";
  EXPECT_EQ(spans, 3);
}

// ---------------------------------------------------------------------------------------------
// (h) Bad verbs calls

template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(no exception)";
}

TEST(Nic, BadVerbsCallsThrowClearMessages) {
  fabric::Link link("link", link_config());
  core::MemoryTarget mem("mem", memory_config(false));
  Nic a("nic_a", 2, roce_config(), false);
  a.memory_socket.bind(mem.target_socket);
  a.attach(0, link, 0, kAddrA);
  CompletionQueue cq;
  EXPECT_THAT(error_of([&] { a.attach(0, link, 1, kAddrA); }), HasSubstr("already attached"));
  EXPECT_THAT(error_of([&] { a.attach(7, link, 1, kAddrA); }), HasSubstr("port 7 does not exist"));
  EXPECT_THAT(error_of([&] { a.create_qp(5, cq, cq); }), HasSubstr("nic_a: create_qp: port 5"));
  EXPECT_THAT(error_of([&] { a.create_qp(1, cq, cq); }), HasSubstr("not attached"));
  const std::uint32_t q = a.create_qp(0, cq, cq);
  SendRequest r;
  r.length = 8;
  EXPECT_THAT(error_of([&] { a.post_send(q, r); }), HasSubstr("elaboration"));
  start();
  EXPECT_THAT(error_of([&] { a.post_send(999, r); }), HasSubstr("QP 999 does not exist"));
  EXPECT_THAT(error_of([&] { a.post_send(q, r); }), HasSubstr("not connected"));
  EXPECT_THAT(error_of([&] { a.connect_qp(q, kAddrB, 1u << 24); }), HasSubstr("24-bit"));
  EXPECT_THAT(error_of([&] { a.connect_qp(q, fabric::kNoEndpoint, 2); }),
              HasSubstr("remote endpoint"));
  EXPECT_THAT(error_of([&] { a.connect_qp(q, kAddrB, 2, 1u << 24); }), HasSubstr("24 bits"));
  a.connect_qp(q, kAddrB, 2);
  EXPECT_THAT(error_of([&] { a.connect_qp(q, kAddrB, 2); }), HasSubstr("already connected"));
  r.length = 0;
  EXPECT_THAT(error_of([&] { a.post_send(q, r); }), HasSubstr("length 0"));
  r.length = kMaxMessageBytes + 1;
  EXPECT_THAT(error_of([&] { a.post_send(q, r); }), HasSubstr("2^31"));
  r.length = 8;
  r.local_address = ~std::uint64_t{0} - 2;
  EXPECT_THAT(error_of([&] { a.post_send(q, r); }), HasSubstr("wraps"));
  EXPECT_THAT(error_of([&] { a.post_recv(12345, RecvRequest{}); }), HasSubstr("QP 12345"));
  EXPECT_THAT(error_of([&] { a.qp_rate(1); }), HasSubstr("QP 1 does not exist"));
}

TEST(Nic, BadConstructionThrows) {
  RoceConfig rc;
  rc.mtu = 1000;
  EXPECT_THAT(error_of([&] { Nic n("bad_mtu", 1, rc); }), HasSubstr("mtu"));
  RoceConfig both;
  both.window_control = true;
  EXPECT_THAT(error_of([&] { Nic n("both", 1, both); }),
              HasSubstr("window_control: a TCP window replaces DCQCN"));
  // Regression: a window below ack_every waited for an ACK that never came, until the QP failed.
  RoceConfig coalesced = tcp_config();
  coalesced.ack_every = 4;
  EXPECT_THAT(error_of([&] { Nic n("coalesced", 1, coalesced); }),
              HasSubstr("window_control: a TCP window needs an ACK per packet"));
  EXPECT_THAT(error_of([&] { Nic n("no_ports", 0, RoceConfig{}); }), HasSubstr("1 to 256 ports"));
}

}  // namespace
}  // namespace podsim::roce
