// An error a block raises while the chip keeps running (an access outside the address map, an
// undefined opcode, a fence that times out): what the chip's event queue carries to the host,
// and what a block hands to the sink it was given.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace podsim::core {

struct ErrorEvent {
  enum class Kind : std::uint8_t {
    kAddressError,     // an access outside the address map, or rejected by its target
    kUndefinedOpcode,  // a command buffer held a packet the block does not know
    kFenceTimeout,     // a fence waited longer than its timeout
    kMalformed,        // a truncated packet, a bad register value, a queue misconfigured
    kKernelFault,      // a compute kernel stopped: a bad binary, an access outside a memory
    kHazard,           // a kernel read a register before its new value had landed (checking)
    kPageFault,        // an access to a virtual address the MMU's tables do not map
  };
  Kind kind = Kind::kAddressError;
  std::string block;          // hierarchical name of the block that saw it
  std::uint64_t address = 0;  // the faulting address, or where the packet was fetched from
  std::uint64_t time_ps = 0;
  std::string detail;  // one line for people
};

const char* to_string(ErrorEvent::Kind kind);

using ErrorSink = std::function<void(const ErrorEvent&)>;

}  // namespace podsim::core
