#include "hw/dma/dma_registers.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

namespace podsim::dma {
namespace {

using ::testing::HasSubstr;

std::uint32_t commit_bits(bool lin, bool mem_set = false, bool wr_comp = false) {
  return podsim_gaudi1_make_dma_commit(wr_comp, 0, 0, lin, mem_set, 0, 0, 0);
}

void write64(DmaRegisters& regs, std::uint64_t lo, std::uint64_t hi, std::uint64_t value) {
  regs.write(lo, static_cast<std::uint32_t>(value));
  regs.write(hi, static_cast<std::uint32_t>(value >> 32));
}

// The registers a LIN_DMA writes (size, source, destination), then COMMIT.
DmaRegisters linear(std::uint64_t src, std::uint64_t dst, std::uint32_t bytes) {
  DmaRegisters regs;
  write64(regs, PODSIM_GAUDI1_DMA_CORE_SRC_BASE_LO_OFFSET,
          PODSIM_GAUDI1_DMA_CORE_SRC_BASE_HI_OFFSET, src);
  regs.write(PODSIM_GAUDI1_DMA_CORE_DST_BASE_LO_OFFSET, static_cast<std::uint32_t>(dst));
  // The context id rides in DST_BASE_HI's top byte and is not part of the address.
  regs.write(PODSIM_GAUDI1_DMA_CORE_DST_BASE_HI_OFFSET,
             podsim_gaudi1_make_dma_dst_base_hi(static_cast<std::uint32_t>(dst >> 32), 0xAB));
  regs.write(PODSIM_GAUDI1_DMA_CORE_DST_TSIZE_0_OFFSET, bytes);
  return regs;
}

DmaJob commit(DmaRegisters& regs, std::uint32_t bits) {
  EXPECT_TRUE(regs.write(PODSIM_GAUDI1_DMA_CORE_COMMIT_OFFSET, bits));
  std::string problem;
  auto job = regs.take_commit(problem);
  EXPECT_TRUE(job.has_value()) << problem;
  return job.value_or(DmaJob{});
}

std::string rejection(DmaRegisters& regs, std::uint32_t bits) {
  regs.write(PODSIM_GAUDI1_DMA_CORE_COMMIT_OFFSET, bits);
  std::string problem;
  EXPECT_FALSE(regs.take_commit(problem).has_value());
  return problem;
}

TEST(DmaRegisters, TheBlockHoldsGaudisRegistersAndTheExtension) {
  EXPECT_TRUE(DmaRegisters::is_register(PODSIM_GAUDI1_DMA_CORE_COMMIT_OFFSET));
  EXPECT_TRUE(DmaRegisters::is_register(PODSIM_GAUDI1_DMA_CORE_STS0_OFFSET));
  EXPECT_TRUE(DmaRegisters::is_register(0x238));  // DBG_WR_DESC_ID, Gaudi1's last
  EXPECT_FALSE(DmaRegisters::is_register(0x23C));
  EXPECT_FALSE(DmaRegisters::is_register(0x7A));  // not aligned
  EXPECT_TRUE(DmaRegisters::is_register(regs::kExtCtrl));
  EXPECT_TRUE(DmaRegisters::is_register(regs::ext_dst_stride(4) + 4));
  EXPECT_FALSE(DmaRegisters::is_register(regs::kExtEnd));
  EXPECT_LT(regs::kExtEnd, regs::kBlockSize);
}

TEST(DmaRegisters, ValuesReadBackAndOnlyCommitStartsATransfer) {
  DmaRegisters regs;
  EXPECT_FALSE(regs.write(PODSIM_GAUDI1_DMA_CORE_SRC_BASE_LO_OFFSET, 0x1234));
  EXPECT_EQ(regs.read(PODSIM_GAUDI1_DMA_CORE_SRC_BASE_LO_OFFSET), 0x1234u);
  EXPECT_FALSE(regs.write(PODSIM_GAUDI1_DMA_CORE_CFG_1_OFFSET, 1));
  EXPECT_EQ(regs.read(PODSIM_GAUDI1_DMA_CORE_CFG_1_OFFSET), 1u);
  // STS0 is status, not storage.
  EXPECT_FALSE(regs.write(PODSIM_GAUDI1_DMA_CORE_STS0_OFFSET, 5));
  EXPECT_EQ(regs.read(PODSIM_GAUDI1_DMA_CORE_STS0_OFFSET), 0u);
}

TEST(DmaRegisters, LinDmaRegistersDecodeIntoALinearCopy) {
  DmaRegisters regs = linear(0x80'1234'5678, 0x7F'F000'0040, 4096);
  const DmaJob job = commit(regs, commit_bits(true));
  EXPECT_EQ(job.kind, DmaKind::kCopy);
  EXPECT_EQ(job.src, 0x80'1234'5678u);
  EXPECT_EQ(job.dst, 0x7F'F000'0040u);
  EXPECT_EQ(job.shape.dims, 1);
  EXPECT_EQ(job.shape.total_bytes(), 4096u);
  EXPECT_FALSE(job.completion.enabled);
}

TEST(DmaRegisters, MemSetTakesTheSourceAsTheFillValue) {
  DmaRegisters regs = linear(0x0123'4567'89AB'CDEF, 0x1000, 1001);
  const DmaJob job = commit(regs, commit_bits(true, true));
  EXPECT_EQ(job.kind, DmaKind::kMemset);
  EXPECT_EQ(job.src, 0x0123'4567'89AB'CDEFu);
}

TEST(DmaRegisters, WrCompEnAddsTheCompletionWrite) {
  DmaRegisters regs = linear(0, 0x1000, 64);
  write64(regs, PODSIM_GAUDI1_DMA_CORE_WR_COMP_ADDR_LO_OFFSET,
          PODSIM_GAUDI1_DMA_CORE_WR_COMP_ADDR_HI_OFFSET, 0x7F'FC4F'2000);
  regs.write(PODSIM_GAUDI1_DMA_CORE_WR_COMP_WDATA_OFFSET, 0x8000'0001);
  const DmaJob job = commit(regs, commit_bits(true, false, true));
  EXPECT_TRUE(job.completion.enabled);
  EXPECT_EQ(job.completion.address, 0x7F'FC4F'2000u);
  EXPECT_EQ(job.completion.value, 0x8000'0001u);
}

TEST(DmaRegisters, ExtensionDescribesAStridedReductionOnce) {
  DmaRegisters regs = linear(0x1000, 0x9000, 0);
  write64(regs, regs::kExtSrc2BaseLo, regs::kExtSrc2BaseHi, 0x5'0000'0000);
  regs.write(regs::ext_size(0), 32);
  regs.write(regs::ext_size(1), 4);
  regs.write(regs::ext_size(2), 3);
  write64(regs, regs::ext_src_stride(1), regs::ext_src_stride(1) + 4, 64);
  write64(regs, regs::ext_src_stride(2), regs::ext_src_stride(2) + 4, 0x1'0000'0000);
  write64(regs, regs::ext_dst_stride(1), regs::ext_dst_stride(1) + 4, 32);
  write64(regs, regs::ext_dst_stride(2), regs::ext_dst_stride(2) + 4, 128);
  regs.write(regs::kExtCtrl, regs::ext_ctrl(regs::kOpReduce, 1 /* bf16 */, 2 /* max */, 3));
  const DmaJob job = commit(regs, commit_bits(false));
  EXPECT_EQ(job.kind, DmaKind::kReduce);
  EXPECT_EQ(job.type, core::DataType::kBf16);
  EXPECT_EQ(job.op, core::ReduceOp::kMax);
  EXPECT_EQ(job.src2, 0x5'0000'0000u);
  EXPECT_EQ(job.shape.dims, 3);
  EXPECT_EQ(job.shape.size[0], 32u);
  EXPECT_EQ(job.shape.size[2], 3u);
  EXPECT_EQ(job.shape.src_stride[2], 0x1'0000'0000u);
  EXPECT_EQ(job.shape.dst_stride[1], 32u);
  // EXT_CTRL is one-shot: the next COMMIT is Gaudi1's plain transfer again.
  EXPECT_EQ(regs.read(regs::kExtCtrl), 0u);
  regs.write(PODSIM_GAUDI1_DMA_CORE_DST_TSIZE_0_OFFSET, 256);
  const DmaJob next = commit(regs, commit_bits(true));
  EXPECT_EQ(next.kind, DmaKind::kCopy);
  EXPECT_EQ(next.shape.total_bytes(), 256u);
}

TEST(DmaRegisters, WhatIsNotModelledIsRejectedWithTheReason) {
  DmaRegisters regs = linear(0, 0x1000, 64);
  EXPECT_THAT(rejection(regs, podsim_gaudi1_make_dma_commit(0, 1, 0, 1, 0, 0, 0, 0)),
              HasSubstr("transpose"));
  EXPECT_THAT(rejection(regs, podsim_gaudi1_make_dma_commit(0, 0, 0, 1, 0, 1, 0, 0)),
              HasSubstr("compression"));
  EXPECT_THAT(rejection(regs, commit_bits(false)), HasSubstr("EXT_CTRL.dims"));
  regs.write(regs::kExtCtrl, regs::ext_ctrl(regs::kOpReduce, 0, 3, 0));
  EXPECT_THAT(rejection(regs, commit_bits(true)), HasSubstr("no such operation"));
  regs.write(regs::kExtCtrl, regs::ext_ctrl(2, 0, 0, 0));
  EXPECT_THAT(rejection(regs, commit_bits(true)), HasSubstr("no such operation"));
  regs.write(regs::kExtCtrl, regs::ext_ctrl(regs::kOpReduce, 0, 0, 0));
  EXPECT_THAT(rejection(regs, commit_bits(true, true)), HasSubstr("no such operation"));
  regs.write(PODSIM_GAUDI1_DMA_CORE_DST_TSIZE_0_OFFSET, 6);
  regs.write(regs::kExtCtrl, regs::ext_ctrl(regs::kOpReduce, 3 /* int32 */, 0, 0));
  EXPECT_THAT(rejection(regs, commit_bits(true)), HasSubstr("whole 4-byte elements"));
  regs.write(PODSIM_GAUDI1_DMA_CORE_DST_TSIZE_0_OFFSET, 0);
  EXPECT_THAT(rejection(regs, commit_bits(true)), HasSubstr("size[0]"));
}

}  // namespace
}  // namespace podsim::dma
