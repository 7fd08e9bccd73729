// A block of 32-bit registers as a TLM target serves it: an access is whole aligned words inside
// the block, read or written one word at a time in address order (a WREG_BULK's pairs, a host's
// burst). The block says what a word reads and what writing one does.
// Captures: alignment, unmapped words and address order. Ignores: byte enables and partial words
// (refused, as registers take whole words), and time (the block adds its own).
#pragma once

#include <cstdint>
#include <cstring>
#include <tlm>

namespace podsim::core {

// Serves `trans`: mapped(offset) says whether a word is a register, read(offset) ->
// std::uint32_t gives each word read, write(offset, value) takes each word written. An access
// that is misaligned or touches a word that is not a register answers
// TLM_ADDRESS_ERROR_RESPONSE; byte enables or a short streaming width
// TLM_GENERIC_ERROR_RESPONSE; an ignore command, OK.
template <class Mapped, class Read, class Write>
void serve_register_words(tlm::tlm_generic_payload& trans, Mapped mapped, Read read, Write write) {
  const std::uint64_t offset = trans.get_address();
  const unsigned length = trans.get_data_length();
  std::uint8_t* data = trans.get_data_ptr();
  if (!trans.is_read() && !trans.is_write()) return trans.set_response_status(tlm::TLM_OK_RESPONSE);
  bool ok = length > 0 && length % 4 == 0 && offset % 4 == 0;
  for (unsigned i = 0; ok && i < length; i += 4) ok = mapped(offset + i);
  if (!ok) return trans.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
  if (data == nullptr || trans.get_byte_enable_ptr() != nullptr ||
      trans.get_streaming_width() < length) {
    return trans.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
  }
  for (unsigned i = 0; i < length; i += 4) {
    std::uint32_t value = 0;
    if (trans.is_read()) {
      value = read(offset + i);
      std::memcpy(data + i, &value, 4);
    } else {
      std::memcpy(&value, data + i, 4);
      write(offset + i, value);
    }
  }
  trans.set_response_status(tlm::TLM_OK_RESPONSE);
}

}  // namespace podsim::core
