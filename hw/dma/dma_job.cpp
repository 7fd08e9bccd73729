#include "hw/dma/dma_job.h"

#include <fmt/format.h>

#include <stdexcept>

#include "hw/dma/stride_walker.h"

namespace podsim::dma {

namespace {

// Whether [base, base + length) stays below 2^64.
bool fits(std::uint64_t base, std::uint64_t length) {
  return length == 0 || length - 1 <= ~std::uint64_t{0} - base;
}

std::string range_problem(const char* what, std::uint64_t base,
                          const std::optional<std::uint64_t>& length) {
  if (length && fits(base, *length)) return {};
  return fmt::format("{} range at {:#x} runs past the end of the 64-bit address space", what, base);
}

}  // namespace

const char* to_string(DmaKind kind) {
  switch (kind) {
    case DmaKind::kCopy:
      return "copy";
    case DmaKind::kMemset:
      return "memset";
    case DmaKind::kReduce:
      return "reduce";
  }
  return "?";
}

DmaShape DmaShape::linear(std::uint64_t bytes) {
  DmaShape shape;
  shape.size[0] = bytes;
  return shape;
}

std::uint64_t DmaShape::total_bytes() const {
  std::uint64_t total = 1;
  for (int d = 0; d < dims && d < kMaxDims; ++d) {
    if (__builtin_mul_overflow(total, size[d], &total)) return ~std::uint64_t{0};
  }
  return total;
}

DmaJob DmaJob::copy(std::uint64_t src, std::uint64_t dst, std::uint64_t bytes) {
  DmaJob job;
  job.src = src;
  job.dst = dst;
  job.shape = DmaShape::linear(bytes);
  return job;
}

DmaJob DmaJob::memset(std::uint64_t dst, std::uint64_t pattern, std::uint64_t bytes) {
  DmaJob job = copy(pattern, dst, bytes);
  job.kind = DmaKind::kMemset;
  return job;
}

DmaJob DmaJob::reduce(std::uint64_t src, std::uint64_t src2, std::uint64_t dst, std::uint64_t bytes,
                      core::DataType type, core::ReduceOp op) {
  DmaJob job = copy(src, dst, bytes);
  job.kind = DmaKind::kReduce;
  job.src2 = src2;
  job.type = type;
  job.op = op;
  return job;
}

std::string job_problem(const DmaJob& job) {
  if (auto problem = shape_problem(job.shape); !problem.empty()) return problem;
  std::string problem =
      range_problem("destination", job.dst, extent(job.shape, job.shape.dst_stride));
  if (problem.empty() && job.kind != DmaKind::kMemset) {
    problem = range_problem("source", job.src, extent(job.shape, job.shape.src_stride));
  }
  if (problem.empty() && job.kind == DmaKind::kReduce) {
    problem = range_problem("second source", job.src2, extent(job.shape, job.shape.src_stride));
    const std::size_t element = core::size_of(job.type);
    if (problem.empty() && job.shape.size[0] % element != 0) {
      problem = fmt::format("a {} reduction needs rows of whole {}-byte elements, got {} bytes",
                            core::to_string(job.type), element, job.shape.size[0]);
    }
  }
  if (problem.empty() && job.completion.enabled && !fits(job.completion.address, 4)) {
    problem = fmt::format("completion address {:#x} runs past 2^64", job.completion.address);
  }
  return problem;
}

void check_job(const DmaJob& job) {
  if (auto problem = job_problem(job); !problem.empty()) {
    throw std::invalid_argument(fmt::format("DMA {} job: {}", to_string(job.kind), problem));
  }
}

}  // namespace podsim::dma
