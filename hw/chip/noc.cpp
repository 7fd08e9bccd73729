#include "hw/chip/noc.h"

namespace podsim::chip {

Noc::Noc(sc_core::sc_module_name name, AddressMap map)
    : sc_module(name),
      target_socket("target_socket"),
      initiator_socket("initiator_socket"),
      map_(std::move(map)),
      stats_{core::StatsGroup(this->name())
                 .counter("address_errors", "1", "accesses outside the address map")} {
  ports_.reserve(map_.regions().size());
  std::vector<const Region*> by_port(map_.regions().size(), nullptr);
  for (const Region& r : map_.regions()) by_port.at(static_cast<std::size_t>(r.port)) = &r;
  for (const Region* r : by_port) {
    core::StatsGroup g(std::string(this->name()) + "." + r->name);
    ports_.push_back({g.counter("accesses", "1", "timed accesses routed to the region"),
                      g.counter("bytes", "B", "bytes of those accesses")});
  }
  target_socket.register_b_transport(this, &Noc::b_transport);
  target_socket.register_transport_dbg(this, &Noc::transport_dbg);
}

void Noc::b_transport(int, tlm::tlm_generic_payload& trans, sc_core::sc_time& delay) {
  const std::uint64_t address = trans.get_address();
  const Region* region = map_.decode(address, trans.get_data_length());
  if (region == nullptr) {
    stats_.address_errors.add();
    trans.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    return;
  }
  PortStats& port = ports_[static_cast<std::size_t>(region->port)];
  port.accesses.add();
  port.bytes.add(trans.get_data_length());
  trans.set_address(address - region->base);
  initiator_socket[region->port]->b_transport(trans, delay);
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
