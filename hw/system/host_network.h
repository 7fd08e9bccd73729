// The hosts' own network as a system of its own, for collectives between hosts (MPI's or gRPC's
// rings under Horovod host-staged or a multi-worker strategy): one endpoint per host (each box's,
// or each of its host.servers, which serve equal blocks of its chips behind gateways) that
// is the host's NICs, each port on a rail of front-end switches (one switch per rail up to its
// ports, else leaves of half its ports under spines) or, with host.network.attach: scale-out, of
// the chips' leaves and spines (each host on its chips' leaf of the rail), and the host CPU's
// reduction as the endpoint's one collective engine.
// Captures: the host ports' rate, MTU and cables, the switches' sharing among hosts, TCP as frames
// within the Ethernet MTU with the kernel stack's latency on each packet, the CPU's reduction
// rate. On the chips' switches it is still simulated apart from the chips: no strategy sends the
// chips' traffic and the hosts' at once (the host-staged ones leave the chips' scale-out idle, and
// popdist's broadcast over the hosts ends before its steps), so the two would not meet.
// Ignores: TCP's own congestion control (its frames keep the NIC's DCQCN) and its CPU cost per byte
// (the reduction rate stands for the host's work); on the chips' switches, the ports the hosts take
// from the leaves' count.
#pragma once

#include <cstdint>

#include "hw/system/system_config.h"

namespace podsim::system {

// The front-end network of `system`'s hosts as a system whose chip i is host i (box i's, or
// with host.servers the i-th server counting box by box). Throws
// std::invalid_argument naming the host.network key at fault when the hosts cannot be wired
// (the network disabled while boxes need it, more hosts than leaves of half the switch's ports
// can spread over spines).
SystemConfig host_network_system(const SystemConfig& system);

// TCP's payload per frame in the model: the largest power of two a 1500-byte frame holds.
inline constexpr std::uint32_t kTcpPayload = 1024;
// TCP's traffic class: best effort, which the switches' PFC leaves lossy.
inline constexpr int kTcpPriority = 0;

}  // namespace podsim::system
