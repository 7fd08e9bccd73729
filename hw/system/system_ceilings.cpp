#include "hw/system/system_ceilings.h"

#include "hw/fabric/wire_format.h"

namespace podsim::system {

SystemCeilings compute_ceilings(const SystemConfig& system) {
  SystemCeilings c;
  const auto& box = system.box;
  const double port_bps = system.chip.nic.port_speed.bits_per_second;
  c.chips_per_box = box.chips;
  c.boxes = system.boxes;
  c.chips = c.chips_per_box * c.boxes;
  c.scale_up_ports_per_chip = system.scale_up_ports_per_chip();
  c.scale_out_ports_per_chip = system.scale_out.ports_per_chip;
  c.unused_ports_per_chip =
      system.chip.nic.ports - c.scale_up_ports_per_chip - c.scale_out_ports_per_chip;
  c.scale_out_ports = c.chips * c.scale_out_ports_per_chip;
  c.roce_efficiency =
      fabric::WireFormat{}.goodput_fraction(static_cast<std::uint32_t>(system.chip.nic.roce.mtu));
  c.scale_up_line = core::Bandwidth{port_bps * c.scale_up_ports_per_chip};
  c.scale_up_goodput = core::Bandwidth{c.scale_up_line.bits_per_second * c.roce_efficiency};
  c.scale_out_line = core::Bandwidth{port_bps * c.scale_out_ports_per_chip};
  c.scale_out_goodput = core::Bandwidth{c.scale_out_line.bits_per_second * c.roce_efficiency};
  c.box_scale_out_line = core::Bandwidth{c.scale_out_line.bits_per_second * c.chips_per_box};
  const int n = c.chips_per_box;
  c.all_reduce_algbw_ceiling =
      n > 1 ? core::Bandwidth{c.scale_up_goodput.bits_per_second * n / (2.0 * (n - 1))}
            : core::Bandwidth{};
  return c;
}

}  // namespace podsim::system
