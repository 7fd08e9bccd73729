// Frames handed between processes come back field for field, payload included.
#include "sims/parallel/frame_codec.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

namespace podsim::parallel {
namespace {

fabric::Packet sample(std::uint32_t psn, std::size_t payload) {
  fabric::Packet p;
  p.src_ip = fabric::ipv4_of(3);
  p.dst_ip = fabric::ipv4_of(77);
  p.psn = psn;
  p.opcode = fabric::Opcode::kWriteMiddle;
  p.due_ps = 123'456'789;
  p.tail_arrival_ps = 123'456'999;
  p.ecn = fabric::Ecn::kCe;
  p.pfc_quanta[5] = 0xffff;
  p.payload_bytes = static_cast<std::uint32_t>(payload);
  for (std::size_t i = 0; i < payload; ++i) p.payload.push_back(static_cast<std::uint8_t>(i * 7));
  return p;
}

struct Decoded {
  std::uint32_t link;
  int side;
  fabric::Packet* packet;
};

std::vector<Decoded> decode(const std::vector<char>& bytes) {
  std::vector<Decoded> out;
  decode_frames(bytes.data(), bytes.size(),
                [&out](std::uint32_t link, int side, fabric::Packet* p) {
                  out.push_back({link, side, p});
                });
  return out;
}

// Regression: the payload vector may share the fields' tail padding; copying the fields' bytes
// over a packet once overwrote it with the sender's pointers.
TEST(FrameCodec, RoundTripsFieldsAndPayload) {
  std::vector<char> bytes;
  const auto a = sample(41, 4096), b = sample(42, 0);
  encode_frame(bytes, 17, 1, a);
  encode_frame(bytes, 9, 0, b);
  const auto frames = decode(bytes);
  ASSERT_EQ(frames.size(), 2u);
  EXPECT_EQ(frames[0].link, 17u);
  EXPECT_EQ(frames[0].side, 1);
  EXPECT_EQ(frames[1].link, 9u);
  const fabric::Packet& p = *frames[0].packet;
  EXPECT_EQ(p.psn, 41u);
  EXPECT_EQ(p.destination(), 77u);
  EXPECT_EQ(p.due_ps, 123'456'789u);
  EXPECT_EQ(p.tail_arrival_ps, 123'456'999u);
  EXPECT_EQ(p.ecn, fabric::Ecn::kCe);
  EXPECT_EQ(p.pfc_quanta[5], 0xffff);
  EXPECT_EQ(p.payload, a.payload);
  EXPECT_EQ(p.next, nullptr);
  EXPECT_TRUE(frames[1].packet->payload.empty());
  EXPECT_EQ(frames[1].packet->wire_bytes(), b.wire_bytes());
  for (const auto& f : frames) fabric::packet_pool().release(f.packet);
}

TEST(FrameCodec, RefusesAFrameCutShort) {
  std::vector<char> bytes;
  encode_frame(bytes, 1, 0, sample(1, 100));
  bytes.resize(bytes.size() - 1);
  EXPECT_THROW(decode(bytes), std::runtime_error);
}

}  // namespace
}  // namespace podsim::parallel
