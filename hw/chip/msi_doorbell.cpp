#include "hw/chip/msi_doorbell.h"

#include <algorithm>

#include "core/kernel.h"

namespace podsim::chip {

MsiDoorbell::MsiDoorbell(sc_core::sc_module_name name, int vectors, pcie::PcieEndpoint& endpoint)
    : sc_module(name),
      target_socket("target_socket"),
      vectors_(vectors),
      endpoint_(endpoint),
      stats_{core::StatsGroup(this->name()).counter("rung", "1", "MSI doorbell writes")} {
  target_socket.register_b_transport(this, &MsiDoorbell::b_transport);
}

void MsiDoorbell::b_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay) {
  const std::uint64_t offset = trans.get_address();
  if (offset % 4 != 0 || offset / 4 >= static_cast<std::uint64_t>(vectors_)) {
    trans.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    return;
  }
  if (trans.is_read() && trans.get_data_ptr() != nullptr) {
    std::fill_n(trans.get_data_ptr(), trans.get_data_length(), 0);
  }
  if (trans.is_write()) {
    stats_.rung.add();
    core::event_queue().schedule(core::now_ps() + delay.value(), *this,
                                 static_cast<std::uint32_t>(offset / 4));
  }
  trans.set_response_status(tlm::TLM_OK_RESPONSE);
}

void MsiDoorbell::fire(std::uint32_t vector) {
  endpoint_.raise(static_cast<int>(vector));
  for (const auto& listener : listeners_) listener(static_cast<int>(vector));
}

}  // namespace podsim::chip
