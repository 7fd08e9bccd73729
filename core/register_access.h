// A block of 32-bit registers as a TLM target serves it, written once for every register block of
// the chip (the engines', the queue managers', the sync managers'): an access is whole aligned
// words inside the block, read or written in address order (a WREG_BULK's pairs, a host's
// burst). The block says which words are registers, what a word reads and what writing does.
// A bad access gets one answer wherever it lands: the response below and, from the block that
// saw it, an error event of kind kAddressError whose detail is `BadRegisterAccess::why`.
// Captures: alignment, unmapped words, byte enables and short streaming widths (refused: registers
// take whole words). Ignores: time (the block adds its own).
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <tlm>

#include "core/error_event.h"

namespace podsim::core {

// Why an access to a register block was refused, and the response it got.
struct BadRegisterAccess {
  tlm::tlm_response_status status = tlm::TLM_ADDRESS_ERROR_RESPONSE;
  std::string why;
};

// The problem with `trans` as an access to registers (mapped(offset) says whether a word is
// one), or nullopt when it is good. Misaligned, empty or unmapped: TLM_ADDRESS_ERROR_RESPONSE;
// byte enables: TLM_BYTE_ENABLE_ERROR_RESPONSE; a streaming width shorter than the data:
// TLM_BURST_ERROR_RESPONSE.
template <class Mapped>
std::optional<BadRegisterAccess> check_register_access(const tlm::tlm_generic_payload& trans,
                                                       Mapped mapped) {
  const std::uint64_t offset = trans.get_address();
  const unsigned length = trans.get_data_length();
  const char* what = trans.is_write() ? "write" : "read";
  if (length == 0 || length % 4 != 0 || offset % 4 != 0) {
    return BadRegisterAccess{tlm::TLM_ADDRESS_ERROR_RESPONSE,
                             fmt::format("a {}-byte register {} at offset {:#x}: registers take "
                                         "whole aligned 32-bit words",
                                         length, what, offset)};
  }
  for (unsigned i = 0; i < length; i += 4) {
    if (!mapped(offset + i)) {
      return BadRegisterAccess{
          tlm::TLM_ADDRESS_ERROR_RESPONSE,
          fmt::format("a register {} at offset {:#x} reaches {:#x}, which is not a register", what,
                      offset, offset + i)};
    }
  }
  if (trans.get_byte_enable_ptr() != nullptr) {
    return BadRegisterAccess{
        tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE,
        fmt::format("a register {} at offset {:#x} with byte enables: registers take whole words",
                    what, offset)};
  }
  if (trans.get_data_ptr() == nullptr || trans.get_streaming_width() < length) {
    return BadRegisterAccess{tlm::TLM_BURST_ERROR_RESPONSE,
                             fmt::format("a register {} at offset {:#x} streams {} of its {} bytes",
                                         what, offset, trans.get_streaming_width(), length)};
  }
  return std::nullopt;
}

// The error event a block raises for a bad access at `offset` into its registers, at `time_ps`.
inline ErrorEvent bad_register_event(std::string block, std::uint64_t offset,
                                     const BadRegisterAccess& bad, std::uint64_t time_ps) {
  return ErrorEvent{ErrorEvent::Kind::kAddressError, std::move(block), offset, time_ps, bad.why};
}

// Serves `trans` word by word: read(offset) -> std::uint32_t gives each word read, write(offset,
// value) takes each word written. An ignore command is answered OK; a bad access (above) gets
// its response, nothing is read or written, and the problem is returned for the block to raise.
template <class Mapped, class Read, class Write>
std::optional<BadRegisterAccess> serve_register_words(tlm::tlm_generic_payload& trans,
                                                      Mapped mapped, Read read, Write write) {
  if (!trans.is_read() && !trans.is_write()) {
    trans.set_response_status(tlm::TLM_OK_RESPONSE);
    return std::nullopt;
  }
  if (auto bad = check_register_access(trans, mapped)) {
    trans.set_response_status(bad->status);
    return bad;
  }
  const std::uint64_t offset = trans.get_address();
  const unsigned length = trans.get_data_length();
  std::uint8_t* data = trans.get_data_ptr();
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
  return std::nullopt;
}

}  // namespace podsim::core
