#include "hw/fabric/packet.h"

#include <gtest/gtest.h>

#include "hw/fabric/wire_format.h"

namespace podsim::fabric {
namespace {

Packet data(std::uint32_t payload) {
  Packet p;
  p.opcode = Opcode::kWriteMiddle;
  p.payload_bytes = payload;
  return p;
}

TEST(PacketWireSize, MiddleWritePacketCarries82BytesOfOverhead) {
  EXPECT_EQ(data(4096).wire_bytes(), 4178u);  // [N1]
  EXPECT_EQ(data(4096).wire_bytes() - 4096, WireFormat{}.overhead_bytes());
}

TEST(PacketWireSize, FirstWritePacketAddsReth) {
  Packet p = data(4096);
  p.opcode = Opcode::kWriteFirst;
  p.has_reth = true;
  EXPECT_EQ(p.wire_bytes(), 4178u + 16);
}

TEST(PacketWireSize, AckIs66BytesFramed86OnTheWire) {
  Packet ack;
  ack.opcode = Opcode::kAcknowledge;
  ack.has_aeth = true;
  EXPECT_EQ(ack.frame_bytes(), 66u);
  EXPECT_EQ(ack.wire_bytes(), 86u);
}

TEST(PacketWireSize, CnpIs78Bytes) {
  Packet cnp;
  cnp.opcode = Opcode::kCnp;
  EXPECT_EQ(cnp.frame_bytes(), 78u);
}

TEST(PacketWireSize, VlanIpv6AndImmediateAddTheirHeaders) {
  Packet p = data(1024);
  const auto base = p.wire_bytes();
  p.vlan = true;
  EXPECT_EQ(p.wire_bytes(), base + 4);
  p.ipv6 = true;
  EXPECT_EQ(p.wire_bytes(), base + 24);
  p.has_immediate = true;
  EXPECT_EQ(p.wire_bytes(), base + 28);
}

TEST(PacketWireSize, SmallFramesArePaddedToTheEthernetMinimum) {
  Packet pfc;
  pfc.kind = FrameKind::kPfcPause;
  EXPECT_EQ(pfc.frame_bytes(), 64u);
  EXPECT_EQ(pfc.wire_bytes(), 84u);
  EXPECT_EQ(data(0).frame_bytes(), 64u);  // 62 bytes of headers padded to 64
}

TEST(PacketAddresses, EndpointIdsRoundTripThroughIpAndMac) {
  EXPECT_EQ(endpoint_of_ipv4(ipv4_of(1234)), 1234u);
  EXPECT_EQ(ipv4_of(0), 0x0a000000u);
  EXPECT_EQ(mac_of(5) >> 40, 0x02u);
}

TEST(PacketPoolTest, ResetKeepsPayloadCapacity) {
  PacketPool pool(4);
  Packet* p = pool.acquire_raw();
  p->payload.resize(4096);
  p->psn = 7;
  const auto* buffer = p->payload.data();
  pool.release(p);
  Packet* again = pool.acquire_raw();
  EXPECT_EQ(again, p);
  EXPECT_EQ(again->psn, 0u);
  EXPECT_TRUE(again->payload.empty());
  EXPECT_GE(again->payload.capacity(), 4096u);
  EXPECT_EQ(again->payload.data(), buffer);
  pool.release(again);
}

}  // namespace
}  // namespace podsim::fabric
