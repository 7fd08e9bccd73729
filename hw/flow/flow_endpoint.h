// What the flow-level network hands back to the endpoints on it (NIC ports), apart from the
// network itself (flow_network.h), so that endpoints' headers stay light.
#pragma once

#include <cstdint>
#include <vector>

namespace podsim::flow {

// Directed link ids, from the source's port to the destination's.
using Route = std::vector<int>;

// What flows and deliveries come back to (a NIC).
class FlowEndpoint {
 public:
  virtual ~FlowEndpoint() = default;
  // A delivery for `port` of this endpoint, made with `token` and `what`, has come.
  virtual void flow_delivered(int port, void* token, std::uint32_t what) = 0;
  // Every byte of the flow started with `token` has left its source.
  virtual void flow_drained(void* token) = 0;
};

class FlowNetwork;

}  // namespace podsim::flow
