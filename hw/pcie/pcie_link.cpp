#include "hw/pcie/pcie_link.h"

#include <algorithm>

#include "core/kernel.h"

namespace podsim::pcie {

namespace {

sc_core::sc_time until(core::TimePs at, core::TimePs now) {
  return sc_core::sc_time::from_value(at > now ? at - now : 0);
}

}  // namespace

PcieLink::PcieLink(sc_core::sc_module_name name, const PcieLinkConfig& config)
    : sc_module(name),
      from_host("from_host"),
      to_device("to_device"),
      from_device("from_device"),
      to_host("to_host"),
      timing_(config),
      down_(core::Bandwidth{timing_.data_rate() * 8}, core::Duration{0}),
      up_(down_),
      stats_(make_stats()) {
  from_host.register_b_transport(this, &PcieLink::downstream);
  from_device.register_b_transport(this, &PcieLink::upstream);
}

PcieLink::Stats PcieLink::make_stats() {
  core::StatsGroup g(name());
  return {g.counter("down_bytes", "B", "payload bytes carried toward the device"),
          g.counter("up_bytes", "B", "payload bytes carried toward the host")};
}

void PcieLink::downstream(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay) {
  carry(to_device, down_, down_posted_, up_, stats_.down_bytes, stats_.up_bytes, trans, delay);
}

void PcieLink::upstream(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay) {
  carry(to_host, up_, up_posted_, down_, stats_.up_bytes, stats_.down_bytes, trans, delay);
}

template <class Socket>
void PcieLink::carry(Socket& out, core::BandwidthServer& request, PostedWrites& posted,
                     core::BandwidthServer& response, core::Counter& request_bytes,
                     core::Counter& response_bytes, tlm::tlm_generic_payload& trans,
                     sc_core::sc_time& delay) {
  const core::TimePs now = core::now_ps();
  const core::TimePs arrival = now + static_cast<core::TimePs>(delay.value());
  const std::uint64_t n = trans.get_data_length();
  const core::TimePs latency = timing_.latency();
  const auto max_payload = static_cast<std::uint32_t>(timing_.config().max_payload);
  const auto first_payload = static_cast<std::uint32_t>(std::min<std::uint64_t>(n, max_payload));

  if (trans.is_write()) {
    const core::TimePs occupancy = timing_.write_occupancy(n);
    const core::TimePs start = request.occupy(posted.earliest_start(arrival), occupancy).start;
    posted.add(arrival, start + occupancy);
    const core::TimePs first =
        timing_.serialize(timing_.tlp_link_bytes(TlpKind::kMemoryWrite, first_payload));
    delay = until(start + first + latency, now);
    out->b_transport(trans, delay);
    request_bytes.add(n);
    delay = until(std::max<core::TimePs>(now + delay.value(), start + occupancy + latency), now);
    return;
  }
  if (trans.is_read()) {
    const core::TimePs one_request =
        timing_.serialize(timing_.tlp_link_bytes(TlpKind::kMemoryRead, 0));
    const core::TimePs start = request
                                   .occupy(posted.earliest_start(arrival),
                                           timing_.serialize(timing_.read_request_link_bytes(n)))
                                   .start;
    const core::TimePs at_far_side = start + one_request + latency;
    delay = until(at_far_side, now);
    out->b_transport(trans, delay);
    if (trans.get_response_status() != tlm::TLM_OK_RESPONSE) return;
    // Completions stream back as the completer produces data: they may start once the request
    // is there, yet the last cannot leave before the completer is done.
    const core::TimePs completer_done = now + static_cast<core::TimePs>(delay.value());
    const core::TimePs occupancy = timing_.completion_occupancy(
        n, completer_done > at_far_side ? completer_done - at_far_side : 0);
    const core::TimePs earliest =
        std::max(at_far_side, completer_done > occupancy ? completer_done - occupancy : 0);
    const core::TimePs cpl_start = response.occupy(earliest, occupancy).start;
    const core::TimePs last_completion =
        timing_.serialize(timing_.tlp_link_bytes(TlpKind::kCompletion, first_payload));
    response_bytes.add(n);
    delay = until(std::max(cpl_start + occupancy, completer_done + last_completion) + latency, now);
    return;
  }
  out->b_transport(trans, delay);  // TLM_IGNORE_COMMAND: nothing crosses the link
}

}  // namespace podsim::pcie
