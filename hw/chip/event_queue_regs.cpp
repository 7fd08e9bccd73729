#include "hw/chip/event_queue_regs.h"

#include <cstring>

#include "podsim/spec/gaudi1.h"

namespace podsim::chip {
namespace {

constexpr std::uint64_t kBase = PODSIM_GAUDI1_EVENT_QUEUE_BASE;
constexpr std::uint64_t offset_of(std::uint64_t address) { return address - kBase; }

}  // namespace

EventQueueRegs::EventQueueRegs(sc_core::sc_module_name name,
                               std::function<void(const Setup&)> apply,
                               std::function<std::uint32_t()> written)
    : sc_module(name),
      target_socket("target_socket"),
      apply_(std::move(apply)),
      written_(std::move(written)) {
  target_socket.register_b_transport(this, &EventQueueRegs::b_transport);
}

std::uint32_t EventQueueRegs::read(std::uint64_t offset) const {
  switch (kBase + offset) {
    case PODSIM_GAUDI1_EVENT_QUEUE_BASE_LO(kBase):
      return base_lo_;
    case PODSIM_GAUDI1_EVENT_QUEUE_BASE_HI(kBase):
      return base_hi_;
    case PODSIM_GAUDI1_EVENT_QUEUE_ENTRIES(kBase):
      return entries_;
    case PODSIM_GAUDI1_EVENT_QUEUE_VECTOR(kBase):
      return vector_;
    case PODSIM_GAUDI1_EVENT_QUEUE_ENABLE(kBase):
      return enabled_;
    case PODSIM_GAUDI1_EVENT_QUEUE_WRITTEN(kBase):
      return written_();
    default:
      return 0;
  }
}

void EventQueueRegs::write(std::uint64_t offset, std::uint32_t value) {
  switch (kBase + offset) {
    case PODSIM_GAUDI1_EVENT_QUEUE_BASE_LO(kBase):
      base_lo_ = value;
      break;
    case PODSIM_GAUDI1_EVENT_QUEUE_BASE_HI(kBase):
      base_hi_ = value;
      break;
    case PODSIM_GAUDI1_EVENT_QUEUE_ENTRIES(kBase):
      entries_ = value;
      break;
    case PODSIM_GAUDI1_EVENT_QUEUE_VECTOR(kBase):
      vector_ = value;
      break;
    case PODSIM_GAUDI1_EVENT_QUEUE_ENABLE(kBase): {
      enabled_ = value & 1;
      Setup s;
      s.base = static_cast<std::uint64_t>(base_hi_) << 32 | base_lo_;
      s.entries = enabled_ ? entries_ : 0;
      s.vector = static_cast<int>(vector_);
      apply_(s);
      break;
    }
    default:
      break;  // WRITTEN is read only
  }
}

// 32-bit registers; anything else, or outside the block, is an address error.
void EventQueueRegs::b_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time&) {
  const std::uint64_t offset = trans.get_address();
  if (offset % 4 != 0 || offset + 4 > kSpan || trans.get_data_length() != 4) {
    trans.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    return;
  }
  std::uint32_t value = 0;
  if (trans.is_write()) {
    std::memcpy(&value, trans.get_data_ptr(), 4);
    write(offset, value);
  } else {
    value = read(offset);
    std::memcpy(trans.get_data_ptr(), &value, 4);
  }
  trans.set_response_status(tlm::TLM_OK_RESPONSE);
}

}  // namespace podsim::chip
