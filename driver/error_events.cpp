// The chip's asynchronous errors as the driver learns of them: a ring of entries in host memory
// the chip writes (the EVENT_QUEUE registers, podsim's stand-in for the event queue Gaudi1's
// CPU-CP firmware keeps [D]) and an MSI-X vector after each. The driver keeps, as Linux does, a
// record of the first RAZWI (an access outside the map), page fault and undefined opcode since
// the compute node was opened, for INFO; and the notifier events GET_EVENTS returns.
// Entries carry no engine: the records say so (engine id 0xFFFF, no RAZWI initiators).
#include <cstring>

#include "core/error_event.h"
#include "core/kernel.h"
#include "driver/device.h"
#include "podsim/spec/gaudi1.h"

namespace podsim::driver {
namespace {

constexpr std::uint32_t kEntryBytes = 16;
constexpr std::uint32_t kEmpty = 0xFFFFFFFFu;  // a slot's sequence number until the chip writes it
constexpr std::uint16_t kUnknownEngine = 0xFFFF;

struct Entry {
  std::uint32_t kind, sequence;
  std::uint64_t address;
};

}  // namespace

void Device::init_event_queue() {
  if (event_ring_ == 0) {
    const auto ring = kernel_.allocate(std::uint64_t{kEventEntries} * kEntryBytes, 4096);
    if (!ring) throw std::runtime_error("no kernel memory for the event queue");
    event_ring_ = *ring;
  }
  const Entry empty{0, kEmpty, 0};
  for (std::uint32_t i = 0; i < kEventEntries; ++i)
    memory_.backing().write(event_ring_ + std::uint64_t{kEntryBytes} * i, &empty, sizeof empty);
  next_event_ = 0;
  const std::uint64_t base = PODSIM_GAUDI1_EVENT_QUEUE_BASE;
  const std::uint64_t ring = chip_view(event_ring_);
  write_register(PODSIM_GAUDI1_EVENT_QUEUE_BASE_LO(base), static_cast<std::uint32_t>(ring));
  write_register(PODSIM_GAUDI1_EVENT_QUEUE_BASE_HI(base), static_cast<std::uint32_t>(ring >> 32));
  write_register(PODSIM_GAUDI1_EVENT_QUEUE_ENTRIES(base), kEventEntries);
  write_register(PODSIM_GAUDI1_EVENT_QUEUE_VECTOR(base), kEventVector);
  write_register(PODSIM_GAUDI1_EVENT_QUEUE_ENABLE(base), 1);
}

// Every entry the chip has written since the last interrupt, in order; each slot is marked empty
// again once read.
void Device::on_event() {
  for (;;) {
    const std::uint64_t slot =
        event_ring_ + std::uint64_t{kEntryBytes} * (next_event_ % kEventEntries);
    Entry e{};
    memory_.backing().read(slot, &e, sizeof e);
    if (e.sequence != next_event_) break;
    const Entry empty{0, kEmpty, 0};
    memory_.backing().write(slot, &empty, sizeof empty);
    ++next_event_;
    record_error(e.kind, e.address);
  }
}

void Device::record_error(std::uint32_t kind, std::uint64_t address) {
  using Kind = core::ErrorEvent::Kind;
  const auto now_ns = static_cast<__s64>(core::now_ps() / 1000);
  last_error_open_ = static_cast<std::int64_t>(last_open_ps_ / 1000);
  switch (static_cast<Kind>(kind)) {
    case Kind::kAddressError:
      if (!errors_.razwi) {
        errors_.razwi = true;
        errors_.razwi_event = {};
        errors_.razwi_event.timestamp = now_ns;
        errors_.razwi_event.addr = address;
      }
      notifier_ |= HL_NOTIFIER_EVENT_RAZWI;
      break;
    case Kind::kPageFault:
      if (!errors_.page_fault) {
        errors_.page_fault = true;
        errors_.page_fault_event = {};
        errors_.page_fault_event.timestamp = now_ns;
        errors_.page_fault_event.addr = address;
        errors_.page_fault_event.engine_id = kUnknownEngine;
      }
      notifier_ |= HL_NOTIFIER_EVENT_PAGE_FAULT;
      break;
    case Kind::kUndefinedOpcode:
      if (!errors_.undefined_opcode) {
        errors_.undefined_opcode = true;
        errors_.undefined_opcode_event = {};
        errors_.undefined_opcode_event.timestamp = now_ns;
        errors_.undefined_opcode_event.cb_addr_streams[0][0] = address;  // where it was fetched
        errors_.undefined_opcode_event.cb_addr_streams_len = 1;
        errors_.undefined_opcode_event.engine_id = kUnknownEngine;
      }
      notifier_ |= HL_NOTIFIER_EVENT_UNDEFINED_OPCODE;
      break;
    default:  // a fence timeout, a malformed packet, a kernel fault
      notifier_ |= HL_NOTIFIER_EVENT_USER_ENGINE_ERR;
      break;
  }
}

}  // namespace podsim::driver
