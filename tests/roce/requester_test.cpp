// The requester's PSN bookkeeping: sending, ACKs, go-back-N, READ responses, timer, retirement.
#include "hw/roce/requester.h"

#include <gtest/gtest.h>

#include <vector>

namespace podsim::roce {
namespace {

constexpr std::uint32_t kMtu = 1024;
constexpr core::TimePs kTimeout = 1000;

SendRequest write(std::uint64_t length, std::uint64_t wr_id = 0) {
  SendRequest r;
  r.wr_id = wr_id;
  r.opcode = SendOpcode::kWrite;
  r.length = length;
  return r;
}

SendRequest read(std::uint64_t length, std::uint64_t wr_id = 0) {
  SendRequest r = write(length, wr_id);
  r.opcode = SendOpcode::kRead;
  return r;
}

// Takes the next packet and puts it on the wire at `now`.
Requester::Tx send_one(Requester& q, core::TimePs now = 0) {
  const Requester::Tx tx = q.next_packet();
  q.on_transmit(tx, now);
  return tx;
}

// Sends everything that may go; returns the PSNs in order.
std::vector<std::uint32_t> send_all(Requester& q, core::TimePs now = 0) {
  std::vector<std::uint32_t> psns;
  while (q.can_send()) psns.push_back(send_one(q, now).psn);
  return psns;
}

TEST(Requester, AssignsPsnsPerPacketAndAcksCompleteInOrder) {
  Requester q(kMtu, 1, kTimeout, 7);
  q.post(write(3000, 1), 0);
  q.post(write(10, 2), 0);
  EXPECT_EQ(q.next_seq(), 4u);
  EXPECT_EQ(send_all(q), (std::vector<std::uint32_t>{0, 1, 2, 3}));
  EXPECT_EQ(q.timer_deadline(), kTimeout);
  EXPECT_EQ(q.head_state(0), Requester::HeadState::kInFlight);
  auto p = q.on_ack(1, 50);
  EXPECT_TRUE(p.advanced);
  EXPECT_FALSE(p.went_back);
  EXPECT_EQ(q.timer_deadline(), 50 + kTimeout);  // restarted on progress
  EXPECT_EQ(q.head_state(50), Requester::HeadState::kInFlight);
  q.on_ack(3, 60);
  EXPECT_EQ(q.timer_deadline(), Requester::kNever);  // nothing in flight
  ASSERT_EQ(q.head_state(60), Requester::HeadState::kDone);
  EXPECT_EQ(q.pop_head().request.wr_id, 1u);
  EXPECT_EQ(q.pop_head().request.wr_id, 2u);
  EXPECT_EQ(q.head_state(60), Requester::HeadState::kNone);
}

TEST(Requester, AckRequestOnLastPacketAndEveryNth) {
  Requester q(kMtu, 3, kTimeout, 7);
  q.post(write(7 * kMtu), 0);
  std::vector<bool> req;
  while (q.can_send()) req.push_back(q.next_packet().ack_request);
  EXPECT_EQ(req, (std::vector<bool>{false, false, true, false, false, true, true}));
}

TEST(Requester, StaleAndForeignAcksAreIgnored) {
  Requester q(kMtu, 1, kTimeout, 7);
  q.post(write(4 * kMtu), 0);
  send_all(q);
  q.on_ack(2, 10);
  EXPECT_FALSE(q.on_ack(1, 20).advanced);  // behind
  EXPECT_FALSE(q.on_ack(9, 20).advanced);  // never sent
  EXPECT_EQ(q.unacked_seq(), 3u);
}

TEST(Requester, NakGoesBackToTheNakedPsn) {
  Requester q(kMtu, 1, kTimeout, 7);
  q.post(write(6 * kMtu), 0);
  send_all(q);
  const auto p = q.on_nak_sequence(2, 100);  // 0 and 1 arrived, 2 did not
  EXPECT_TRUE(p.advanced);
  EXPECT_TRUE(p.went_back);
  EXPECT_EQ(q.unacked_seq(), 2u);
  EXPECT_EQ(q.send_seq(), 2u);
  const auto tx = send_one(q);
  EXPECT_EQ(tx.psn, 2u);
  EXPECT_TRUE(tx.retransmission);
  EXPECT_EQ(send_all(q), (std::vector<std::uint32_t>{3, 4, 5}));
}

TEST(Requester, OnlyPacketsThatLeftCountAsRetransmittedOrInFlight) {
  Requester q(kMtu, 1, kTimeout, 7);
  q.post(write(4 * kMtu), 0);
  send_one(q);
  send_one(q);
  const auto prepared = q.next_packet();  // PSN 2 is read from memory but never leaves
  EXPECT_FALSE(prepared.retransmission);
  EXPECT_FALSE(q.on_ack(2, 5).advanced);  // not in flight
  q.on_nak_sequence(1, 5);
  EXPECT_TRUE(send_one(q).retransmission);   // PSN 1 was on the wire
  EXPECT_FALSE(send_one(q).retransmission);  // PSN 2 never was
  EXPECT_EQ(q.sent_seq(), 3u);
}

TEST(Requester, TimeoutGoesBackAndFailsAfterTheRetryLimit) {
  Requester q(kMtu, 1, kTimeout, 2);
  q.post(write(2 * kMtu), 0);
  send_all(q, 0);
  EXPECT_EQ(q.on_timer(kTimeout - 1), Requester::Timeout::kNotDue);
  core::TimePs t = kTimeout;
  for (int retry = 1; retry <= 2; ++retry) {
    ASSERT_EQ(q.on_timer(t), Requester::Timeout::kRetransmit);
    EXPECT_EQ(q.retries(), retry);
    EXPECT_EQ(q.timer_deadline(), Requester::kNever);  // until the retransmission leaves
    EXPECT_EQ(send_all(q, t + 5), (std::vector<std::uint32_t>{0, 1}));
    EXPECT_EQ(q.timer_deadline(), t + 5 + kTimeout);
    t += 5 + kTimeout;
  }
  EXPECT_EQ(q.on_timer(t), Requester::Timeout::kExceeded);
}

// TCP's RTO backs off: each expiry in a row doubles it, and progress brings it back.
TEST(Requester, BackoffDoublesTheTimeoutAtEachExpiry) {
  Requester q(kMtu, 1, kTimeout, 7, true);
  q.post(write(2 * kMtu), 0);
  send_all(q, 0);
  EXPECT_EQ(q.timer_deadline(), kTimeout);
  core::TimePs t = kTimeout;
  for (int retry = 1; retry <= 3; ++retry) {
    ASSERT_EQ(q.on_timer(t), Requester::Timeout::kRetransmit);
    send_all(q, t);
    EXPECT_EQ(q.timer_deadline(), t + (kTimeout << retry));
    t += kTimeout << retry;
  }
  q.on_ack(0, t);
  EXPECT_EQ(q.timer_deadline(), t + kTimeout);
}

TEST(Requester, ProgressResetsTheRetryCount) {
  Requester q(kMtu, 1, kTimeout, 1);
  q.post(write(2 * kMtu), 0);
  send_all(q);
  ASSERT_EQ(q.on_timer(kTimeout), Requester::Timeout::kRetransmit);
  send_all(q, kTimeout);
  q.on_ack(0, kTimeout + 10);
  EXPECT_EQ(q.retries(), 0);
  EXPECT_EQ(q.on_timer(2 * kTimeout + 10), Requester::Timeout::kRetransmit);
}

TEST(Requester, ZeroTimeoutNeverFires) {
  Requester q(kMtu, 1, 0, 7);
  q.post(write(10), 0);
  send_all(q);
  EXPECT_EQ(q.timer_deadline(), Requester::kNever);
}

TEST(Requester, ReadTakesOnePsnPerResponseAndCompletesWhenDataIsPlaced) {
  Requester q(kMtu, 1, kTimeout, 7);
  q.post(read(3 * kMtu, 7), 0);
  q.post(write(10, 8), 0);
  const auto req = send_one(q);
  EXPECT_EQ(req.psn, 0u);
  EXPECT_FALSE(req.ack_request);
  EXPECT_EQ(send_one(q).psn, 3u);  // the WRITE after the three responses
  for (std::uint32_t i = 0; i < 3; ++i) {
    const auto r = q.on_read_response(i, 10 + i);
    ASSERT_EQ(r.kind, Requester::ReadResponse::Kind::kAccepted);
    EXPECT_EQ(r.index, i);
    EXPECT_EQ(r.last, i == 2);
    if (r.last) q.wqe(r.wqe).data_ready_ps = 50;
  }
  EXPECT_EQ(q.head_state(20), Requester::HeadState::kWaitingForData);
  EXPECT_EQ(q.head_state(50), Requester::HeadState::kDone);
  EXPECT_EQ(q.pop_head().request.wr_id, 7u);
  EXPECT_EQ(q.head_state(50), Requester::HeadState::kInFlight);
}

TEST(Requester, MissingReadResponseReRequestsTheRestOnce) {
  Requester q(kMtu, 1, kTimeout, 7);
  SendRequest r = read(4 * kMtu);
  r.remote_address = 0x1000;
  q.post(r, 0);
  send_one(q);
  EXPECT_EQ(q.on_read_response(0, 1).kind, Requester::ReadResponse::Kind::kAccepted);
  // Response 1 is lost.
  const auto gap = q.on_read_response(2, 2);
  EXPECT_EQ(gap.kind, Requester::ReadResponse::Kind::kOutOfOrder);
  EXPECT_TRUE(gap.progress.went_back);
  const auto again = q.on_read_response(3, 3);
  EXPECT_EQ(again.kind, Requester::ReadResponse::Kind::kOutOfOrder);
  EXPECT_FALSE(again.progress.went_back);  // once per gap
  ASSERT_TRUE(q.can_send());
  const auto tx = send_one(q);
  EXPECT_EQ(tx.psn, 1u);
  EXPECT_EQ(tx.index, 1u);  // the request for responses 1..3
  EXPECT_TRUE(tx.retransmission);
  EXPECT_FALSE(q.can_send());
  for (std::uint32_t i = 1; i < 4; ++i) {
    EXPECT_EQ(q.on_read_response(i, 10).kind, Requester::ReadResponse::Kind::kAccepted);
  }
  EXPECT_EQ(q.on_read_response(3, 11).kind, Requester::ReadResponse::Kind::kDuplicate);
}

TEST(Requester, AckBeyondAnUnansweredReadIsAnImpliedNak) {
  Requester q(kMtu, 1, kTimeout, 7);
  q.post(write(10), 0);
  q.post(read(2 * kMtu), 0);
  q.post(write(10), 0);
  send_all(q);                    // PSNs 0, 1 (READ for 1..2), 3
  const auto p = q.on_ack(3, 5);  // every READ response was lost
  EXPECT_TRUE(p.advanced);        // the first WRITE is acknowledged
  EXPECT_TRUE(p.went_back);
  EXPECT_EQ(q.unacked_seq(), 1u);
  EXPECT_EQ(send_one(q).psn, 1u);
  EXPECT_FALSE(q.on_ack(3, 6).went_back);  // the same gap again: no second go-back
}

TEST(Requester, ReadResponseAcknowledgesEarlierWrites) {
  Requester q(kMtu, 1, kTimeout, 7);
  q.post(write(10), 0);
  q.post(read(10), 0);
  send_all(q);
  const auto r = q.on_read_response(1, 5);  // the WRITE's ACK was lost
  EXPECT_EQ(r.kind, Requester::ReadResponse::Kind::kAccepted);
  EXPECT_EQ(q.unacked_seq(), 2u);
}

TEST(Requester, WindowHoldsFewerThan2To23Psns) {
  Requester q(256, 1, kTimeout, 7);
  q.post(read(std::uint64_t{256} * (Requester::kMaxOutstanding - 1)), 0);
  q.post(read(512), 0);
  ASSERT_TRUE(q.can_send());
  send_one(q);
  EXPECT_FALSE(q.can_send());  // the second READ's two PSNs would not fit
}

TEST(Requester, WrapsAt2To24) {
  Requester q(kMtu, 1, kTimeout, 7);
  q.set_initial_psn(0xFFFFFD);
  q.post(write(6 * kMtu), 0);
  EXPECT_EQ(send_all(q), (std::vector<std::uint32_t>{0xFFFFFD, 0xFFFFFE, 0xFFFFFF, 0, 1, 2}));
  auto p = q.on_nak_sequence(0xFFFFFF, 5);
  EXPECT_EQ(q.unacked_seq(), 2u);
  EXPECT_TRUE(p.went_back);
  EXPECT_EQ(send_all(q), (std::vector<std::uint32_t>{0xFFFFFF, 0, 1, 2}));
  q.on_ack(2, 6);
  EXPECT_EQ(q.unacked_seq(), 6u);
  EXPECT_EQ(q.head_state(6), Requester::HeadState::kDone);
}

}  // namespace
}  // namespace podsim::roce
