// What PCIe switches and root ports route on: memory requests by address windows (the BARs
// behind each port, as a bridge's base and limit registers hold them) and configuration
// requests by bus number, which travel as TLM transactions marked with a ConfigRequest.
// Captures: first-match lookup over a few windows per port. Ignores: bridge configuration
// registers (windows are set by the code that builds the system), I/O space and
// prefetchable/non-prefetchable window pairs.
#pragma once

#include <cstdint>
#include <optional>
#include <tlm>
#include <vector>

namespace podsim::pcie {

// Marks a transaction as a configuration read or write (type 0 at the target bus); its address
// is then the register offset in the function's 4 KiB configuration space.
struct ConfigRequest : tlm::tlm_extension<ConfigRequest> {
  std::uint8_t bus = 0, device = 0, function = 0;
  tlm::tlm_extension_base* clone() const override { return new ConfigRequest(*this); }
  void copy_from(const tlm::tlm_extension_base& other) override {
    *this = static_cast<const ConfigRequest&>(other);
  }
};

inline const ConfigRequest* config_request(const tlm::tlm_generic_payload& trans) {
  return trans.get_extension<ConfigRequest>();
}

class AddressRouter {
 public:
  // Throws std::invalid_argument when the window is empty or wraps around.
  void add_window(int port, std::uint64_t base, std::uint64_t size);
  void add_buses(int port, int first_bus, int last_bus);
  // The port whose window holds [address, address + length), if any.
  std::optional<int> route(std::uint64_t address, std::uint64_t length) const;
  std::optional<int> route_bus(int bus) const;
  // The port a transaction goes to: by bus for configuration requests, else by address.
  std::optional<int> route(const tlm::tlm_generic_payload& trans) const;

 private:
  struct Window {
    int port;
    std::uint64_t base, size;
  };
  struct Buses {
    int port, first, last;
  };
  std::vector<Window> windows_;
  std::vector<Buses> buses_;
};

}  // namespace podsim::pcie
