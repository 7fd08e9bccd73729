#include "hw/pcie/pcie_endpoint.h"

#include <fmt/format.h>

#include <stdexcept>

#include "core/kernel.h"

namespace podsim::pcie {

namespace {

bool within(std::uint64_t offset, std::uint64_t length, std::uint64_t start, std::uint64_t size) {
  return offset >= start && offset - start < size && length <= size - (offset - start);
}

}  // namespace

PcieEndpoint::PcieEndpoint(sc_core::sc_module_name name, const PcieEndpointConfig& config)
    : sc_module(name),
      from_host("from_host"),
      to_host("to_host"),
      to_chip("to_chip"),
      from_chip("from_chip"),
      config_(config),
      config_space_(config),
      msix_(config.msix.vectors),
      stats_(make_stats()) {
  from_host.register_b_transport(this, &PcieEndpoint::host_transport);
  from_chip.register_b_transport(this, &PcieEndpoint::chip_transport);
}

PcieEndpoint::Stats PcieEndpoint::make_stats() {
  core::StatsGroup g(name());
  return {g.counter("bar_accesses", "1", "host memory requests served through the BARs"),
          g.counter("dma_transfers", "1", "chip requests sent upstream as bus master"),
          g.counter("interrupts", "1", "MSI-X messages sent")};
}

void PcieEndpoint::host_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay) {
  if (config_request(trans)) return config_access(trans, core::now_ps() + delay.value());
  const auto hit = config_space_.decode(trans.get_address(), trans.get_data_length());
  if (!hit || trans.get_byte_enable_ptr() != nullptr) {
    return trans.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);  // Unsupported Request
  }
  stats_.bar_accesses.add();
  if (msix_access(*hit, trans, core::now_ps() + delay.value())) return;
  forward_to_chip(*hit, trans, delay);
}

void PcieEndpoint::config_access(tlm::tlm_generic_payload& trans, core::TimePs at) {
  const auto offset = static_cast<std::uint32_t>(trans.get_address());
  const bool ok = trans.is_write()
                      ? config_space_.write(offset, trans.get_data_ptr(), trans.get_data_length())
                      : config_space_.read(offset, trans.get_data_ptr(), trans.get_data_length());
  trans.set_response_status(ok ? tlm::TLM_OK_RESPONSE : tlm::TLM_BURST_ERROR_RESPONSE);
  if (ok && trans.is_write()) flush_pending(at);
}

bool PcieEndpoint::msix_access(const ConfigSpace::BarHit& hit, tlm::tlm_generic_payload& trans,
                               core::TimePs at) {
  const MsixConfig& m = config_.msix;
  const std::uint64_t length = trans.get_data_length();
  const bool in_table =
      hit.bar == m.table_bar && within(hit.offset, length, m.table_offset, msix_.table_bytes());
  const bool in_pba =
      hit.bar == m.pba_bar && within(hit.offset, length, m.pba_offset, msix_.pba_bytes());
  if (!in_table && !in_pba) return false;
  bool ok = false;
  if (in_table) {
    ok = msix_.table_access(trans.is_write(), hit.offset - m.table_offset, trans.get_data_ptr(),
                            trans.get_data_length());
    if (ok && trans.is_write()) flush_pending(at);
  } else if (trans.is_read()) {
    ok = msix_.pba_read(hit.offset - m.pba_offset, trans.get_data_ptr(), trans.get_data_length());
  }
  trans.set_response_status(ok ? tlm::TLM_OK_RESPONSE : tlm::TLM_COMMAND_ERROR_RESPONSE);
  return true;
}

void PcieEndpoint::forward_to_chip(const ConfigSpace::BarHit& hit, tlm::tlm_generic_payload& trans,
                                   sc_core::sc_time& delay) {
  const std::uint64_t length = trans.get_data_length();
  for (const BarWindow& w : config_.windows) {
    if (w.bar != hit.bar || !within(hit.offset, length, w.offset, w.size.bytes)) continue;
    const std::uint64_t host_address = trans.get_address();
    trans.set_address(w.chip_address.value + (hit.offset - w.offset));
    to_chip->b_transport(trans, delay);
    trans.set_address(host_address);
    return;
  }
  trans.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
}

// A function that is not bus master may not send requests upstream [P1].
void PcieEndpoint::chip_transport(int, tlm::tlm_generic_payload& trans, sc_core::sc_time& delay) {
  if (!config_space_.bus_master())
    return trans.set_response_status(tlm::TLM_COMMAND_ERROR_RESPONSE);
  stats_.dma_transfers.add();
  to_host->b_transport(trans, delay);
}

bool PcieEndpoint::raise(int vector) {
  if (vector < 0 || vector >= msix_.vectors()) {
    throw std::invalid_argument(
        fmt::format("{}: MSI-X vector {} is not within 0-{}", name(), vector, msix_.vectors() - 1));
  }
  msix_.set_pending(vector, true);
  if (!config_space_.msix_enabled() || config_space_.msix_function_masked() ||
      msix_.masked(vector)) {
    return false;
  }
  return send_message(vector, core::now_ps());
}

// The message is a posted 4-byte write of the vector's data to its address [P1]; it needs bus
// mastering like any other request the function sends.
bool PcieEndpoint::send_message(int vector, core::TimePs at) {
  if (!config_space_.bus_master()) return false;
  msix_.set_pending(vector, false);
  const MsixTable::Message message = msix_.message(vector);
  std::uint8_t data[4];
  for (int i = 0; i < 4; ++i) data[i] = static_cast<std::uint8_t>(message.data >> (8 * i));
  tlm::tlm_generic_payload trans;
  trans.set_command(tlm::TLM_WRITE_COMMAND);
  trans.set_address(message.address);
  trans.set_data_ptr(data);
  trans.set_data_length(4);
  trans.set_streaming_width(4);
  trans.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  const core::TimePs now = core::now_ps();
  sc_core::sc_time delay = sc_core::sc_time::from_value(at > now ? at - now : 0);
  to_host->b_transport(trans, delay);
  stats_.interrupts.add();
  return trans.get_response_status() == tlm::TLM_OK_RESPONSE;
}

void PcieEndpoint::flush_pending(core::TimePs at) {
  if (!config_space_.msix_enabled() || config_space_.msix_function_masked()) return;
  for (int v = 0; v < msix_.vectors(); ++v) {
    if (msix_.pending(v) && !msix_.masked(v)) send_message(v, at);
  }
}

}  // namespace podsim::pcie
