#include "hw/chip/noc.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/kernel.h"

namespace podsim::chip {

Noc::Noc(sc_core::sc_module_name name, const NocConfig& config, AddressMap map)
    : sc_module(name),
      target_socket("target_socket"),
      initiator_socket("initiator_socket"),
      config_(core::validate_config(config)),
      map_(std::move(map)),
      stats_{core::StatsGroup(this->name())
                 .counter("address_errors", "1", "accesses outside the address map")} {
  ports_.reserve(map_.regions().size());
  std::vector<const Region*> by_port(map_.regions().size(), nullptr);
  for (const Region& r : map_.regions()) by_port.at(static_cast<std::size_t>(r.port)) = &r;
  for (const Region* r : by_port) ports_.push_back(make_port(r->name, true));
  target_socket.register_b_transport(this, &Noc::b_transport);
  target_socket.register_transport_dbg(this, &Noc::transport_dbg);
}

void Noc::end_of_elaboration() {
  for (auto i = initiators_.size(); i < target_socket.size(); ++i) {
    initiators_.push_back(make_port(fmt::format("initiator{}", i)));
  }
}

// Targets' groups are named for their regions ("<noc>.hbm"), initiators' for the engine
// ("<noc>.from_dma0").
Noc::Port Noc::make_port(const std::string& name, bool target) {
  core::StatsGroup g(std::string(this->name()) + "." + (target ? name : "from_" + name));
  Port port{
      {g.counter("accesses", "1",
                 target ? "timed accesses routed to the block" : "timed accesses the engine made"),
       g.counter("bytes", "B", "bytes of those accesses")},
      std::nullopt};
  const core::Bandwidth limit = target ? config_.target_port : config_.initiator_port;
  if (limit.bits_per_second > 0) port.server.emplace(limit, core::Duration{0});
  return port;
}

// When a transfer arriving at `arrival` starts to cross the port and when its last byte has:
// cut-through, so the block behind may start on it at `start`.
Noc::Crossing Noc::pass(Port& port, core::TimePs arrival, unsigned int bytes) {
  port.stats.accesses.add();
  port.stats.bytes.add(bytes);
  if (!port.server) return {arrival, arrival};
  const core::BandwidthServer::Grant g = port.server->schedule(arrival, bytes);
  return {g.start, g.end};
}

void Noc::b_transport(int from, tlm::tlm_generic_payload& trans, sc_core::sc_time& delay) {
  if (mmu_ != nullptr && mmu_->translates(trans.get_address())) {
    translate(from, trans, delay);
  } else {
    route(from, trans, delay);
  }
}

// A virtual access goes out as one physical access per contiguous run of its pages, in order.
void Noc::translate(int from, tlm::tlm_generic_payload& trans, sc_core::sc_time& delay) {
  const std::uint64_t va = trans.get_address();
  const unsigned int length = trans.get_data_length();
  std::uint8_t* data = trans.get_data_ptr();
  std::vector<Mmu::Run> runs;
  core::TimePs walk = 0;
  if (!mmu_->translate(va, length, runs, walk)) {
    stats_.address_errors.add();
    trans.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    return;
  }
  delay += core::to_sc_time(core::Duration{static_cast<std::int64_t>(walk)});
  for (const Mmu::Run& run : runs) {
    trans.set_address(run.physical);
    trans.set_data_ptr(data == nullptr ? nullptr : data + run.offset);
    trans.set_data_length(static_cast<unsigned int>(run.length));
    trans.set_streaming_width(static_cast<unsigned int>(run.length));
    trans.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    route(from, trans, delay);
    if (!trans.is_response_ok()) break;
  }
  trans.set_address(va);
  trans.set_data_ptr(data);
  trans.set_data_length(length);
  trans.set_streaming_width(length);
}

void Noc::route(int from, tlm::tlm_generic_payload& trans, sc_core::sc_time& delay) {
  const std::uint64_t address = trans.get_address();
  const Region* region = map_.decode(address, trans.get_data_length());
  if (region == nullptr) {
    stats_.address_errors.add();
    trans.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    return;
  }
  if (trans.get_command() == tlm::TLM_IGNORE_COMMAND) {
    // An address check (a timing-only model's stand-in for untimed data): it crosses no port,
    // so it neither counts as an access nor holds a port's bandwidth.
    trans.set_address(address - region->base);
    initiator_socket[region->port]->b_transport(trans, delay);
    trans.set_address(address);
    return;
  }
  const core::TimePs now = core::now_ps();
  const unsigned int bytes = trans.get_data_length();
  const Crossing in = pass(initiators_[static_cast<std::size_t>(from)], now + delay.value(), bytes);
  const Crossing out = pass(ports_[static_cast<std::size_t>(region->port)], in.start, bytes);
  delay = core::to_sc_time(core::Duration{static_cast<std::int64_t>(out.start - now)});
  trans.set_address(address - region->base);
  initiator_socket[region->port]->b_transport(trans, delay);
  const core::TimePs done = std::max<core::TimePs>({now + delay.value(), in.end, out.end});
  delay =
      core::to_sc_time(core::Duration{static_cast<std::int64_t>(done - now) + config_.latency.ps});
  trans.set_address(address);
}

unsigned int Noc::transport_dbg(int, tlm::tlm_generic_payload& trans) {
  const std::uint64_t address = trans.get_address();
  const Region* region = map_.decode(address, trans.get_data_length());
  if (region == nullptr) return 0;
  trans.set_address(address - region->base);
  const unsigned int moved = initiator_socket[region->port]->transport_dbg(trans);
  trans.set_address(address);
  return moved;
}

unsigned int Noc::debug(tlm::tlm_command command, std::uint64_t address, std::uint8_t* data,
                        unsigned int length) {
  tlm::tlm_generic_payload trans;
  trans.set_command(command);
  trans.set_address(address);
  trans.set_data_ptr(data);
  trans.set_data_length(length);
  trans.set_streaming_width(length);
  return transport_dbg(0, trans);
}

}  // namespace podsim::chip
