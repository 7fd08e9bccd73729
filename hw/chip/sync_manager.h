// One Gaudi1 sync manager: its sync objects (SOBs, 15-bit counters that engines and command
// buffers set or add to) and its monitors, each armed on a group of eight objects, a mask, a
// comparison (>= or ==) and a value; when every watched object meets it, the monitor fires once:
// it writes its 32-bit payload to its payload address (a QMAN's fence register, memory, a
// completion queue) through the NoC, and must be armed again to fire again.
// Captures: the register block of gaudi1.yaml (SYNC_MNGR_OBJS) at relative offsets; writes take
// effect at their time (the writer's time plus its delay); a monitor armed on objects that
// already meet its condition fires at once; several monitors met by one write fire in index
// order; a configurable time from the write that meets a monitor to its payload write; a
// rejected payload write raises an error event; a MON_STATUS write clearing the valid bit
// disarms the monitor (how a driver cleans up). Ignores: protected monitors, trace_evict
// events, and the long-SOB and 64-bit payload modes of later chips.
// Runs on the shared core::EventQueue: no thread.
#pragma once

#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include <cstdint>
#include <systemc>
#include <tlm>
#include <vector>

#include "core/config_binding.h"
#include "core/error_event.h"
#include "core/event_queue.h"
#include "core/stats.h"
#include "core/units.h"
#include "hw/chip/spec/sync_values.h"
#include "hw/chip/sync_register_access.h"
#include "podsim/spec/gaudi1.h"

namespace podsim::chip {

struct SyncManagerConfig {
  std::uint32_t sobs = PODSIM_GAUDI1_SOBS_PER_MANAGER;
  std::uint32_t monitors = PODSIM_GAUDI1_MONITORS_PER_MANAGER;
  core::Duration fire_latency{10000};

  template <class V>
  void describe(V& v) {
    v.field("sobs", sobs,
            core::Spec("sync objects of the manager (whole groups of eight)")
                .range(PODSIM_GAUDI1_SOBS_PER_GROUP, PODSIM_GAUDI1_SOBS_PER_MANAGER)
                .source("[C2] gaudi_regs.h (SOB_OBJ_0..2047); [C4] sob_objs_regs.h"));
    v.field("monitors", monitors,
            core::Spec("monitors of the manager")
                .range(1, PODSIM_GAUDI1_MONITORS_PER_MANAGER)
                .source("[C2] gaudi_regs.h (MON_STATUS_0..511); [C4] sob_objs_regs.h"));
    v.field("fire_latency", fire_latency,
            core::Spec("from the write that meets a monitor to its payload write")
                .min(0)
                .source("placeholder [U]: a few cycles of the manager's compare logic"));
  }
  void check(core::ConfigChecks& c) const;
};

class SyncManager : public sc_core::sc_module, private core::Timed {
 public:
  // Registers at offsets relative to the block's base (SYNC_MNGR_OBJS of gaudi1.yaml).
  tlm_utils::simple_target_socket<SyncManager> target_socket;
  // Monitor payload writes, to absolute chip addresses through the NoC.
  tlm_utils::simple_initiator_socket<SyncManager> initiator_socket;

  // Bytes of address space the register block covers (its last register array's end).
  static constexpr std::uint64_t kRegisterSpan =
      PODSIM_GAUDI1_SYNC_MNGR_OBJS_MON_STATUS_OFFSET +
      std::uint64_t{PODSIM_GAUDI1_SYNC_MNGR_OBJS_MON_STATUS_COUNT} *
          PODSIM_GAUDI1_SYNC_MNGR_OBJS_MON_STATUS_STRIDE;

  // Throws std::invalid_argument on a bad configuration, naming the key.
  SyncManager(sc_core::sc_module_name name, const SyncManagerConfig& config);

  void set_error_sink(core::ErrorSink sink) { error_sink_ = std::move(sink); }
  const SyncManagerConfig& config() const { return config_; }

  // State as software would read it (tests, checks).
  std::uint32_t sob(std::uint32_t index) const { return sobs_.at(index); }
  bool monitor_armed(std::uint32_t index) const { return monitors_.at(index).armed; }

  struct Stats {
    core::Counter& sob_writes;
    core::Counter& monitor_arms;
    core::Counter& monitor_fires;
    core::Counter& errors;
  };
  const Stats& stats() const { return stats_; }

 private:
  struct Monitor {
    std::uint32_t address_low = 0, address_high = 0, data = 0, arm_raw = 0;
    spec::MonitorArm arm;
    bool armed = false;
  };

  void b_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay);
  unsigned int transport_dbg(tlm::tlm_generic_payload& trans);
  void fire(std::uint32_t tag) override;  // applies the writes whose time has come
  std::uint32_t read_register(std::uint64_t offset) const;
  void write_register(std::uint64_t offset, std::uint32_t value);
  void write_sob(std::uint32_t index, std::uint32_t raw);
  void arm(std::uint32_t index, std::uint32_t raw);
  void check_group(std::uint32_t group);
  void fire_monitor(std::uint32_t index);
  Stats make_stats();

  SyncManagerConfig config_;
  std::vector<std::uint32_t> sobs_;
  std::vector<Monitor> monitors_;
  std::vector<std::vector<std::uint32_t>> armed_by_group_;  // monitor indices, ascending
  TimedRegisterWrites pending_;
  tlm::tlm_generic_payload trans_;
  core::ErrorSink error_sink_;
  Stats stats_;
};

}  // namespace podsim::chip
