// Walks a DMA shape (dma_job.h) as the engine streams it: the job's bytes in order, row by row,
// cut into contiguous runs that the engine turns into one bulk TLM transaction each.
// Captures: up to five dimensions with ragged sizes, zero strides (a repeated row), and folding
// of dimensions whose rows lie back to back in both source and destination into longer rows, so
// a strided description of a linear range costs one transaction per burst, not per row.
// Ignores: negative strides and overlap between source and destination (runs are independent).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "hw/dma/dma_job.h"

namespace podsim::dma {

// Why a shape cannot be walked (dims outside 1..5, a zero size, a count or extent past 2^64),
// or empty.
std::string shape_problem(const DmaShape& shape);
// One past the largest byte offset the shape reaches from its base with these strides; nullopt
// when that does not fit in 64 bits.
std::optional<std::uint64_t> extent(const DmaShape& shape,
                                    const std::array<std::uint64_t, kMaxDims>& stride);

// A contiguous piece of the stream: `bytes` at these offsets from the source and destination
// bases; `stream_offset` is its place among the job's bytes.
struct Segment {
  std::uint64_t src_offset = 0;
  std::uint64_t dst_offset = 0;
  std::uint64_t stream_offset = 0;
  std::uint64_t bytes = 0;
};

class StrideWalker {
 public:
  // Throws std::invalid_argument naming the problem (shape_problem).
  explicit StrideWalker(const DmaShape& shape);

  std::uint64_t total_bytes() const { return total_; }
  std::uint64_t position() const { return position_; }
  bool done() const { return position_ >= total_; }
  // Dimensions left after folding contiguous ones into the rows.
  int dims() const { return shape_.dims; }
  std::uint64_t row_bytes() const { return shape_.size[0]; }

  // The next segment, at most `max_bytes` (> 0) and never crossing a row. Requires !done().
  Segment next(std::uint64_t max_bytes);

 private:
  void fold_contiguous_dims();
  void step_row();

  DmaShape shape_;
  std::uint64_t total_ = 0, position_ = 0;
  std::uint64_t in_row_ = 0;  // bytes of the current row already walked
  std::array<std::uint64_t, kMaxDims> index_{};
  std::uint64_t src_row_ = 0, dst_row_ = 0;  // the current row's offsets
};

}  // namespace podsim::dma
