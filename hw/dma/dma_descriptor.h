// A DMA descriptor: podsim's way to hand an engine a whole job with one 32-bit doorbell write
// (EXT_DESC_POST, dma_regs.h), so that command buffers on several queues can share an engine
// without interleaving their register writes, as Gaudi2's descriptor-driven engines allow. A
// descriptor is a bundle of the register writes a QMAN would make (the same offsets and values,
// ending with COMMIT), which the engine reads from memory and applies to a register file of its
// own.
// Layout, 128 bytes little-endian: u32 count (1..15), u32 reserved (0), then `count` pairs of
// u32 register offset, u32 value.
// Captures the format and the writes for linear jobs with a completion; ignores strided shapes
// (their extension registers do not fit in one descriptor; program them through registers).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "hw/dma/dma_job.h"

namespace podsim::dma {

inline constexpr std::uint64_t kDescriptorBytes = 128;
inline constexpr std::size_t kMaxDescriptorWrites = 15;

using RegisterWrite = std::pair<std::uint32_t, std::uint32_t>;  // offset, value

// The register writes that start `job`, COMMIT last. Throws std::invalid_argument for a job
// that is not linear or moves 4 GiB or more (DST_TSIZE_0 is 32 bits).
std::vector<RegisterWrite> register_writes(const DmaJob& job);

// Throws std::invalid_argument for an empty bundle or one of more than kMaxDescriptorWrites.
void encode_descriptor(const std::vector<RegisterWrite>& writes, std::uint8_t* out);
// The writes a descriptor holds, or nullopt with the reason in `problem`.
std::optional<std::vector<RegisterWrite>> decode_descriptor(const std::uint8_t* bytes,
                                                            std::string& problem);

}  // namespace podsim::dma
