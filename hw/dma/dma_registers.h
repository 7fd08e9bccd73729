// The register file of one DMA engine and its decode into a job (layout in dma_regs.h), as plain
// C++: the module (dma_core.h) stores what arrives on its register socket here and, on a COMMIT,
// submits the job this builds, through the same path as a direct submit().
// Captures: Gaudi1's linear transfer and memset (LIN_DMA lands its size in DST_TSIZE_0, its
// source, or fill value, in SRC_BASE, its destination in DST_BASE and word 1 in COMMIT) with
// the completion write (WR_COMP_*), podsim's extension for strides and reductions, and the
// rejection of what is not modelled. Ignores: CFG_0/CFG_1 (enable, halt, flush), protection and
// rate-limit registers (stored and read back, without effect), ERR_CAUSE (errors go to the
// engine's error sink).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "hw/dma/dma_job.h"
#include "hw/dma/dma_regs.h"

namespace podsim::dma {

class DmaRegisters {
 public:
  // Whether a 32-bit register sits at `offset` (4-byte aligned, in Gaudi1's range or the
  // extension's).
  static bool is_register(std::uint64_t offset);

  // The stored value (0 for a register never written).
  std::uint32_t read(std::uint64_t offset) const;
  // Stores `value`; returns true when the write is to COMMIT, which starts a transfer.
  bool write(std::uint64_t offset, std::uint32_t value);

  // The job the registers describe at a COMMIT, or nullopt with the reason in `problem` (a bit
  // of COMMIT that podsim does not model, an extension field out of range, a job that
  // job_problem rejects). Consumes EXT_CTRL either way.
  std::optional<DmaJob> take_commit(std::string& problem);

 private:
  std::uint64_t pair(std::uint64_t lo_offset, std::uint64_t hi_offset) const;
  std::uint32_t& slot(std::uint64_t offset);
  std::optional<DmaJob> decode(std::uint32_t commit, std::uint32_t ctrl,
                               std::string& problem) const;
  bool decode_shape(std::uint32_t commit, std::uint32_t ctrl, DmaJob& job,
                    std::string& problem) const;

  std::array<std::uint32_t, regs::kGaudiEnd / 4> gaudi_{};
  std::array<std::uint32_t, (regs::kExtEnd - regs::kExtBase) / 4> ext_{};
};

}  // namespace podsim::dma
