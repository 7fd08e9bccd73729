#include "hw/mme/mme_registers.h"

#include <fmt/format.h>

#include <stdexcept>

#include "podsim/spec/gaudi1.h"

namespace podsim::mme {
namespace {

std::uint32_t lo(std::uint64_t v) { return static_cast<std::uint32_t>(v); }
std::uint32_t hi(std::uint64_t v) { return static_cast<std::uint32_t>(v >> 32); }

std::uint32_t narrow(std::uint64_t v, const char* what) {
  if (v > 0xFFFFFFFFu)
    throw std::invalid_argument(fmt::format("{} of {} does not fit its 32-bit register", what, v));
  return static_cast<std::uint32_t>(v);
}

std::uint32_t pair(std::uint32_t h, std::uint32_t w, const char* what) {
  if (h > 0xFFFF || w > 0xFFFF)
    throw std::invalid_argument(
        fmt::format("convolution {} {}x{} does not fit 16 bits", what, h, w));
  return podsim_gaudi1_make_mme_pair(h, w);
}

std::uint32_t field(std::uint32_t v, std::uint32_t mask, std::uint32_t shift) {
  return (v & mask) >> shift;
}

}  // namespace

// The descriptor from A_BASE_LO to N_COUNT is one run (EXECUTE and STATUS inside it are written
// as 0 and ignored), so a QMAN writes it with a single WREG_BULK.
std::vector<core::RegisterRun> register_image(const OperationRegisters& r) {
  static_assert((PODSIM_GAUDI1_MME_DESC_N_COUNT_OFFSET + 4) / 4 % 2 == 0, "WREG_BULK writes pairs");
  const MmeOperation& op = r.op;
  const GemmDesc& g = op.gemm;
  const ConvDesc& c = op.conv;
  std::vector<std::uint32_t> v((PODSIM_GAUDI1_MME_DESC_N_COUNT_OFFSET + 4) / 4, 0);
  const auto set = [&v](std::uint32_t offset, std::uint32_t value) { v[offset / 4] = value; };
  set(PODSIM_GAUDI1_MME_DESC_A_BASE_LO_OFFSET, lo(op.a));
  set(PODSIM_GAUDI1_MME_DESC_A_BASE_HI_OFFSET, hi(op.a));
  set(PODSIM_GAUDI1_MME_DESC_B_BASE_LO_OFFSET, lo(op.b));
  set(PODSIM_GAUDI1_MME_DESC_B_BASE_HI_OFFSET, hi(op.b));
  set(PODSIM_GAUDI1_MME_DESC_C_BASE_LO_OFFSET, lo(op.c));
  set(PODSIM_GAUDI1_MME_DESC_C_BASE_HI_OFFSET, hi(op.c));
  set(PODSIM_GAUDI1_MME_DESC_OPERATION_OFFSET,
      podsim_gaudi1_make_mme_operation(static_cast<std::uint32_t>(op.op), g.trans_a, g.trans_b,
                                       static_cast<std::uint32_t>(op.in),
                                       static_cast<std::uint32_t>(op.out), op.accumulate, op.tall,
                                       op.wide));
  set(PODSIM_GAUDI1_MME_DESC_M_OFFSET, g.m);
  set(PODSIM_GAUDI1_MME_DESC_N_OFFSET, g.n);
  set(PODSIM_GAUDI1_MME_DESC_K_OFFSET, g.k);
  set(PODSIM_GAUDI1_MME_DESC_BATCH_OFFSET, g.batch);
  set(PODSIM_GAUDI1_MME_DESC_LDA_OFFSET, g.lda);
  set(PODSIM_GAUDI1_MME_DESC_LDB_OFFSET, g.ldb);
  set(PODSIM_GAUDI1_MME_DESC_LDC_OFFSET, g.ldc);
  set(PODSIM_GAUDI1_MME_DESC_STRIDE_A_OFFSET, narrow(g.stride_a, "stride_a"));
  set(PODSIM_GAUDI1_MME_DESC_STRIDE_B_OFFSET, narrow(g.stride_b, "stride_b"));
  set(PODSIM_GAUDI1_MME_DESC_STRIDE_C_OFFSET, narrow(g.stride_c, "stride_c"));
  set(PODSIM_GAUDI1_MME_DESC_CONV_N_OFFSET, c.n);
  set(PODSIM_GAUDI1_MME_DESC_CONV_C_OFFSET, c.c);
  set(PODSIM_GAUDI1_MME_DESC_CONV_H_OFFSET, c.h);
  set(PODSIM_GAUDI1_MME_DESC_CONV_W_OFFSET, c.w);
  set(PODSIM_GAUDI1_MME_DESC_CONV_K_OFFSET, c.k);
  set(PODSIM_GAUDI1_MME_DESC_CONV_R_OFFSET, c.r);
  set(PODSIM_GAUDI1_MME_DESC_CONV_S_OFFSET, c.s);
  set(PODSIM_GAUDI1_MME_DESC_CONV_STRIDE_OFFSET, pair(c.stride_h, c.stride_w, "stride"));
  set(PODSIM_GAUDI1_MME_DESC_CONV_PAD_OFFSET, pair(c.pad_h, c.pad_w, "padding"));
  set(PODSIM_GAUDI1_MME_DESC_CONV_DILATION_OFFSET, pair(c.dil_h, c.dil_w, "dilation"));
  set(PODSIM_GAUDI1_MME_DESC_SYNC_OBJECT_ADDR_LO_OFFSET, lo(r.sync_object));
  set(PODSIM_GAUDI1_MME_DESC_SYNC_OBJECT_ADDR_HI_OFFSET, hi(r.sync_object));
  set(PODSIM_GAUDI1_MME_DESC_SYNC_OBJECT_MESSAGE_OFFSET, r.sync_message);
  set(PODSIM_GAUDI1_MME_DESC_M_START_OFFSET, op.m_start);
  set(PODSIM_GAUDI1_MME_DESC_M_COUNT_OFFSET, op.m_count);
  set(PODSIM_GAUDI1_MME_DESC_N_START_OFFSET, op.n_start);
  set(PODSIM_GAUDI1_MME_DESC_N_COUNT_OFFSET, op.n_count);
  return {core::RegisterRun{PODSIM_GAUDI1_MME_DESC_A_BASE_LO_OFFSET, std::move(v)}};
}

OperationRegisters latch(const std::vector<std::uint32_t>& words) {
  const auto reg = [&words](std::uint32_t offset) { return words.at(offset / 4); };
  const auto reg64 = [&](std::uint32_t low, std::uint32_t high) {
    return static_cast<std::uint64_t>(reg(high)) << 32 | reg(low);
  };
  OperationRegisters r;
  MmeOperation& op = r.op;
  const std::uint32_t o = reg(PODSIM_GAUDI1_MME_DESC_OPERATION_OFFSET);
  op.op = static_cast<MmeOp>(
      field(o, PODSIM_GAUDI1_MME_OPERATION_OP_MASK, PODSIM_GAUDI1_MME_OPERATION_OP_SHIFT));
  op.gemm.trans_a =
      field(o, PODSIM_GAUDI1_MME_OPERATION_TRANS_A_MASK, PODSIM_GAUDI1_MME_OPERATION_TRANS_A_SHIFT);
  op.gemm.trans_b =
      field(o, PODSIM_GAUDI1_MME_OPERATION_TRANS_B_MASK, PODSIM_GAUDI1_MME_OPERATION_TRANS_B_SHIFT);
  op.in = static_cast<Dtype>(field(o, PODSIM_GAUDI1_MME_OPERATION_IN_DTYPE_MASK,
                                   PODSIM_GAUDI1_MME_OPERATION_IN_DTYPE_SHIFT));
  op.out = static_cast<Dtype>(field(o, PODSIM_GAUDI1_MME_OPERATION_OUT_DTYPE_MASK,
                                    PODSIM_GAUDI1_MME_OPERATION_OUT_DTYPE_SHIFT));
  op.accumulate = field(o, PODSIM_GAUDI1_MME_OPERATION_ACCUMULATE_MASK,
                        PODSIM_GAUDI1_MME_OPERATION_ACCUMULATE_SHIFT);
  op.tall = static_cast<std::uint8_t>(
      field(o, PODSIM_GAUDI1_MME_OPERATION_TALL_MASK, PODSIM_GAUDI1_MME_OPERATION_TALL_SHIFT));
  op.wide = static_cast<std::uint8_t>(
      field(o, PODSIM_GAUDI1_MME_OPERATION_WIDE_MASK, PODSIM_GAUDI1_MME_OPERATION_WIDE_SHIFT));
  op.a = reg64(PODSIM_GAUDI1_MME_DESC_A_BASE_LO_OFFSET, PODSIM_GAUDI1_MME_DESC_A_BASE_HI_OFFSET);
  op.b = reg64(PODSIM_GAUDI1_MME_DESC_B_BASE_LO_OFFSET, PODSIM_GAUDI1_MME_DESC_B_BASE_HI_OFFSET);
  op.c = reg64(PODSIM_GAUDI1_MME_DESC_C_BASE_LO_OFFSET, PODSIM_GAUDI1_MME_DESC_C_BASE_HI_OFFSET);
  GemmDesc& g = op.gemm;
  g.m = reg(PODSIM_GAUDI1_MME_DESC_M_OFFSET);
  g.n = reg(PODSIM_GAUDI1_MME_DESC_N_OFFSET);
  g.k = reg(PODSIM_GAUDI1_MME_DESC_K_OFFSET);
  g.batch = reg(PODSIM_GAUDI1_MME_DESC_BATCH_OFFSET);
  g.lda = reg(PODSIM_GAUDI1_MME_DESC_LDA_OFFSET);
  g.ldb = reg(PODSIM_GAUDI1_MME_DESC_LDB_OFFSET);
  g.ldc = reg(PODSIM_GAUDI1_MME_DESC_LDC_OFFSET);
  g.stride_a = reg(PODSIM_GAUDI1_MME_DESC_STRIDE_A_OFFSET);
  g.stride_b = reg(PODSIM_GAUDI1_MME_DESC_STRIDE_B_OFFSET);
  g.stride_c = reg(PODSIM_GAUDI1_MME_DESC_STRIDE_C_OFFSET);
  ConvDesc& c = op.conv;
  c.n = reg(PODSIM_GAUDI1_MME_DESC_CONV_N_OFFSET);
  c.c = reg(PODSIM_GAUDI1_MME_DESC_CONV_C_OFFSET);
  c.h = reg(PODSIM_GAUDI1_MME_DESC_CONV_H_OFFSET);
  c.w = reg(PODSIM_GAUDI1_MME_DESC_CONV_W_OFFSET);
  c.k = reg(PODSIM_GAUDI1_MME_DESC_CONV_K_OFFSET);
  c.r = reg(PODSIM_GAUDI1_MME_DESC_CONV_R_OFFSET);
  c.s = reg(PODSIM_GAUDI1_MME_DESC_CONV_S_OFFSET);
  const auto unpair = [&](std::uint32_t offset, std::uint32_t& h, std::uint32_t& w) {
    const std::uint32_t value = reg(offset);
    h = field(value, PODSIM_GAUDI1_MME_PAIR_H_MASK, PODSIM_GAUDI1_MME_PAIR_H_SHIFT);
    w = field(value, PODSIM_GAUDI1_MME_PAIR_W_MASK, PODSIM_GAUDI1_MME_PAIR_W_SHIFT);
  };
  unpair(PODSIM_GAUDI1_MME_DESC_CONV_STRIDE_OFFSET, c.stride_h, c.stride_w);
  unpair(PODSIM_GAUDI1_MME_DESC_CONV_PAD_OFFSET, c.pad_h, c.pad_w);
  unpair(PODSIM_GAUDI1_MME_DESC_CONV_DILATION_OFFSET, c.dil_h, c.dil_w);
  op.m_start = reg(PODSIM_GAUDI1_MME_DESC_M_START_OFFSET);
  op.m_count = reg(PODSIM_GAUDI1_MME_DESC_M_COUNT_OFFSET);
  op.n_start = reg(PODSIM_GAUDI1_MME_DESC_N_START_OFFSET);
  op.n_count = reg(PODSIM_GAUDI1_MME_DESC_N_COUNT_OFFSET);
  r.sync_object = reg64(PODSIM_GAUDI1_MME_DESC_SYNC_OBJECT_ADDR_LO_OFFSET,
                        PODSIM_GAUDI1_MME_DESC_SYNC_OBJECT_ADDR_HI_OFFSET);
  r.sync_message = reg(PODSIM_GAUDI1_MME_DESC_SYNC_OBJECT_MESSAGE_OFFSET);
  return r;
}

}  // namespace podsim::mme
