// One bulk TLM transfer (a descriptor's worth of bytes in a single b_transport), the way NICs,
// DMA engines move data through chip memory in loosely timed mode.
#pragma once

#include <cstdint>
#include <systemc>
#include <tlm>

#include "core/kernel.h"
#include "core/units.h"

namespace podsim::core {

// Reads or writes `length` bytes at `address`, issued at `at` (not before now), reusing `trans`.
// Returns false when the target rejects it; otherwise sets `done` to when it completes.
template <class Socket>
bool bulk_transfer(Socket& socket, tlm::tlm_generic_payload& trans, tlm::tlm_command command,
                   std::uint64_t address, std::uint8_t* data, std::uint32_t length, TimePs at,
                   TimePs& done) {
  const TimePs now = now_ps();
  trans.set_command(command);
  trans.set_address(address);
  trans.set_data_ptr(data);
  trans.set_data_length(length);
  trans.set_streaming_width(length);
  trans.set_byte_enable_ptr(nullptr);
  trans.set_byte_enable_length(0);
  trans.set_dmi_allowed(false);
  trans.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  sc_core::sc_time delay = sc_core::sc_time::from_value(at > now ? at - now : 0);
  socket->b_transport(trans, delay);
  if (trans.get_response_status() != tlm::TLM_OK_RESPONSE) return false;
  done = now + delay.value();
  return true;
}

}  // namespace podsim::core
