// Turns one collective's per-rank programs (program.h) into what each chip's queue managers run,
// as HCCL does on Gaudi: command buffers of Gaudi1 packets on one stream of each DMA QMAN, DMA
// descriptors and NIC work-queue entries, all ordered by sync objects and monitors.
// Captures:
// - queues: a rank's program streams are merged onto its chip's queues (stream p on queue
//   p mod queues) in the order an estimate of the whole collective issues them; every queue then
//   runs its commands in an order some real run could take, so no command waits behind one that
//   can only run after it (no deadlock), and one rarely waits behind one that runs later;
// - a signal is a sync object; a wait arms the queue's monitor on it (payload: one onto the
//   queue's fence counter) and FENCEs; waits a queue has already passed are left out;
// - an RDMA write is a WQE posted with one MSG_LONG to the NIC doorbell: its immediate adds one
//   to the receiver's object, its acknowledgement one to the sender's `done` object;
// - a reduction or copy is cut into slices of at least min_slice bytes, at most one per engine,
//   slice i on DMA engine i, each a descriptor posted with one MSG_LONG and adding one to the
//   job's `done` object when written, so a signal that jobs raise counts slices: a job is sliced
//   only when every raise of its signal is a job of the same stream (each then waits for the one
//   before, so counts stay exact), else it runs whole on engine (stream mod engines);
// - with `tpcs`, reductions run instead as the TPC kernel library's add, min or max, slice i on
//   TPC i, queued on that TPC's QMAN (a queue after the DMA ones): its registers written with
//   WREG_BULK, TPC_EXECUTE, the kernel adding one to the job's object at its end. A TPC queue
//   first waits for whatever the job's own queue has waited for so far (it stands in for the
//   job's place in its stream); since every queue keeps the estimated order, none deadlocks;
// - a stream's jobs run in order as before: a job that touches what the job before it wrote
//   differently sliced waits for it;
// - every write's acknowledgement and every job's completion is counted, and a queue ends only
//   when what it started has finished, then adds one to the rank's done object; once every
//   queue has (nothing can write the rank's objects any more), each clears its share of them
//   and adds one again, so the objects are ready for the rank's next collective when done
//   reaches done_target, with the clearing spread over the queues rather than serial.
// Ignores: the cost of building the images (the host's time) and programs whose jobs need an
// order the sync objects cannot express (rejected with std::invalid_argument).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "collectives/program.h"
#include "hw/dma/dma_job.h"
#include "hw/tpc/tpc_registers.h"

namespace podsim::collectives {

// What the compiler needs to know of a rank's chip.
struct ChipGeometry {
  int queues = 1;                       // DMA QMANs whose stream `slot` runs the collective
  int engines = 1;                      // DMA engines jobs are sliced over, dma0 onwards
  std::uint64_t min_slice = 0;          // bytes; 0: jobs are never cut
  std::uint32_t max_buffer = 2u << 20;  // largest command buffer (the QMANs' max_cb_size)
  // TPCs reductions run on, tpc0 onwards, each a queue after the DMA ones; 0: the DMA engines.
  int tpcs = 0;
  tpc::Generation generation = tpc::Generation::kGaudi;  // theirs: the binaries they run
};

// Where the launcher put one rank's share of a collective.
struct ChipPlacement {
  std::uint32_t first_sob = 0;  // global sync object of the rank's object 0
  std::uint64_t arena = 0;      // chip address of its descriptors, WQEs and buffers
  std::uint64_t desc_base = 0;  // the DMA engines' DESC_BASE
  std::uint64_t wqe_base = 0;   // the NIC doorbell's WQE_BASE
  int slot = 0;                 // the QMAN stream
  // Monitor (monitor + queue) of every sync manager is the queue's, its payload set to the
  // queue's fence counter 0.
  std::uint32_t monitor = 0;
};

// One rank's images, to be written at its arena and queued.
struct ChipImage {
  std::vector<std::uint8_t> bytes;
  // Per queue, its command buffers (chip address, bytes), in order.
  std::vector<std::vector<std::pair<std::uint64_t, std::uint32_t>>> buffers;
};

class CommandCompiler {
 public:
  // The rank a rank's QP leads to.
  using PeerOf = std::function<int(int rank, std::uint32_t qpn)>;

