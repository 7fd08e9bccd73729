// How a system is elaborated for one run: its seed, whether real bytes move, and how frames
// cross the fabric. Kept apart from system_model.h so that command-line code names the choices
// without the models.
#pragma once

#include <cstdint>

namespace podsim::system {

// Packets through switch and link modules, or flows over the same cables and routes
// (hw/flow/flow_network.h: much faster, without congestion dynamics).
enum class NetworkMode { kPacket, kFlow };

// Chips as their blocks (queue managers, sync managers, DMA engines, driver through PCIe), or
// coarse: software that runs on chips talks to their NICs directly and times their engines by
// rate (collectives/direct_launcher.h), for scale studies; coarse chips are built without their
// engines, queue managers and sync managers (chip::Chip::Blocks::kNetworkSide).
enum class ChipModel { kDetailed, kCoarse };

struct ModelOptions {
  std::uint64_t seed = 1;
  // Real bytes move and combine in every memory and engine; false: timing only (large studies:
  // no contents are kept, and the times are the same).
  bool functional = true;
  NetworkMode network = NetworkMode::kPacket;
  ChipModel chips = ChipModel::kDetailed;
};

}  // namespace podsim::system
