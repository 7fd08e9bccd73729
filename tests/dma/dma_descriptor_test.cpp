// DMA descriptors: the register writes of a job decode back into the same job through the
// engine's own register file, and the 128-byte format round-trips and refuses what it cannot hold.
#include "hw/dma/dma_descriptor.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <stdexcept>

#include "hw/dma/dma_registers.h"
#include "hw/dma/dma_regs.h"

namespace podsim::dma {
namespace {

using ::testing::HasSubstr;

DmaJob decode_through_registers(const std::vector<RegisterWrite>& writes) {
  DmaRegisters file;
  bool committed = false;
  for (const auto& [offset, value] : writes) committed = file.write(offset, value);
  EXPECT_TRUE(committed) << "COMMIT is not last";
  std::string problem;
  auto job = file.take_commit(problem);
  EXPECT_TRUE(job.has_value()) << problem;
  return job.value_or(DmaJob{});
}

TEST(DmaDescriptor, AReductionWithCompletionDecodesToTheSameJob) {
  DmaJob job = DmaJob::reduce(0x7FF0001000, 0x1'0000'2000, 0x2'0000'0040, 4096,
                              core::DataType::kBf16, core::ReduceOp::kMax);
  job.completion = {true, 0x7FFC4F2000 + 4 * 1500, 0x80000001};
  const DmaJob back = decode_through_registers(register_writes(job));
  EXPECT_EQ(back.kind, DmaKind::kReduce);
  EXPECT_EQ(back.src, job.src);
  EXPECT_EQ(back.src2, job.src2);
  EXPECT_EQ(back.dst, job.dst);
  EXPECT_EQ(back.shape.total_bytes(), 4096u);
  EXPECT_EQ(back.type, core::DataType::kBf16);
  EXPECT_EQ(back.op, core::ReduceOp::kMax);
  EXPECT_TRUE(back.completion.enabled);
  EXPECT_EQ(back.completion.address, job.completion.address);
  EXPECT_EQ(back.completion.value, job.completion.value);
}

TEST(DmaDescriptor, CopyAndMemsetDecodeToTheSameJob) {
  const DmaJob copy = decode_through_registers(register_writes(DmaJob::copy(64, 128, 256)));
  EXPECT_EQ(copy.kind, DmaKind::kCopy);
  EXPECT_EQ(copy.src, 64u);
  EXPECT_EQ(copy.dst, 128u);
  EXPECT_FALSE(copy.completion.enabled);
  const DmaJob fill = decode_through_registers(register_writes(DmaJob::memset(4096, 0xABCD, 1024)));
  EXPECT_EQ(fill.kind, DmaKind::kMemset);
  EXPECT_EQ(fill.src, 0xABCDu);
}

TEST(DmaDescriptor, RoundTripsAndRefusesWhatItCannotHold) {
  const auto writes = register_writes(DmaJob::copy(1, 2, 3));
  std::uint8_t bytes[kDescriptorBytes];
  encode_descriptor(writes, bytes);
  std::string problem;
  const auto back = decode_descriptor(bytes, problem);
  ASSERT_TRUE(back.has_value()) << problem;
  EXPECT_EQ(*back, writes);

  EXPECT_THROW(encode_descriptor({}, bytes), std::invalid_argument);
  EXPECT_THROW(encode_descriptor(std::vector<RegisterWrite>(16, {0, 0}), bytes),
               std::invalid_argument);
  bytes[0] = 99;
  EXPECT_FALSE(decode_descriptor(bytes, problem).has_value());
  EXPECT_THAT(problem, HasSubstr("99 register writes"));

  DmaJob strided = DmaJob::copy(0, 0, 64);
  strided.shape.dims = 2;
  EXPECT_THROW(register_writes(strided), std::invalid_argument);
  EXPECT_THROW(register_writes(DmaJob::copy(0, 0, 1ull << 32)), std::invalid_argument);
}

}  // namespace
}  // namespace podsim::dma
