// The chip's event-queue registers (gaudi1.yaml's podsim-defined EVENT_QUEUE block): the driver
// gives the ring's address, length and MSI-X vector and enables it; from then on the chip writes
// every error event a block raises into the ring (Chip::set_event_queue) and rings the vector.
// Captures: the registers and the enable. Ignores: the firmware's own events (temperature,
// power, resets) and its message format: entries are podsim's (docs/chip.md).
#pragma once

#include <tlm_utils/simple_target_socket.h>

#include <cstdint>
#include <functional>
#include <systemc>
#include <tlm>

namespace podsim::chip {

class EventQueueRegs : public sc_core::sc_module {
 public:
  struct Setup {
    std::uint64_t base = 0;
    std::uint32_t entries = 0;  // 0: disabled
    int vector = 0;
  };
  static constexpr std::uint64_t kSpan = 0x18;

  tlm_utils::simple_target_socket<EventQueueRegs> target_socket;

  // `apply` takes effect on each ENABLE write; `written` reports the WRITTEN register.
  EventQueueRegs(sc_core::sc_module_name name, std::function<void(const Setup&)> apply,
                 std::function<std::uint32_t()> written);

 private:
  void b_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay);
  std::uint32_t read(std::uint64_t offset) const;
  void write(std::uint64_t offset, std::uint32_t value);

  std::function<void(const Setup&)> apply_;
  std::function<std::uint32_t()> written_;
  std::uint32_t base_lo_ = 0, base_hi_ = 0, entries_ = 0, vector_ = 0, enabled_ = 0;
};

}  // namespace podsim::chip
