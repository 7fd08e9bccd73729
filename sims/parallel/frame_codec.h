// Frames as bytes, for the hand-over between processes of a parallel run: which link and side a
// frame left from, its plain fields (due time included) and its payload.
// Captures: an exact copy, so the receiving process delivers the very frame the sender made.
// Ignores: byte order and layout differences between machines (every process runs the same
// build on the same kind of host).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "hw/fabric/packet.h"

namespace podsim::parallel {

// Appends `packet`, sent from side `side` of topology link `link`, to `out`.
void encode_frame(std::vector<char>& out, std::uint32_t link, int side,
                  const fabric::Packet& packet);

// Calls `take(link, side, packet)` for each frame in `bytes`, in order, with a packet from the
// pool that `take` then owns. Throws std::runtime_error when the bytes end inside a frame.
void decode_frames(const char* bytes, std::size_t size,
                   const std::function<void(std::uint32_t, int, fabric::Packet*)>& take);

}  // namespace podsim::parallel
