// What a DMA engine is asked to do, in one value: a copy, a memset or a reduction of two sources,
// over a linear range or a strided shape of up to five dimensions, with an optional completion
// write. Both ways of starting a job use it: models and tests call DmaCore::submit() directly,
// and a COMMIT written to the engine's registers decodes into one (dma_registers.h).
// Captures: the shape as bytes per row (dimension 0, contiguous) and counts and byte strides for
// dimensions 1-4, one shape for source and destination (each with its own strides; the second
// source of a reduction walks with the source strides), the checks that keep a job inside the
// 64-bit address space. Ignores: Gaudi1's transpose, compression and its own multi-dimensional
// registers (their semantics are not published), and negative strides.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "core/numeric.h"

namespace podsim::dma {

inline constexpr int kMaxDims = 5;

enum class DmaKind : std::uint8_t { kCopy, kMemset, kReduce };
const char* to_string(DmaKind kind);

struct DmaShape {
  int dims = 1;  // 1..kMaxDims
  // size[0]: bytes per row; size[1..]: rows of the dimension below per step of this one.
  std::array<std::uint64_t, kMaxDims> size{};
  // Bytes between consecutive indices of dimension d >= 1 (index 0 is unused); zero repeats.
  std::array<std::uint64_t, kMaxDims> src_stride{};
  std::array<std::uint64_t, kMaxDims> dst_stride{};

  static DmaShape linear(std::uint64_t bytes);
  // Bytes moved: the product of the sizes of the used dimensions (0 if one is 0).
  std::uint64_t total_bytes() const;
};

// A 32-bit write after the job's last write completes (a sync object, a fence, a flag).
struct DmaCompletion {
  bool enabled = false;
  std::uint64_t address = 0;
  std::uint32_t value = 0;
};

struct DmaJob {
  DmaKind kind = DmaKind::kCopy;
  std::uint64_t src = 0;   // memset: the 64-bit fill pattern, as Gaudi1's LIN_DMA takes it
  std::uint64_t src2 = 0;  // reduce: the second operand
  std::uint64_t dst = 0;
  DmaShape shape = DmaShape::linear(0);
  core::DataType type = core::DataType::kFp32;  // reduce only
  core::ReduceOp op = core::ReduceOp::kSum;     // reduce only
  DmaCompletion completion;

  static DmaJob copy(std::uint64_t src, std::uint64_t dst, std::uint64_t bytes);
  static DmaJob memset(std::uint64_t dst, std::uint64_t pattern, std::uint64_t bytes);
  // dst = src op src2, element by element.
  static DmaJob reduce(std::uint64_t src, std::uint64_t src2, std::uint64_t dst,
                       std::uint64_t bytes, core::DataType type, core::ReduceOp op);
};

// Why the job cannot run (a bad shape, a range past 2^64, rows that are not whole elements of a
// reduction), or empty when it can.
std::string job_problem(const DmaJob& job);
// Throws std::invalid_argument with job_problem's text.
void check_job(const DmaJob& job);

}  // namespace podsim::dma
