#include "hw/dma/dma_registers.h"

#include <fmt/format.h>

namespace podsim::dma {

namespace {

std::uint32_t field(std::uint32_t value, std::uint32_t mask, unsigned shift) {
  return (value & mask) >> shift;
}

}  // namespace

bool DmaRegisters::is_register(std::uint64_t offset) {
  if (offset % 4 != 0) return false;
  return offset < regs::kGaudiEnd || (offset >= regs::kExtBase && offset < regs::kExtEnd);
}

std::uint32_t DmaRegisters::read(std::uint64_t offset) const {
  if (!is_register(offset)) return 0;
  return offset < regs::kGaudiEnd ? gaudi_[offset / 4] : ext_[(offset - regs::kExtBase) / 4];
}

std::uint32_t& DmaRegisters::slot(std::uint64_t offset) {
  return offset < regs::kGaudiEnd ? gaudi_[offset / 4] : ext_[(offset - regs::kExtBase) / 4];
}

bool DmaRegisters::write(std::uint64_t offset, std::uint32_t value) {
  if (!is_register(offset) || offset == PODSIM_GAUDI1_DMA_CORE_STS0_OFFSET) return false;
  slot(offset) = value;
  return offset == PODSIM_GAUDI1_DMA_CORE_COMMIT_OFFSET;
}

std::uint64_t DmaRegisters::pair(std::uint64_t lo_offset, std::uint64_t hi_offset) const {
  return static_cast<std::uint64_t>(read(hi_offset)) << 32 | read(lo_offset);
}

std::optional<DmaJob> DmaRegisters::take_commit(std::string& problem) {
  const std::uint32_t ctrl = read(regs::kExtCtrl);
  slot(regs::kExtCtrl) = 0;
  return decode(read(PODSIM_GAUDI1_DMA_CORE_COMMIT_OFFSET), ctrl, problem);
}

std::optional<DmaJob> DmaRegisters::decode(std::uint32_t commit, std::uint32_t ctrl,
                                           std::string& problem) const {
  constexpr std::uint32_t kUnmodelled = PODSIM_GAUDI1_DMA_COMMIT_TRANSPOSE_MASK |
                                        PODSIM_GAUDI1_DMA_COMMIT_COMPRESS_MASK |
                                        PODSIM_GAUDI1_DMA_COMMIT_DECOMPRESS_MASK;
  if (commit & kUnmodelled) {
    problem =
        fmt::format("COMMIT {:#x} asks for transpose or (de)compression, not modelled", commit);
    return std::nullopt;
  }
  DmaJob job;
  const bool mem_set = commit & PODSIM_GAUDI1_DMA_COMMIT_MEM_SET_MASK;
  const std::uint32_t op = field(ctrl, regs::kCtrlOpMask, regs::kCtrlOpShift);
  const std::uint32_t reduce_op = field(ctrl, regs::kCtrlReduceOpMask, regs::kCtrlReduceOpShift);
  if (op > regs::kOpReduce || (op == regs::kOpReduce && mem_set) ||
      reduce_op > static_cast<std::uint32_t>(core::ReduceOp::kMax)) {
    problem = fmt::format("EXT_CTRL {:#x} with COMMIT {:#x}: no such operation", ctrl, commit);
    return std::nullopt;
  }
  job.kind = op == regs::kOpReduce ? DmaKind::kReduce : mem_set ? DmaKind::kMemset : DmaKind::kCopy;
  job.type = static_cast<core::DataType>(field(ctrl, regs::kCtrlDtypeMask, regs::kCtrlDtypeShift));
  job.op = static_cast<core::ReduceOp>(reduce_op);
  job.src =
      pair(PODSIM_GAUDI1_DMA_CORE_SRC_BASE_LO_OFFSET, PODSIM_GAUDI1_DMA_CORE_SRC_BASE_HI_OFFSET);
  job.src2 = pair(regs::kExtSrc2BaseLo, regs::kExtSrc2BaseHi);
  const std::uint32_t dst_hi =
      field(read(PODSIM_GAUDI1_DMA_CORE_DST_BASE_HI_OFFSET), PODSIM_GAUDI1_DMA_DST_BASE_HI_VAL_MASK,
            PODSIM_GAUDI1_DMA_DST_BASE_HI_VAL_SHIFT);
  job.dst =
      static_cast<std::uint64_t>(dst_hi) << 32 | read(PODSIM_GAUDI1_DMA_CORE_DST_BASE_LO_OFFSET);
  if (!decode_shape(commit, ctrl, job, problem)) return std::nullopt;
  if (commit & PODSIM_GAUDI1_DMA_COMMIT_WR_COMP_EN_MASK) {
    job.completion.enabled = true;
    job.completion.address = pair(PODSIM_GAUDI1_DMA_CORE_WR_COMP_ADDR_LO_OFFSET,
                                  PODSIM_GAUDI1_DMA_CORE_WR_COMP_ADDR_HI_OFFSET);
    job.completion.value = read(PODSIM_GAUDI1_DMA_CORE_WR_COMP_WDATA_OFFSET);
  }
  problem = job_problem(job);
  if (!problem.empty()) return std::nullopt;
  return job;
}

// lin = 1 is Gaudi1's linear transfer of DST_TSIZE_0 bytes; lin = 0 takes podsim's shape.
bool DmaRegisters::decode_shape(std::uint32_t commit, std::uint32_t ctrl, DmaJob& job,
                                std::string& problem) const {
  if (commit & PODSIM_GAUDI1_DMA_COMMIT_LIN_MASK) {
    job.shape = DmaShape::linear(read(PODSIM_GAUDI1_DMA_CORE_DST_TSIZE_0_OFFSET));
    return true;
  }
  const auto dims = static_cast<int>(field(ctrl, regs::kCtrlDimsMask, regs::kCtrlDimsShift));
  if (dims < 1 || dims > kMaxDims) {
    problem = fmt::format(
        "COMMIT with lin = 0 needs EXT_CTRL.dims of 1 to {} (got {}): Gaudi1's own "
        "multi-dimensional mode is not modelled",
        kMaxDims, dims);
    return false;
  }
  job.shape.dims = dims;
  for (int d = 0; d < dims; ++d) job.shape.size[d] = read(regs::ext_size(d));
  for (int d = 1; d < dims; ++d) {
    job.shape.src_stride[d] = pair(regs::ext_src_stride(d), regs::ext_src_stride(d) + 4);
    job.shape.dst_stride[d] = pair(regs::ext_dst_stride(d), regs::ext_dst_stride(d) + 4);
  }
  return true;
}

}  // namespace podsim::dma
