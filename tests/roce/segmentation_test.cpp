// Segmentation of messages into packets with the right opcodes and headers.
#include "hw/roce/segmentation.h"

#include <gtest/gtest.h>

namespace podsim::roce {
namespace {

using fabric::Opcode;

TEST(Segmentation, PacketCountRoundsUp) {
  EXPECT_EQ(packet_count(1, 4096), 1u);
  EXPECT_EQ(packet_count(4096, 4096), 1u);
  EXPECT_EQ(packet_count(4097, 4096), 2u);
  EXPECT_EQ(packet_count(std::uint64_t{1} << 30, 4096), 262144u);
  EXPECT_EQ(packet_count(1000, 256), 4u);
}

TEST(Segmentation, WriteHasRethOnFirstAndImmediateOnLast) {
  const std::uint64_t len = 2 * 1024 + 100;
  const Segment first = request_segment(SendOpcode::kWriteWithImmediate, len, 1024, 0);
  EXPECT_EQ(first.opcode, Opcode::kWriteFirst);
  EXPECT_TRUE(first.reth);
  EXPECT_FALSE(first.immediate);
  EXPECT_EQ(first.payload, 1024u);
  const Segment middle = request_segment(SendOpcode::kWriteWithImmediate, len, 1024, 1);
  EXPECT_EQ(middle.opcode, Opcode::kWriteMiddle);
  EXPECT_FALSE(middle.reth);
  EXPECT_EQ(middle.offset, 1024u);
  const Segment last = request_segment(SendOpcode::kWriteWithImmediate, len, 1024, 2);
  EXPECT_EQ(last.opcode, Opcode::kWriteLastImm);
  EXPECT_TRUE(last.immediate);
  EXPECT_TRUE(last.last);
  EXPECT_FALSE(last.reth);
  EXPECT_EQ(last.payload, 100u);
  EXPECT_EQ(request_segment(SendOpcode::kWrite, len, 1024, 2).opcode, Opcode::kWriteLast);
}

TEST(Segmentation, OnlyPackets) {
  const Segment w = request_segment(SendOpcode::kWrite, 8, 4096, 0);
  EXPECT_EQ(w.opcode, Opcode::kWriteOnly);
  EXPECT_TRUE(w.reth);
  EXPECT_TRUE(w.last);
  EXPECT_EQ(request_segment(SendOpcode::kWriteWithImmediate, 8, 4096, 0).opcode,
            Opcode::kWriteOnlyImm);
  const Segment s = request_segment(SendOpcode::kSend, 8, 4096, 0);
  EXPECT_EQ(s.opcode, Opcode::kSendOnly);
  EXPECT_FALSE(s.reth);
  EXPECT_EQ(request_segment(SendOpcode::kSendWithImmediate, 8, 4096, 0).opcode,
            Opcode::kSendOnlyImm);
}

TEST(Segmentation, SendNeverCarriesReth) {
  for (std::uint32_t i = 0; i < 3; ++i) {
    EXPECT_FALSE(request_segment(SendOpcode::kSend, 3000, 1024, i).reth);
  }
  EXPECT_EQ(request_segment(SendOpcode::kSend, 3000, 1024, 0).opcode, Opcode::kSendFirst);
  EXPECT_EQ(request_segment(SendOpcode::kSend, 3000, 1024, 1).opcode, Opcode::kSendMiddle);
  EXPECT_EQ(request_segment(SendOpcode::kSendWithImmediate, 3000, 1024, 2).opcode,
            Opcode::kSendLastImm);
}

TEST(Segmentation, ReadRequestAsksForTheRestOfTheMessage) {
  const Segment whole = request_segment(SendOpcode::kRead, 10000, 4096, 0);
  EXPECT_EQ(whole.opcode, Opcode::kReadRequest);
  EXPECT_TRUE(whole.reth);
  EXPECT_EQ(whole.payload, 0u);
  EXPECT_EQ(whole.read_length, 10000u);
  const Segment rest = request_segment(SendOpcode::kRead, 10000, 4096, 2);
  EXPECT_EQ(rest.offset, 8192u);
  EXPECT_EQ(rest.read_length, 10000u - 8192u);
}

TEST(Segmentation, ReadResponsesCarryAethAtTheEnds) {
  const Segment first = read_response_segment(10000, 4096, 0);
  EXPECT_EQ(first.opcode, Opcode::kReadResponseFirst);
  EXPECT_TRUE(first.aeth);
  const Segment middle = read_response_segment(10000, 4096, 1);
  EXPECT_EQ(middle.opcode, Opcode::kReadResponseMiddle);
  EXPECT_FALSE(middle.aeth);
  const Segment last = read_response_segment(10000, 4096, 2);
  EXPECT_EQ(last.opcode, Opcode::kReadResponseLast);
  EXPECT_TRUE(last.aeth);
  EXPECT_EQ(last.payload, 10000u - 8192u);
  EXPECT_EQ(read_response_segment(5, 4096, 0).opcode, Opcode::kReadResponseOnly);
}

TEST(Segmentation, OpcodeClasses) {
  EXPECT_EQ(classify(Opcode::kSendLastImm), OpcodeClass::kSend);
  EXPECT_EQ(classify(Opcode::kWriteOnly), OpcodeClass::kWrite);
  EXPECT_EQ(classify(Opcode::kReadRequest), OpcodeClass::kReadRequest);
  EXPECT_EQ(classify(Opcode::kReadResponseMiddle), OpcodeClass::kReadResponse);
  EXPECT_EQ(classify(Opcode::kAcknowledge), OpcodeClass::kAck);
  EXPECT_EQ(classify(Opcode::kCnp), OpcodeClass::kCnp);
  EXPECT_TRUE(starts_message(Opcode::kWriteFirst));
  EXPECT_FALSE(starts_message(Opcode::kWriteMiddle));
  EXPECT_TRUE(ends_message(Opcode::kSendOnlyImm));
  EXPECT_FALSE(ends_message(Opcode::kSendFirst));
  EXPECT_TRUE(carries_immediate(Opcode::kWriteLastImm));
  EXPECT_FALSE(carries_immediate(Opcode::kWriteLast));
}

TEST(Segmentation, FullPacketIs4178WireBytes) {
  // [N1]: 82 bytes of overhead around a 4096-byte payload; RETH adds 16 on the first.
  fabric::Packet p;
  p.opcode = Opcode::kWriteMiddle;
  p.payload_bytes = 4096;
  EXPECT_EQ(p.wire_bytes(), 4178u);
  p.has_reth = true;
  EXPECT_EQ(p.wire_bytes(), 4194u);
}

}  // namespace
}  // namespace podsim::roce
