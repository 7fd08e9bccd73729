// One Gaudi1 queue manager (QMAN): four streams, each a ring (PQ) of 16-byte descriptors that
// software fills and announces by writing the stream's producer index (the doorbell); the QMAN
// reads each descriptor and its command buffer over the NoC (device or host memory) and executes
// the packets (packet_codec.h): register writes to its engine (WREG_32, WREG_BULK, LIN_DMA),
// messages to any address (MSG_LONG, MSG_PROT, MSG_SHORT from a CP_MSG_BASE), fences on its
// fence counters (which monitors' payload writes raise), nested buffers run by the lower command
// processor (CP_DMA), loops (REPEAT), predicates (LOAD_AND_EXE), arbitration (ARB_POINT).
// Captures: the QMAN register block of gaudi1.yaml at relative offsets; one bulk read per
// descriptor and per command buffer, whose delays count; a per-packet issue time; writes whose
// delay is what the NoC returns; engine, register and message barriers; streams sharing one
// issue slot, handed round robin at buffer ends, ARB_POINTs and waits; PQ_CI advanced as
// buffers complete (completion entries and MSIs are the driver's MSG_PROT packets); errors
// (an undefined or truncated packet, a rejected access, a fence past its timeout) raised as
// core::ErrorEvents while the faulting stream drops the rest of its buffer and goes on with its
// next descriptor; GLBL_CFG1's stops (a stopped stream fetches nothing more) and flushes (the
// stream drops its buffer and queued descriptors). Ignores: prefetching the next buffer while one
// executes, protection, the credit and in-flight limits of PQ_CFG1, weighted and priority
// arbitration, and the engines' own timing (an attached core::EngineStatus says when they are
// idle). Needs a functional memory: command buffers are read for their bytes. Runs on the shared
// core::EventQueue: no thread per stream (a system has thousands of QMANs).
#pragma once

#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <systemc>
#include <tlm>
#include <vector>

#include "core/config_binding.h"
#include "core/engine_status.h"
#include "core/error_event.h"
#include "core/event_queue.h"
#include "core/stats.h"
#include "core/trace.h"
#include "core/units.h"
#include "hw/chip/spec/packet_codec.h"
#include "hw/chip/sync_register_access.h"
#include "podsim/spec/gaudi1.h"

namespace podsim::chip {

struct QmanConfig {
  // The engine's register block: WREG_32 and WREG_BULK offsets and LIN_DMA's CP_LDMA_*_OFFSET
  // values are relative to it.
  core::Address engine_base{0};
  core::Duration packet_time{4000};
  core::Duration fence_timeout{1000000000000};
  core::Frequency clock{1.5e9};
  core::ByteSize max_cb_size{2 << 20};

  template <class V>
  void describe(V& v) {
    v.field("engine_base", engine_base,
            core::Spec("chip address of the engine's register block (e.g. DMA0_CORE)")
                .source("[C8] tests/gaudi: WREG_32 offsets are taken from the engine block's "
                        "base; [C9] CP_LDMA_*_OFFSET values are engine-block offsets"));
    v.field("packet_time", packet_time,
            core::Spec("issue time of one packet, once the packet's barriers allow it")
                .min(0)
                .source("placeholder [U]: a few cycles of the command processor"));
    v.field("fence_timeout", fence_timeout,
            core::Spec("a FENCE waiting longer raises an error event and drops its buffer; 0: "
                       "wait forever")
                .min(0)
                .source("placeholder [U]: far above any modeled wait, below a job timeout"));
    v.field("clock", clock,
            core::Spec("command processor clock: WAIT counts its cycles")
                .positive()
                .source("placeholder [U]: Gaudi's clock is not published; ~1.5 GHz"));
    v.field("max_cb_size", max_cb_size,
            core::Spec("largest command buffer a descriptor or CP_DMA may name")
                .range(8, 1 << 30)
                .source("placeholder [U]: bounds what a corrupt descriptor makes the model read"));
  }
};

class Qman : public sc_core::sc_module, private core::Timed {
 public:
  static constexpr int kStreams = PODSIM_GAUDI1_QMAN_STREAMS;
  static constexpr int kCps = PODSIM_GAUDI1_QMAN_CPS;
  static constexpr int kLowerCp = kCps - 1;  // runs CP_DMA buffers
  static constexpr int kFences = PODSIM_GAUDI1_QMAN_FENCES;
  // Bytes of address space the register block covers: its last register, rounded up to 4 KiB.
  static constexpr std::uint64_t kRegisterSpan =
      (PODSIM_GAUDI1_QMAN_ARB_MST_QUIET_PER_OFFSET + 4 + 0xFFF) & ~std::uint64_t{0xFFF};

  // Registers at offsets relative to the block's base (QMAN of gaudi1.yaml).
  tlm_utils::simple_target_socket<Qman> target_socket;
  // Descriptors, command buffers, messages and engine registers: absolute chip addresses.
  tlm_utils::simple_initiator_socket<Qman> initiator_socket;

  // Throws std::invalid_argument on a bad configuration, naming the key.
  Qman(sc_core::sc_module_name name, const QmanConfig& config);
  ~Qman() override;

  // The engine behind the QMAN: engine barriers wait until it is idle.
  void attach_engine(core::EngineStatus& engine) { engine_ = &engine; }
  // What LOAD_AND_EXE's exe bit starts (a TPC or MME kernel), given the packet's etype.
  void set_execute(std::function<void(std::uint32_t etype)> execute) {
    execute_ = std::move(execute);
  }
  void set_error_sink(core::ErrorSink sink) { error_sink_ = std::move(sink); }
  const QmanConfig& config() const { return config_; }

