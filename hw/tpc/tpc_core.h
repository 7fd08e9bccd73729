// One TPC core as a block of the chip: its configuration registers in Gaudi1's TPC CFG layout
// (tensor descriptors, the kernel's address, its slice of the index space, scalar arguments,
// the sync object written at the end; hw/chip/spec/gaudi1.yaml), written by its QMAN; writing
// TPC_EXECUTE starts the kernel: the core fetches the binary through the NoC (an instruction
// cache: a binary is decoded once for every core of the system), runs it bundle by bundle
// (executor.h) with the pipeline's timing (pipeline_timer.h), reaching global memory in bulk
// transactions through the NoC (access_unit.h), and at the end writes the sync object.
// Captures: kernels queued behind a running one, the engine side band for its QMAN, faults
// (a bad binary or descriptor, an access outside the memory map) raised as error events with
// the kernel stopped, the hazard checking mode, tile reuse in timing-only runs, stats and a
// trace span per kernel. Ignores: instruction-cache misses after the fetch, the LFSR as a hidden
// register (podsim's lfsr steps a state held in a vector register), LUTs and semaphores, and
// Gaudi's real bit layouts of TENSOR_CONFIG and STATUS (podsim's own; docs/tpc/core.md). Runs on
// the shared core::EventQueue: a core executes bundles up to a quantum ahead of the kernel, then
// yields. With tpc.core.vpu_model rtl the core owns the RTL vector ALU (rtl/rtl_vector_alu.h) and
// executes in a SystemC thread of its own, which the RTL needs to answer; the time is the same.
#pragma once

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <systemc>
#include <vector>

#include "core/stats.h"
#include "hw/engine/engine_shell.h"
#include "hw/tpc/access_unit.h"
#include "hw/tpc/executor.h"
#include "hw/tpc/pipeline_timer.h"
#include "hw/tpc/rtl/rtl_vector_alu.h"
#include "hw/tpc/tpc_config.h"
#include "hw/tpc/vpu.h"

namespace podsim::tpc {

// The core's sockets (memory: binaries, tensors and the sync object through the NoC; registers
// at offsets from the block's base), job queue and side band are the engine shell's
// (hw/engine/engine_shell.h).
class TpcCore : public engine::EngineShell, private MemoryTransport {
 public:
  // Bytes of address space the register block covers.
  static constexpr std::uint64_t kRegisterSpan = 0x2000;

  // `functional`: real bytes move; otherwise only time. Throws std::invalid_argument on a bad
  // configuration, naming the key.
  TpcCore(sc_core::sc_module_name name, const TpcCoreConfig& config, bool functional);
  ~TpcCore() override;

  // The RTL vector ALU when vpu_model is rtl, else nullptr.
  const RtlVectorAlu* rtl_alu() const { return rtl_alu_.get(); }
  const TpcCoreConfig& config() const { return config_; }

  struct Stats {
    core::Counter& kernels;
    core::Counter& failed;
    core::Counter& bundles;
    core::Counter& busy_ps;
    core::Counter& load_stall_ps;
    core::Counter& store_stall_ps;
    core::Counter& bytes_read;
    core::Counter& bytes_written;
    core::Counter& reused_tiles;
    // Instructions issued per slot (replayed tiles included).
    core::Counter& load_ops;
    core::Counter& spu_ops;
    core::Counter& vpu_ops;
    core::Counter& store_ops;
  };
  const Stats& stats() const { return stats_; }

 private:
  enum Tag : std::uint32_t { kStart, kRun, kEnd };
  struct Launch;
  struct Trace;

  std::uint32_t read_word(std::uint64_t offset) const override;
  void write_word(std::uint64_t offset, std::uint32_t value, core::TimePs at) override;
  Launch latch() const;
  void on_fire(std::uint32_t tag) override;
  void start_job() override;
  bool fetch_program(core::TimePs& ready);
  void run();
  void replay();
  void rtl_thread();
  void end_kernel(bool ok);
  void finish();
  void record_bundle(std::size_t events_before);
  std::optional<std::string> reuse_key() const;
  std::uint64_t tile_origin(int tensor) const;

  // MemoryTransport: the access unit's bulk transactions.
  bool read(std::uint64_t address, std::uint8_t* data, std::uint32_t bytes, core::TimePs at,
            core::TimePs& done) override;
  bool write(std::uint64_t address, const std::uint8_t* data, std::uint32_t bytes, core::TimePs at,
             core::TimePs& done) override;
  bool transfer(tlm::tlm_command command, std::uint64_t address, std::uint8_t* data,
                std::uint32_t bytes, core::TimePs at, core::TimePs& done);

  TpcCoreConfig config_;
  bool functional_;
  std::deque<Launch> queued_;
  std::unique_ptr<Launch> current_;
  bool error_ = false;
  core::TimePs kernel_start_ = 0;

  // What runs kernels, made at the first one: a pod has thousands of idle cores.
  struct Engine;
  std::unique_ptr<Engine> engine_;
  std::unique_ptr<RtlVectorAlu> rtl_alu_;
  sc_core::sc_event rtl_run_;  // wakes rtl_thread()

  // Tile reuse: the trace being recorded or replayed.
  std::shared_ptr<Trace> trace_;
  bool replaying_ = false;
  std::size_t replay_at_ = 0;
  std::uint64_t quiet_bundles_ = 0;  // bundles without memory access not yet written to the trace

  tlm::tlm_generic_payload trans_;
  Stats stats_;
};

}  // namespace podsim::tpc
