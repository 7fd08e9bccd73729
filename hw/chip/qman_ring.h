// The arithmetic of a QMAN stream's primary queue (PQ) and its fence counters, without the
// kernel: ring indices that wrap at twice the ring's size (so a full ring and an empty one
// differ), the 16-byte buffer descriptor each entry holds, and a FENCE's test of its counter.
// PQ facts: Linux drivers/accel/habanalabs (struct hl_bd in qman_if.h: a 64-bit address, a
// 32-bit length and a 32-bit control word whose low 16 bits are a repeat count, valid when bit
// 24 is set; hw_queue.c: the producer index wraps at twice the queue length) [C10].
// Captures exactly that; ignores PQ_CFG1 limits and descriptor control bits other than the
// repeat count (qman.h says what the QMAN does with them).
#pragma once

#include <cstdint>
#include <cstring>

#include "podsim/spec/gaudi1.h"

namespace podsim::chip {

// Ring indices count modulo 2 * 2^log2_size; the slot is the index modulo 2^log2_size.
inline std::uint32_t pq_index_mask(std::uint32_t log2_size) { return (2u << log2_size) - 1; }
inline std::uint32_t pq_next(std::uint32_t index, std::uint32_t log2_size) {
  return (index + 1) & pq_index_mask(log2_size);
}
inline std::uint32_t pq_slot(std::uint32_t index, std::uint32_t log2_size) {
  return index & ((1u << log2_size) - 1);
}
// Entries written (producer index) and not yet consumed (consumer index).
inline std::uint32_t pq_pending(std::uint32_t pi, std::uint32_t ci, std::uint32_t log2_size) {
  return (pi - ci) & pq_index_mask(log2_size);
}
// A PQ_SIZE value the model accepts: a ring of 1 to 2^kMaxPqLog2Size entries.
inline constexpr std::uint32_t kMaxPqLog2Size = 16;

// One PQ entry: where a command buffer is and how long it is.
struct PqEntry {
  static constexpr std::uint32_t kRepeatMask = 0xFFFFu;
  static constexpr std::uint32_t kRepeatValid = 1u << 24;
  std::uint64_t address = 0;
  std::uint32_t length = 0;
  std::uint32_t control = 0;
  // Passes a REPEAT end packet may send back (0 unless the descriptor says it holds a count).
  std::uint32_t repeat() const { return control & kRepeatValid ? control & kRepeatMask : 0; }
};
static_assert(PODSIM_GAUDI1_PQ_ENTRY_SIZE == 16, "PqEntry assumes 16-byte descriptors");

inline PqEntry decode_pq_entry(const std::uint8_t* bytes) {
  PqEntry e;
  std::memcpy(&e.address, bytes, 8);
  std::memcpy(&e.length, bytes + 8, 4);
  std::memcpy(&e.control, bytes + 12, 4);
  return e;
}
inline void encode_pq_entry(const PqEntry& e, std::uint8_t* bytes) {
  std::memcpy(bytes, &e.address, 8);
  std::memcpy(bytes + 8, &e.length, 4);
  std::memcpy(bytes + 12, &e.control, 4);
}

// A fence counter holds the field width of CP_FENCEn_CNT; writes to CP_FENCEn_RDATA add to it.
inline std::uint32_t fence_add(std::uint32_t counter, std::uint32_t value) {
  return (counter + value) & PODSIM_GAUDI1_QMAN_CP_FENCE_CNT_VAL_MASK;
}
// A FENCE passes once its counter has reached the target; passing takes dec_val off the counter
// (never below zero). Returns false, leaving the counter alone, while the fence must wait.
inline bool fence_pass(std::uint32_t& counter, std::uint32_t target, std::uint32_t dec) {
  if (counter < target) return false;
  counter = counter >= dec ? counter - dec : 0;
  return true;
}

}  // namespace podsim::chip