  // A register as software reads it (tests, checks).
  std::uint32_t read_register(std::uint64_t offset) const;
  // No stream has a descriptor to run or a buffer under way.
  bool idle() const;

  struct StreamStats {
    core::Counter& packets;
    core::Counter& cbs;
    core::Counter& fence_waits;
    core::Counter& errors;
  };
  const StreamStats& stream_stats(int stream) const { return streams_.at(stream).stats; }

 private:
  enum class Phase {
    kIdle,
    kFetching,
    kReady,
    kRunning,
    kWaitTime,
    kWaitFence,
    kWaitEngine,
    kWaitLowerCp
  };
  enum Tag : std::uint32_t { kApply = 0, kStep = 1, kWake = 2, kFenceTimeout = 3 };
  // kNext: go on; kYield: give the slot to the next stream; kWaiting: done, the stream waits;
  // kRetry: not done, the packet runs again after a wait; kDone: the buffer ends (STOP);
  // kFailed: the buffer was dropped.
  enum class Outcome { kNext, kYield, kWaiting, kRetry, kDone, kFailed };

  // A command buffer under way: the PQ's, or a CP_DMA's run by the lower CP.
  struct Frame {
    std::vector<std::uint8_t> bytes;
    std::uint64_t address = 0;
    std::size_t pos = 0;
    int cp = 0;
    std::uint32_t repeat = 0;              // passes a REPEAT end may send back
    std::array<std::uint32_t, 2> loops{};  // passes taken: inner, outer
  };
  struct Stream {
    explicit Stream(StreamStats s) : stats(s) {}
    Phase phase = Phase::kIdle;
    std::vector<Frame> frames;  // [0] the PQ buffer, [1] a CP_DMA buffer
    std::uint32_t pi = 0, ci = 0;
    std::uint32_t wake_gen = 0, fence_gen = 0;
    bool fence_timer = false, fence_counted = false;
    core::TimePs fence_since = 0;  // when the wait under way began
    int fence_cp = 0, fence_id = 0;
    std::size_t packet_pos = 0;  // of the packet under way in the top buffer
    core::TimePs cb_start = 0;
    StreamStats stats;
    core::TrackId track{};
  };
  struct Cp {
    std::uint32_t predicates = 0;
    core::TimePs writes_done = 0, messages_done = 0;
  };

  // Registers
  void b_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay);
  void write_register(std::uint64_t offset, std::uint32_t value);
  std::uint32_t& reg(std::uint64_t offset) { return regs_[offset / 4]; }
  std::uint32_t reg(std::uint64_t offset) const { return regs_[offset / 4]; }
  std::uint32_t& fence_counter(int cp, int id);
  std::uint64_t msg_base(int cp, int base) const;
  std::uint32_t pq_log2_size(int s) const;
  bool stream_enabled(int s) const;
  void fence_changed(int cp, int id);
  void flush(int s);

  // Scheduling
  void fire(std::uint32_t tag) override;
  bool stale(std::uint32_t tag) const override;
  static std::uint32_t tag(Tag kind, int stream, std::uint32_t gen = 0) {
    return static_cast<std::uint32_t>(kind) << 20 | (gen & 0xFFFFu) << 4 |
           static_cast<std::uint32_t>(stream);
  }
  void schedule(core::TimePs at, Tag kind, int s, std::uint32_t gen = 0);
  void kick(int s);
  void become_ready(int s);
  void dispatch();
  void release(int s);
  void wait_until(int s, core::TimePs at);
  void run_step(int s);

  // Buffers
  void start_fetch(int s);
  bool fetch_entry(int s);
  void complete_entry(int s);
  void end_buffer(int s);
  void fail_buffer(int s, core::ErrorEvent::Kind kind, std::uint64_t address, std::string detail);
  void raise(int s, core::ErrorEvent::Kind kind, std::uint64_t address, std::string detail);
  void release_lower_cp(int s);

  // Packets
  Outcome execute(int s, const spec::Packet& p, std::size_t at);
  Outcome write(int s, std::uint64_t address, const void* data, std::uint32_t length, bool message);
  Outcome message(int s, const spec::Packet& p, std::uint64_t address);
  Outcome fence(int s, const spec::Packet& p);
  Outcome lin_dma(int s, std::size_t at);
  Outcome cp_dma(int s, const spec::Packet& p, std::size_t at);
  Outcome repeat(int s, const spec::Packet& p, std::size_t at);
  Outcome load_and_exe(int s, const spec::Packet& p);
  Outcome wait_packet(int s, const spec::Packet& p);
  bool read(int s, std::uint64_t address, std::uint8_t* data, std::uint32_t length, core::TimePs at,
            core::TimePs& done);
  bool predicate_allows(const spec::Packet& p, int cp) const;
  void trace_buffer(int s);

  QmanConfig config_;
  std::vector<std::uint32_t> regs_;
  std::vector<Stream> streams_;
  std::array<Cp, kCps> cps_{};
  int owner_ = -1;        // the stream holding the issue slot
  bool locked_ = false;   // its ARB_POINT keeps the slot through waits
  int rr_next_ = 0;       // where the round robin looks first
  int lower_owner_ = -1;  // the stream whose CP_DMA buffer the lower CP runs
  std::deque<int> lower_waiters_;
  core::TimePs issue_free_ = 0;
  TimedRegisterWrites pending_;
  spec::PacketCodec codec_;
  spec::Packet packet_{PODSIM_GAUDI1_PACKET_NOP};
  tlm::tlm_generic_payload trans_;
  core::EngineStatus* engine_ = nullptr;
  std::function<void(std::uint32_t)> execute_;
  core::ErrorSink error_sink_;
};

}  // namespace podsim::chip
