// The register block of one DMA engine: Gaudi1's DMA core registers (offsets and fields from
// the generated "podsim/spec/gaudi1.h", written once in hw/chip/spec/gaudi1.yaml) and podsim's
// own extension for what Gaudi1's published interface does not offer, strided transfers of up
// to five dimensions and reductions of two sources. Offsets are relative to the block's base.
// Captures the offsets and fields the engine decodes; ignores Gaudi1's own TSIZE_1..4 and
// STRIDE_1..4 registers (their units are not published; docs/dma.md) and protection registers.
//
// The extension sits at 0x4000-0x407F, above every register Habana's dma0_core_regs.h lists
// (the last, DBG_WR_DESC_ID, is at 0x238; gaudi_blocks.h gives DMA0_CORE_MAX_OFFSET 0x23C0) and
// inside the block's 0x8000-byte section (DMA0_CORE_SECTION), so no Gaudi1 register moves:
//
//   0x4000  EXT_CTRL         op [1:0] (0 copy or memset as COMMIT says, 1 reduce),
//                            dtype [5:4] (0 fp32, 1 bf16, 2 fp16, 3 int32),
//                            reduce_op [9:8] (0 sum, 1 min, 2 max),
//                            dims [14:12] (1-5; used when COMMIT.lin is 0).
//                            One-shot: a COMMIT consumes it and it reads 0 afterwards, so a
//                            Gaudi1 program that never writes it gets Gaudi1's behaviour.
//   0x4004  SRC2_BASE_LO     second source of a reduction, bits 31:0
//   0x4008  SRC2_BASE_HI     bits 63:32
//   0x4010  SIZE_0..SIZE_4   (stride 4) bytes per row; rows per step of the dimension above
//   0x4030  SRC_STRIDE_1..4  (stride 8: LO at +0, HI at +4) source bytes between indices of
//                            dimension d; the second source uses the same strides
//   0x4050  DST_STRIDE_1..4  (stride 8: LO, HI) destination bytes between indices
//   0x4070  DESC_BASE_LO     where descriptors (dma_descriptor.h) live, bits 31:0
//   0x4074  DESC_BASE_HI     bits 63:32
//   0x4078  DESC_POST        a write of n queues the job of the descriptor at
//                            DESC_BASE + n x 128, read and applied to a register file of its
//                            own (the registers above are left as they are)
#pragma once

#include <cstdint>

#include "podsim/spec/gaudi1.h"

namespace podsim::dma::regs {

// The address range the chip maps for one engine's registers ([C2] gaudi_blocks.h,
// DMA0_CORE_SECTION; the instances in gaudi1.yaml are this far apart).
inline constexpr std::uint64_t kBlockSize = 0x8000;
// One past Gaudi1's last DMA core register ([C2] dma0_core_regs.h, DBG_WR_DESC_ID at 0x238).
inline constexpr std::uint64_t kGaudiEnd = 0x23C;

inline constexpr std::uint64_t kExtBase = 0x4000;
inline constexpr std::uint64_t kExtCtrl = 0x4000;
inline constexpr std::uint64_t kExtSrc2BaseLo = 0x4004;
inline constexpr std::uint64_t kExtSrc2BaseHi = 0x4008;
inline constexpr std::uint64_t kExtSize0 = 0x4010;       // + 4 x d, d = 0..4
inline constexpr std::uint64_t kExtSrcStride1 = 0x4030;  // + 8 x (d - 1), d = 1..4; HI at + 4
inline constexpr std::uint64_t kExtDstStride1 = 0x4050;  // + 8 x (d - 1), d = 1..4; HI at + 4
inline constexpr std::uint64_t kExtDescBaseLo = 0x4070;
inline constexpr std::uint64_t kExtDescBaseHi = 0x4074;
inline constexpr std::uint64_t kExtDescPost = 0x4078;
inline constexpr std::uint64_t kExtEnd = 0x4080;

constexpr std::uint64_t ext_size(int d) { return kExtSize0 + 4 * static_cast<std::uint64_t>(d); }
constexpr std::uint64_t ext_src_stride(int d) {
  return kExtSrcStride1 + 8 * static_cast<std::uint64_t>(d - 1);
}
constexpr std::uint64_t ext_dst_stride(int d) {
  return kExtDstStride1 + 8 * static_cast<std::uint64_t>(d - 1);
}

// EXT_CTRL fields.
inline constexpr int kCtrlOpShift = 0;
inline constexpr std::uint32_t kCtrlOpMask = 0x3;
inline constexpr int kCtrlDtypeShift = 4;
inline constexpr std::uint32_t kCtrlDtypeMask = 0x30;
inline constexpr int kCtrlReduceOpShift = 8;
inline constexpr std::uint32_t kCtrlReduceOpMask = 0x300;
inline constexpr int kCtrlDimsShift = 12;
inline constexpr std::uint32_t kCtrlDimsMask = 0x7000;

inline constexpr std::uint32_t kOpCopy = 0;
inline constexpr std::uint32_t kOpReduce = 1;

constexpr std::uint32_t ext_ctrl(std::uint32_t op, std::uint32_t dtype, std::uint32_t reduce_op,
                                 std::uint32_t dims) {
  return ((op << kCtrlOpShift) & kCtrlOpMask) | ((dtype << kCtrlDtypeShift) & kCtrlDtypeMask) |
         ((reduce_op << kCtrlReduceOpShift) & kCtrlReduceOpMask) |
         ((dims << kCtrlDimsShift) & kCtrlDimsMask);
}

}  // namespace podsim::dma::regs
