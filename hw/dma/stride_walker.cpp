#include "hw/dma/stride_walker.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace podsim::dma {

std::string shape_problem(const DmaShape& shape) {
  if (shape.dims < 1 || shape.dims > kMaxDims) {
    return fmt::format("dims must be 1 to {}, got {}", kMaxDims, shape.dims);
  }
  std::uint64_t total = 1;
  for (int d = 0; d < shape.dims; ++d) {
    if (shape.size[d] == 0) return fmt::format("size[{}] must be greater than zero", d);
    if (__builtin_mul_overflow(total, shape.size[d], &total)) {
      return "the shape holds 2^64 bytes or more";
    }
  }
  if (!extent(shape, shape.src_stride)) return "the source strides reach past 2^64 bytes";
  if (!extent(shape, shape.dst_stride)) return "the destination strides reach past 2^64 bytes";
  return {};
}

std::optional<std::uint64_t> extent(const DmaShape& shape,
                                    const std::array<std::uint64_t, kMaxDims>& stride) {
  std::uint64_t reach = shape.size[0];
  for (int d = 1; d < shape.dims && d < kMaxDims; ++d) {
    std::uint64_t span = 0;
    if (shape.size[d] == 0) continue;
    if (__builtin_mul_overflow(shape.size[d] - 1, stride[d], &span) ||
        __builtin_add_overflow(reach, span, &reach)) {
      return std::nullopt;
    }
  }
  return reach;
}

StrideWalker::StrideWalker(const DmaShape& shape) : shape_(shape) {
  if (auto problem = shape_problem(shape_); !problem.empty()) {
    throw std::invalid_argument("DMA shape: " + problem);
  }
  total_ = shape_.total_bytes();
  fold_contiguous_dims();
}

// Rows that follow one another in both source and destination are one longer row.
void StrideWalker::fold_contiguous_dims() {
  while (shape_.dims > 1 && shape_.src_stride[1] == shape_.size[0] &&
         shape_.dst_stride[1] == shape_.size[0]) {
    shape_.size[0] *= shape_.size[1];
    for (int d = 1; d + 1 < shape_.dims; ++d) {
      shape_.size[d] = shape_.size[d + 1];
      shape_.src_stride[d] = shape_.src_stride[d + 1];
      shape_.dst_stride[d] = shape_.dst_stride[d + 1];
    }
    --shape_.dims;
  }
}

Segment StrideWalker::next(std::uint64_t max_bytes) {
  if (done() || max_bytes == 0) {
    throw std::logic_error("StrideWalker::next: nothing left to walk or an empty request");
  }
  Segment run;
  run.bytes = std::min(max_bytes, shape_.size[0] - in_row_);
  run.src_offset = src_row_ + in_row_;
  run.dst_offset = dst_row_ + in_row_;
  run.stream_offset = position_;
  in_row_ += run.bytes;
  position_ += run.bytes;
  if (in_row_ == shape_.size[0]) step_row();
  return run;
}

// Like an odometer: the lowest dimension that has not wrapped counts up, those below restart.
void StrideWalker::step_row() {
  in_row_ = 0;
  for (int d = 1; d < shape_.dims; ++d) {
    if (++index_[d] < shape_.size[d]) break;
    index_[d] = 0;
  }
  src_row_ = dst_row_ = 0;
  for (int d = 1; d < shape_.dims; ++d) {
    src_row_ += index_[d] * shape_.src_stride[d];
    dst_row_ += index_[d] * shape_.dst_stride[d];
  }
}

}  // namespace podsim::dma
