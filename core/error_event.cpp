#include "core/error_event.h"

namespace podsim::core {

const char* to_string(ErrorEvent::Kind kind) {
  switch (kind) {
    case ErrorEvent::Kind::kAddressError:
      return "address_error";
    case ErrorEvent::Kind::kUndefinedOpcode:
      return "undefined_opcode";
    case ErrorEvent::Kind::kFenceTimeout:
      return "fence_timeout";
    case ErrorEvent::Kind::kMalformed:
      return "malformed";
    case ErrorEvent::Kind::kKernelFault:
      return "kernel_fault";
    case ErrorEvent::Kind::kHazard:
      return "hazard";
    case ErrorEvent::Kind::kPageFault:
      return "page_fault";
  }
  return "unknown";
}

}  // namespace podsim::core