  // Throws std::invalid_argument on a malformed program (a signal out of range, programs that
  // cannot finish) or one the sync objects cannot order.
  CommandCompiler(const std::vector<Program>& programs, const PeerOf& peer_of,
                  std::vector<ChipGeometry> geometry);

  int ranks() const { return static_cast<int>(ranks_.size()); }
  // Queues rank r runs on: the DMA QMANs, then the TPC QMANs (queue queues + i is TPC i's).
  int queues(int rank) const {
    const ChipGeometry& g = geometry_[static_cast<std::size_t>(rank)];
    return g.queues + g.tpcs;
  }
  int dma_queues(int rank) const { return geometry_[static_cast<std::size_t>(rank)].queues; }
  // Sync objects rank r uses (its signals, then the queues' counters, the done object last).
  std::uint32_t sobs(int rank) const { return ranks_[static_cast<std::size_t>(rank)].sobs; }
  // Relative index of the object every queue adds one to at its end, and its count once every
  // queue has ended and cleared its share of the others (it alone is left to clear).
  std::uint32_t done_sob(int rank) const { return sobs(rank) - 1; }
  std::uint32_t done_target(int rank) const { return 2 * static_cast<std::uint32_t>(queues(rank)); }
  std::uint64_t arena_bytes(int rank) const;
  // Commands of each kind, for reports and tests.
  struct Counts {
    std::uint64_t waits = 0, writes = 0, slices = 0, adds = 0, kernels = 0, clears = 0;
  };
  Counts counts(int rank) const;

  // Rank r's images, given every rank's placement (a write's immediate names an object of its
  // receiver).
  ChipImage encode(int rank, const std::vector<ChipPlacement>& placements) const;

 private:
  enum class OpKind : std::uint8_t { kWait, kWrite, kSlice, kAdd, kKernel, kClear };
  struct Op {
    OpKind kind;
    std::uint32_t sob = 0;    // kWait, kAdd, kClear: relative object
    std::uint32_t value = 0;  // kWait: threshold; kKernel: bytes of its packets
    std::uint32_t index = 0;  // kWrite: WQE, kSlice: descriptor, kKernel: kernel
    int engine = 0;           // kSlice
  };
  struct WqeSpec {
    std::uint32_t qpn;
    std::uint64_t local, remote, length;
    int peer;
    std::uint32_t peer_signal;
    std::uint32_t completion;  // relative object
  };
  struct SliceSpec {
    dma::DmaJob job;
    std::uint32_t completion;  // relative object
  };
  struct KernelSpec {
    tpc::KernelRegisters registers;  // but the binary's address and the sync object
    int binary;                      // index in RankCode::binaries
    std::uint32_t completion;        // relative object
  };
  struct RankCode {
    std::vector<std::vector<Op>> queues;
    std::vector<WqeSpec> wqes;
    std::vector<SliceSpec> slices;
    std::vector<KernelSpec> kernels;
    std::vector<std::string> binaries;  // kernel binaries, at the start of the arena
    tpc::Generation generation = tpc::Generation::kGaudi;  // the TPCs' the binaries are for
    std::uint32_t sobs = 0;
  };
  struct Position {
    std::uint32_t stream, index;
  };

  std::vector<std::vector<Position>> estimate_order(const std::vector<Program>& programs,
                                                    const PeerOf& peer_of) const;
  void compile_rank(int rank, const std::vector<Program>& programs, const PeerOf& peer_of,
                    const std::vector<Position>& order, const std::vector<std::uint32_t>& arrivals);
  std::uint64_t buffer_bytes(const std::vector<Op>& ops) const;
  static std::uint64_t binaries_bytes(const RankCode& code);
  // The packets that start kernel `k` of `code`, its binary at `binary`.
  static void encode_kernel(const KernelSpec& k, std::uint64_t binary, std::uint64_t sync_object,
                            std::vector<std::uint8_t>& out);
  // Adds a reduction's slice (elements [first, first + count) of `job`) to `code` as a kernel.
  static KernelSpec plan_kernel(RankCode& code, const Job& job, std::uint64_t first,
                                std::uint64_t count, std::uint32_t completion);

  std::vector<ChipGeometry> geometry_;
  std::vector<RankCode> ranks_;
};

}  // namespace podsim::collectives
