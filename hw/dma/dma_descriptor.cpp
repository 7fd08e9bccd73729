#include "hw/dma/dma_descriptor.h"

#include <fmt/format.h>

#include <cstring>
#include <stdexcept>

#include "hw/dma/dma_regs.h"

namespace podsim::dma {
namespace {

std::uint32_t lo(std::uint64_t v) { return static_cast<std::uint32_t>(v); }
std::uint32_t hi(std::uint64_t v) { return static_cast<std::uint32_t>(v >> 32); }

}  // namespace

std::vector<RegisterWrite> register_writes(const DmaJob& job) {
  if (job.shape.dims != 1) {
    throw std::invalid_argument("a DMA descriptor carries linear jobs only");
  }
  const std::uint64_t bytes = job.shape.size[0];
  if (bytes >> 32) {
    throw std::invalid_argument(
        fmt::format("a DMA descriptor moves less than 4 GiB (DST_TSIZE_0); got {} bytes", bytes));
  }
  std::vector<RegisterWrite> w;
  if (job.kind == DmaKind::kReduce) {
    w.push_back(
        {regs::kExtCtrl, regs::ext_ctrl(regs::kOpReduce, static_cast<std::uint32_t>(job.type),
                                        static_cast<std::uint32_t>(job.op), 1)});
    w.push_back({regs::kExtSrc2BaseLo, lo(job.src2)});
    w.push_back({regs::kExtSrc2BaseHi, hi(job.src2)});
  }
  w.push_back({PODSIM_GAUDI1_DMA_CORE_SRC_BASE_LO_OFFSET, lo(job.src)});
  w.push_back({PODSIM_GAUDI1_DMA_CORE_SRC_BASE_HI_OFFSET, hi(job.src)});
  w.push_back({PODSIM_GAUDI1_DMA_CORE_DST_BASE_LO_OFFSET, lo(job.dst)});
  w.push_back({PODSIM_GAUDI1_DMA_CORE_DST_BASE_HI_OFFSET,
               podsim_gaudi1_make_dma_dst_base_hi(hi(job.dst), 0)});
  w.push_back({PODSIM_GAUDI1_DMA_CORE_DST_TSIZE_0_OFFSET, lo(bytes)});
  if (job.completion.enabled) {
    w.push_back({PODSIM_GAUDI1_DMA_CORE_WR_COMP_ADDR_LO_OFFSET, lo(job.completion.address)});
    w.push_back({PODSIM_GAUDI1_DMA_CORE_WR_COMP_ADDR_HI_OFFSET, hi(job.completion.address)});
    w.push_back({PODSIM_GAUDI1_DMA_CORE_WR_COMP_WDATA_OFFSET, job.completion.value});
  }
  const std::uint32_t mem_set = job.kind == DmaKind::kMemset ? 1 : 0;
  w.push_back(
      {PODSIM_GAUDI1_DMA_CORE_COMMIT_OFFSET,
       podsim_gaudi1_make_dma_commit(job.completion.enabled ? 1 : 0, 0, 0, 1, mem_set, 0, 0, 0)});
  return w;
}

void encode_descriptor(const std::vector<RegisterWrite>& writes, std::uint8_t* out) {
  if (writes.empty() || writes.size() > kMaxDescriptorWrites) {
    throw std::invalid_argument(
        fmt::format("a DMA descriptor holds 1 to {} register writes, not {}", kMaxDescriptorWrites,
                    writes.size()));
  }
  std::memset(out, 0, kDescriptorBytes);
  const auto count = static_cast<std::uint32_t>(writes.size());
  std::memcpy(out, &count, 4);
  for (std::size_t i = 0; i < writes.size(); ++i) {
    std::memcpy(out + 8 + 8 * i, &writes[i].first, 4);
    std::memcpy(out + 12 + 8 * i, &writes[i].second, 4);
  }
}

std::optional<std::vector<RegisterWrite>> decode_descriptor(const std::uint8_t* bytes,
                                                            std::string& problem) {
  std::uint32_t count = 0;
  std::memcpy(&count, bytes, 4);
  if (count == 0 || count > kMaxDescriptorWrites) {
    problem =
        fmt::format("descriptor holds {} register writes (1 to {})", count, kMaxDescriptorWrites);
    return std::nullopt;
  }
  std::vector<RegisterWrite> writes(count);
  for (std::uint32_t i = 0; i < count; ++i) {
    std::memcpy(&writes[i].first, bytes + 8 + 8 * i, 4);
    std::memcpy(&writes[i].second, bytes + 12 + 8 * i, 4);
  }
  return writes;
}

}  // namespace podsim::dma
