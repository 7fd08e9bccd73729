#include "hw/chip/spec/packet_codec.h"

#include <gtest/gtest.h>

#include <cstring>
#include <stdexcept>

#include "podsim/spec/gaudi1.h"

namespace podsim::chip::spec {
namespace {

std::vector<std::uint8_t> bytes_of(const std::vector<std::uint32_t>& words) {
  std::vector<std::uint8_t> out;
  for (std::uint32_t w : words) {
    for (int i = 0; i < 4; ++i) out.push_back(static_cast<std::uint8_t>(w >> (8 * i)));
  }
  return out;
}

// A value that differs per field and fills its width with a mix of ones and zeros.
std::uint64_t pattern(std::size_t field, unsigned width) {
  const std::uint64_t mask = width >= 64 ? ~0ull : (1ull << width) - 1;
  return (0xA5C3F00F5A3C0FF0ull ^ (0x9E3779B97F4A7C15ull * (field + 1))) & mask;
}

TEST(PacketCodec, SpecDefinesGaudi1sFourteenPackets) {
  EXPECT_EQ(std::size(tables::kPackets), 14u);
  EXPECT_EQ(find_packet(std::uint8_t{0x0}), nullptr);
  EXPECT_EQ(find_packet(std::uint8_t{0xE}), nullptr);
  EXPECT_STREQ(find_packet(std::uint8_t{0xF})->name, "LOAD_AND_EXE");
  EXPECT_EQ(find_packet("LIN_DMA")->size, 24u);
}

TEST(PacketCodec, EveryPacketRoundTrips) {
  const PacketCodec codec;
  for (const PacketSpec& spec : tables::kPackets) {
    SCOPED_TRACE(spec.name);
    Packet packet(spec);
    for (std::size_t i = kOpcodeField + 1; i < spec.field_count; ++i) {
      if (static_cast<int>(i) != spec.tail_field) packet.set(i, pattern(i, spec.fields[i].width));
    }
    if (spec.tail_field >= 0) packet.set_tail({0x1122334455667788ull, 0, ~0ull});
    const std::vector<std::uint8_t> bytes = codec.encode({packet});
    ASSERT_EQ(bytes.size(), packet.size_bytes());
    const DecodeResult decoded = codec.decode(bytes);
    ASSERT_TRUE(decoded.ok()) << decoded.error->message();
    ASSERT_EQ(decoded.packets.size(), 1u);
    EXPECT_EQ(decoded.packets[0].packet, packet);
  }
}

TEST(PacketCodec, BufferOfSeveralPacketsDecodesWithOffsets) {
  const PacketCodec codec;
  Packet bulk("WREG_BULK");
  bulk.set("reg_offset", 0x40).set_tail({1, 2});
  const std::vector<Packet> packets{Packet("NOP"), bulk, Packet("MSG_LONG").set("value", 7),
                                    Packet("STOP")};
  const DecodeResult decoded = codec.decode(codec.encode(packets));
  ASSERT_TRUE(decoded.ok());
  ASSERT_EQ(decoded.packets.size(), 4u);
  EXPECT_EQ(decoded.packets[1].offset, 8u);
  EXPECT_EQ(decoded.packets[2].offset, 8u + 8 + 16);
  EXPECT_EQ(decoded.packets[3].offset, 8u + 8 + 16 + 16);
  EXPECT_EQ(decoded.packets[1].packet.tail(), (std::vector<std::uint64_t>{1, 2}));
  EXPECT_EQ(decoded.packets[2].packet.get("value"), 7u);
}

// The words below are assembled by hand from the published bit fields [C2] gaudi_packets.h:
// the control word holds opcode at 24..28, eng/reg/msg barrier at 29/30/31.
TEST(PacketCodec, MsgShortSignallingSob144MatchesHandAssembledWords) {
  // As user-space tests signal a SOB [C8]: base 1 (the SOBs), offset sob*4, mode 1 = add.
  Packet p("MSG_SHORT");
  p.set("value", (1u << 31) | 1u).set("base", 1).set("msg_addr_offset", 144 * 4);
  p.barriers(false, true, true);
  const std::vector<std::uint8_t> expected = bytes_of({0x80000001u, 0xC4400240u});
  EXPECT_EQ(PacketCodec().encode({p}), expected);
}

TEST(PacketCodec, MonitorArmThroughMsgShortMatchesHandAssembledWords) {
  // Base 0 points at MON_PAY_ADDRL_0; the arm register of monitor 72 is 0x1920 above it.
  // Value: group 144/8 = 18, mask ~(1<<0), ">=" (0), value 1 at bit 17.
  Packet p("MSG_SHORT");
  p.set("value", 0x0002FE12u).set("base", 0).set("msg_addr_offset", 0x1920);
  p.barriers(false, true, true);
  EXPECT_EQ(PacketCodec().encode({p}), bytes_of({0x0002FE12u, 0xC4001920u}));
}

TEST(PacketCodec, FenceMatchesHandAssembledWords) {
  Packet p("FENCE");
  p.set("dec_val", 1).set("target_val", 1).set("id", 0).barriers(false, true, true);
  EXPECT_EQ(PacketCodec().encode({p}), bytes_of({0x00010001u, 0xC8000000u}));
}

TEST(PacketCodec, LinDmaMatchesHandAssembledWords) {
  Packet p("LIN_DMA");
  p.set("tsize", 0x1000).set("lin", 1).set("src_addr", 0x7FF0000000ull);
  p.set("dst_addr", 0x123456780ull).set("context_id_high", 0xAB).set("context_id_low", 0xCD);
  p.barriers(false, true, true);
  EXPECT_EQ(PacketCodec().encode({p}),
            bytes_of({0x00001000u, 0xC9CD0008u, 0xF0000000u, 0x7Fu, 0x23456780u, 0xAB000001u}));
}

TEST(PacketCodec, MsgLongToADoorbellMatchesHandAssembledWords) {
  Packet p("MSG_LONG");
  p.set("value", 0xDEADBEEF).set("addr", 0x7FFC5080A0ull).barriers(true, true, false);
  EXPECT_EQ(PacketCodec().encode({p}), bytes_of({0xDEADBEEFu, 0x63000000u, 0xFC5080A0u, 0x7Fu}));
}

TEST(PacketCodec, GeneratedCEncoderAgreesWithTheCodec) {
  std::uint32_t words[PODSIM_GAUDI1_PACKET_LIN_DMA_SIZE / 4];
  const unsigned size = podsim_gaudi1_encode_lin_dma(
      words, 0x1000, 0, 0, 0, 1, 0, 0, 0, 0xCD, 0x7FF0000000ull, 0x123456780ull, 0xAB, 0, 1, 1);
  ASSERT_EQ(size, 24u);
  Packet p("LIN_DMA");
  p.set("tsize", 0x1000).set("lin", 1).set("context_id_low", 0xCD).set("src_addr", 0x7FF0000000);
  p.set("dst_addr", 0x123456780ull).set("context_id_high", 0xAB).barriers(false, true, true);
  std::vector<std::uint8_t> c_bytes(size);
  std::memcpy(c_bytes.data(), words, size);  // the host is little-endian, like the device
  EXPECT_EQ(PacketCodec().encode({p}), c_bytes);
}

TEST(PacketCodec, UndefinedOpcodeIsReportedWithItsOffset) {
  // A NOP, then a packet whose opcode field holds 0xE, which Gaudi1 does not define.
  const std::vector<std::uint8_t> bytes = bytes_of({0, 0x4A000000u, 0, 0x4E000000u});
  const DecodeResult decoded = PacketCodec().decode(bytes);
  ASSERT_FALSE(decoded.ok());
  EXPECT_EQ(decoded.packets.size(), 1u);
  EXPECT_EQ(decoded.error->kind, DecodeError::Kind::kUndefinedOpcode);
  EXPECT_EQ(decoded.error->offset, 8u);
  EXPECT_EQ(decoded.error->opcode, 0xE);
  EXPECT_EQ(decoded.error->message(), "offset 8: undefined packet opcode 0xe");
}

TEST(PacketCodec, TruncatedPacketIsReportedWithItsOffset) {
  const PacketCodec codec;
  std::vector<std::uint8_t> bytes = codec.encode({Packet("NOP"), Packet("MSG_LONG")});
  bytes.resize(bytes.size() - 4);
  const DecodeResult decoded = codec.decode(bytes);
  ASSERT_FALSE(decoded.ok());
  EXPECT_EQ(decoded.error->kind, DecodeError::Kind::kTruncated);
  EXPECT_EQ(decoded.error->offset, 8u);
  EXPECT_EQ(decoded.error->needed, 16u);
  EXPECT_EQ(decoded.error->available, 12u);
  EXPECT_EQ(decoded.error->message(), "offset 8: truncated packet: 16 bytes needed, 12 left");
}

TEST(PacketCodec, TruncatedHeaderAndTailAreReported) {
  const PacketCodec codec;
  const DecodeResult half = codec.decode(bytes_of({0}));
  ASSERT_FALSE(half.ok());
  EXPECT_EQ(half.error->offset, 0u);
  EXPECT_EQ(half.error->available, 4u);

  Packet bulk("WREG_BULK");
  bulk.set_tail({1, 2, 3});
  std::vector<std::uint8_t> bytes = codec.encode({bulk});
  bytes.resize(bytes.size() - 8);
  const DecodeResult decoded = codec.decode(bytes);
  ASSERT_FALSE(decoded.ok());
  EXPECT_EQ(decoded.error->needed, 32u);
  EXPECT_EQ(decoded.error->available, 24u);
}

TEST(PacketCodec, EmptyBufferHoldsNoPackets) {
  const DecodeResult decoded = PacketCodec().decode(std::vector<std::uint8_t>{});
  EXPECT_TRUE(decoded.ok());
  EXPECT_TRUE(decoded.packets.empty());
}

TEST(PacketCodec, BadFieldsAreRejected) {
  Packet fence("FENCE");
  EXPECT_THROW(fence.set("addr", 1), std::invalid_argument);
  EXPECT_THROW(fence.set("id", 4), std::invalid_argument);  // two bits
  EXPECT_THROW(fence.set("opcode", 1), std::invalid_argument);
  EXPECT_THROW(Packet("BARRIER"), std::invalid_argument);
  EXPECT_THROW(Packet(std::uint8_t{0xE}), std::invalid_argument);
  Packet bulk("WREG_BULK");
  bulk.set("size64", 2);
  EXPECT_THROW(PacketCodec().encode({bulk}), std::invalid_argument);
}

}  // namespace
}  // namespace podsim::chip::spec
