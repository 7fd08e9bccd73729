// The graph compiler: a graph (graph.h) becomes a recipe (recipe.h) for a device described by a
// Target. Passes, in order:
//  1. lowering: an MME node to one operation split by rows over the MMEs in whole array tiles
//     (by columns when its rows fill fewer tiles than there are MMEs), the tile's shape (the
//     MME's geometry) the one that takes the fewest array cycles;
//     a kernel node to its plan's launches (hw/tpc/kernels), each split over the TPCs; a copy
//     to linear DMAs shared out to the internal DMA queues; a plan's scratch buffers become
//     workspace tensors of the node;
//  2. ordering (ordering.h): the nodes in the order a list schedule on estimated durations
//     issues them (the MME's closed form, a kernel's bytes at HBM's bandwidth), so that a node
//     another engine waits for goes first and independent work fills the gaps;
//  3. pipelining: an MME node and the TPC kernel that next touches its result, reading it row
//     by row, become slices of rows, the kernel's slice s waiting only for the MME's slice s,
//     when a two-stage schedule of the slices ends sooner than the two nodes one after the other;
//  4. scheduling: one stage per launch, in that order; a stage waits for the last stage that
//     wrote what it reads, the stages that read or wrote what it writes, and the previous stage
//     of its engine class (an engine runs one job at a time; a part of a split weight gradient,
//     below, only its own engine's); waits are pruned to the latest stage of each class, so the
//     TPCs, the MMEs and the DMA run side by side where the data lets them;
//  5. memory planning: workspace tensors (and, apart, the SRAM's staging buffers, which must
//     fit the runtime's part of it) placed first-fit by lifetime: two tensors may share
//     bytes only when every stage using one ends before the first stage using the other starts
//     (by the stage graph, not just program order, since engines run in parallel);
//  6. encoding: each job's registers with addresses relative to their sections, found by
//     building the image at two placements and keeping the words that move (so the register
//     layouts stay written once, in hw/).
// Before them, a convolution's weight gradient that would leave MMEs idle (its filters fill
// fewer array tiles than there are MMEs) is split over the batch, one share per MME, each into
// f32 partial sums that TPC passes add and round to the gradient's type; operands the MME fetches
// again and again go through the on-die SRAM (a convolution's input sliced on the batch, an
// operation's right operand whole), copied there by the internal DMA engines into buffers that
// take them in turn; and fusion (fusion.h):
// chains of element-wise kernels on one shape become one TPC
// launch of a kernel the compiler writes, the intermediates kept in registers; a residual
// addition and a ReLU after a batch norm become the norm's own variants, and a ReLU's gradient
// after a max pool's backward the pool's.
// Ignores: tiling a node across engine classes, keeping results in the SRAM for the next node,
// and ops without a device kernel (the graph API only takes nodes the device runs).
#pragma once

#include <cstdint>

#include "driver/queue_map.h"
#include "synapse/graph.h"
#include "synapse/recipe.h"

namespace podsim::synapse {

// The device a recipe is compiled for: what its runtime reports (INFO HW_IP and SYNC_MANAGER)
// and the MME geometry.
struct Target {
  std::uint32_t device_id = driver::kGaudiDeviceId;  // whose queue ids the recipe names
  int tpcs = 8;                                      // enabled TPCs
  int mmes = 2;                                      // master MMEs the driver exposes as queues
  std::uint32_t mme_rows = 128;  // rows of one MME's array: GEMM rows are dealt out in these
  std::uint32_t mme_cols = 128;
  // The narrowest side of the other output tiles the array's cells form (0: none), from which
  // the compiler picks each MME node's (mme::MmeConfig::min_tile_side).
  std::uint32_t mme_min_tile_side = 0;
  std::uint32_t first_sob = 0, first_monitor = 0;  // the first the driver leaves to user space
  std::uint32_t sobs = 0, monitors = 0;            // how many from there
  int stream = 0;  // the engine QMANs' stream recipes queue on (chip.resources.runtime)
  // The TPCs' generation: the kernel binaries the recipe carries are scheduled for it.
  tpc::Generation generation = tpc::Generation::kGaudi;
  bool fuse = true;   // fuse element-wise chains (fusion.h)
  bool order = true;  // issue nodes in a list schedule's order (ordering.h), else program order
  // Pipelining (pass 3): an MME node and the TPC kernel consuming its result run in up to
  // `max_slices` slices of rows. `stage_ns` is what a slice costs beyond its share of the work
  // in the choice of the count: the handoff between dependent stages (a sync object's write,
  // the monitor's message, the next job's fetch and set-up), 0.2 to 0.6 us in the modeled chip's
  // traces, taken at 0.6 us; `max_slices` is podsim's own bound (each slice takes two sync
  // objects).
  bool pipeline = true;
  int max_slices = 8;
  double stage_ns = 600;
  // What the list schedule estimates durations from: the MME's and the TPCs' clock, HBM's
  // bandwidth (GB/s: bytes per ns); each TPC does 128 f32 flops a cycle (2048-bit vectors of
  // fused multiply-adds [S7]).
  double mme_ghz = 1.465, tpc_ghz = 1.465, hbm_gb_per_s = 1000;
  // The runtime's part of the on-die SRAM (0: the compiler stages nothing there) and what one
  // internal DMA engine copies into it (GB/s: the DMA model's default rate, not a published
  // figure).
  std::uint64_t sram_bytes = 0;
  double dma_gb_per_s = 125;
  // The internal DMA engines a copy is shared out to: DMA 2 to 7, the internal
  // ones of the chip model's eight (Gaudi1's; Gaudi2's eight EDMAs are modeled as those six).
  int copy_engines = 6;

  // The device with PCI id `device_id` (Gaudi1 or Gaudi2) as Linux's driver leaves it to user
  // space [C1], with its MME array's shape (Gaudi1 128 x 128; Gaudi2 256 x 256, whose two cores'
  // cells also form 512 x 128 and 128 x 512 tiles: the MME stack's geometries [C15]), and the
  // chip presets' clocks and HBM bandwidth (Gaudi1 1.465 GHz, 1 TB/s [S1]; Gaudi2 1.65 GHz,
  // 2.45 TB/s [S6]). Throws std::invalid_argument for another device.
  static Target of(std::uint32_t device_id);
  static Target gaudi1() { return of(driver::kGaudiDeviceId); }
};

// Throws std::invalid_argument naming the node or tensor when the graph cannot run on the
// target: a workspace tensor read before anything writes it, more stages than sync objects, a
// workspace beyond what relocations reach.
Recipe compile(const Graph& graph, const Target& target);

}  // namespace podsim::synapse
