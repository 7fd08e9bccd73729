#include "hw/dma/stride_walker.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <vector>

#include "hw/dma/dma_config.h"
#include "hw/dma/dma_job.h"

namespace podsim::dma {
namespace {

using ::testing::HasSubstr;

struct ByteMap {
  std::vector<std::uint64_t> src, dst;
};

// Where every byte of the stream comes from and goes to, by walking with `max_bytes` runs.
ByteMap walk(const DmaShape& shape, std::uint64_t max_bytes) {
  ByteMap map;
  StrideWalker walker(shape);
  while (!walker.done()) {
    const Segment run = walker.next(max_bytes);
    EXPECT_LE(run.bytes, max_bytes);
    EXPECT_EQ(run.stream_offset, map.src.size());
    for (std::uint64_t i = 0; i < run.bytes; ++i) {
      map.src.push_back(run.src_offset + i);
      map.dst.push_back(run.dst_offset + i);
    }
  }
  return map;
}

// The same by nested loops, the way a CPU would copy it.
ByteMap reference(const DmaShape& s) {
  ByteMap map;
  std::uint64_t size[kMaxDims] = {1, 1, 1, 1, 1};
  for (int d = 0; d < s.dims; ++d) size[d] = s.size[d];
  for (std::uint64_t i4 = 0; i4 < size[4]; ++i4)
    for (std::uint64_t i3 = 0; i3 < size[3]; ++i3)
      for (std::uint64_t i2 = 0; i2 < size[2]; ++i2)
        for (std::uint64_t i1 = 0; i1 < size[1]; ++i1)
          for (std::uint64_t b = 0; b < size[0]; ++b) {
            const auto offset = [&](const std::array<std::uint64_t, kMaxDims>& st) {
              return b + i1 * (s.dims > 1 ? st[1] : 0) + i2 * (s.dims > 2 ? st[2] : 0) +
                     i3 * (s.dims > 3 ? st[3] : 0) + i4 * (s.dims > 4 ? st[4] : 0);
            };
            map.src.push_back(offset(s.src_stride));
            map.dst.push_back(offset(s.dst_stride));
          }
  return map;
}

DmaShape five_d() {
  DmaShape s;
  s.dims = 5;
  s.size = {6, 3, 2, 4, 3};
  s.src_stride = {0, 8, 40, 0, 700};  // dimension 3 repeats the same rows
  s.dst_stride = {0, 6, 18, 36, 144};
  return s;
}

TEST(StrideWalker, LinearRangeIsCutIntoRunsOfAtMostTheRequest) {
  StrideWalker walker(DmaShape::linear(5000));
  std::vector<std::uint64_t> sizes;
  while (!walker.done()) sizes.push_back(walker.next(2048).bytes);
  EXPECT_EQ(sizes, (std::vector<std::uint64_t>{2048, 2048, 904}));
  EXPECT_EQ(walker.position(), 5000u);
}

TEST(StrideWalker, TwoDimensionsGiveOneRunPerRowAtItsStrides) {
  DmaShape s;
  s.dims = 2;
  s.size = {16, 3};
  s.src_stride[1] = 100;
  s.dst_stride[1] = 32;
  StrideWalker walker(s);
  for (std::uint64_t row = 0; row < 3; ++row) {
    const Segment run = walker.next(1000);
    EXPECT_EQ(run.bytes, 16u);
    EXPECT_EQ(run.src_offset, row * 100);
    EXPECT_EQ(run.dst_offset, row * 32);
    EXPECT_EQ(run.stream_offset, row * 16);
  }
  EXPECT_TRUE(walker.done());
}

TEST(StrideWalker, FiveDimensionsMatchNestedLoopsForAnyRunSize) {
  const DmaShape s = five_d();
  const ByteMap expected = reference(s);
  ASSERT_EQ(expected.src.size(), 6u * 3 * 2 * 4 * 3);
  for (std::uint64_t max : {1u, 4u, 6u, 7u, 1000u}) {
    const ByteMap got = walk(s, max);
    EXPECT_EQ(got.src, expected.src) << "runs of at most " << max;
    EXPECT_EQ(got.dst, expected.dst) << "runs of at most " << max;
  }
}

TEST(StrideWalker, RaggedRowsSplitAtTheRowEnd) {
  DmaShape s;
  s.dims = 3;
  s.size = {5, 2, 3};
  s.src_stride = {0, 7, 20};
  s.dst_stride = {0, 5, 10};
  StrideWalker walker(s);
  std::vector<std::uint64_t> sizes;
  while (!walker.done()) sizes.push_back(walker.next(4).bytes);
  EXPECT_EQ(sizes, (std::vector<std::uint64_t>{4, 1, 4, 1, 4, 1, 4, 1, 4, 1, 4, 1}));
  EXPECT_EQ(walk(s, 3).src, reference(s).src);
}

TEST(StrideWalker, ZeroStrideRepeatsTheSameRow) {
  DmaShape s;
  s.dims = 2;
  s.size = {8, 4};
  s.src_stride[1] = 0;
  s.dst_stride[1] = 8;
  StrideWalker walker(s);
  for (int row = 0; row < 4; ++row) EXPECT_EQ(walker.next(64).src_offset, 0u);
  EXPECT_EQ(extent(s, s.src_stride), 8u);
  EXPECT_EQ(extent(s, s.dst_stride), 32u);
}

TEST(StrideWalker, RowsBackToBackFoldIntoOneLongRow) {
  DmaShape s;
  s.dims = 4;
  s.size = {64, 4, 2, 3};
  s.src_stride = {0, 64, 256, 1024};  // dimensions 1 and 2 are contiguous, 3 is not
  s.dst_stride = {0, 64, 256, 512};
  StrideWalker walker(s);
  EXPECT_EQ(walker.dims(), 2);
  EXPECT_EQ(walker.row_bytes(), 512u);
  EXPECT_EQ(walker.next(10000).bytes, 512u);
  EXPECT_EQ(walk(s, 100).src, reference(s).src);
  EXPECT_EQ(walk(s, 100).dst, reference(s).dst);
}

TEST(StrideWalker, BadShapesAreRejectedWithTheReason) {
  DmaShape s = DmaShape::linear(16);
  s.dims = 0;
  EXPECT_THAT(shape_problem(s), HasSubstr("dims must be 1 to 5, got 0"));
  s.dims = 6;
  EXPECT_THAT(shape_problem(s), HasSubstr("got 6"));
  s = five_d();
  s.size[3] = 0;
  EXPECT_THAT(shape_problem(s), HasSubstr("size[3] must be greater than zero"));
  EXPECT_THROW(StrideWalker{s}, std::invalid_argument);
  s = DmaShape::linear(1ULL << 40);
  s.dims = 2;
  s.size[1] = 1ULL << 40;
  EXPECT_THAT(shape_problem(s), HasSubstr("2^64 bytes or more"));
  s.size[1] = 3;
  s.dst_stride[1] = 1ULL << 63;
  EXPECT_THAT(shape_problem(s), HasSubstr("destination strides"));
  EXPECT_THAT(shape_problem(DmaShape::linear(0)), HasSubstr("size[0]"));
}

TEST(StrideWalker, WalkingPastTheEndIsALogicError) {
  StrideWalker walker(DmaShape::linear(4));
  walker.next(4);
  EXPECT_THROW(walker.next(4), std::logic_error);
}

TEST(DmaJob, ProblemsNameWhatIsWrong) {
  EXPECT_EQ(job_problem(DmaJob::copy(0x1000, 0x2000, 4096)), "");
  EXPECT_THAT(job_problem(DmaJob::copy(0x1000, ~std::uint64_t{0} - 10, 100)),
              HasSubstr("destination range"));
  EXPECT_THAT(job_problem(DmaJob::copy(~std::uint64_t{0} - 10, 0, 100)), HasSubstr("source range"));
  // The last byte of the address space is fine.
  EXPECT_EQ(job_problem(DmaJob::copy(~std::uint64_t{0} - 99, 0, 100)), "");
  // A memset's source is its pattern, not an address.
  EXPECT_EQ(job_problem(DmaJob::memset(0x1000, ~std::uint64_t{0}, 100)), "");
  EXPECT_THAT(job_problem(DmaJob::reduce(0, 0x1000, 0x2000, 6, core::DataType::kFp32,
                                         core::ReduceOp::kSum)),
              HasSubstr("whole 4-byte elements"));
  EXPECT_EQ(job_problem(
                DmaJob::reduce(0, 0x1000, 0x2000, 6, core::DataType::kBf16, core::ReduceOp::kSum)),
            "");
  DmaJob job = DmaJob::copy(0, 0x100, 8);
  job.completion = {true, ~std::uint64_t{0} - 1, 1};
  EXPECT_THAT(job_problem(job), HasSubstr("completion address"));
  EXPECT_THROW(check_job(job), std::invalid_argument);
}

TEST(DmaConfig, DefaultsAreValidAndBadValuesNameTheKey) {
  EXPECT_NO_THROW(core::validate_config(DmaConfig{}));
  DmaConfig config;
  config.burst = core::ByteSize{1002};
  try {
    core::validate_config(config);
    FAIL() << "a burst of 1002 bytes was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("burst"));
  }
  config = DmaConfig{};
  config.outstanding = 0;
  EXPECT_THROW(core::validate_config(config), std::invalid_argument);
}

}  // namespace
}  // namespace podsim::dma
