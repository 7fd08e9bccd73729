// A simple memory behind a TLM target socket: one bandwidth shared by all initiators plus a fixed
// latency. It stands in for chip memory until a detailed model (HBM) takes its place, so bulk
// traffic through it (NIC payload, DMA) already pays for memory bandwidth.
// Captures: loosely timed b_transport where transfers serialize on the memory's bandwidth
// (BandwidthServer), functional contents in a SparseMemory, and a timing-only mode that moves no
// data yet gives identical timing. Ignores: banks, refresh, read/write turnaround, DMI, byte
// enables (TLM_BYTE_ENABLE_ERROR_RESPONSE) and streaming (TLM_BURST_ERROR_RESPONSE).
#pragma once

#include <tlm_utils/multi_passthrough_target_socket.h>

#include <systemc>
#include <tlm>

#include "core/bandwidth_server.h"
#include "core/sparse_memory.h"
#include "core/stats.h"
#include "core/units.h"

namespace podsim::core {

struct MemoryTargetConfig {
  ByteSize size{1ULL << 30};
  Bandwidth bandwidth{100e9 * 8};  // 100 GB/s
  Duration latency{100000};        // 100 ns
  ByteSize page_size{4096};        // granularity of the sparse backing store
  bool functional = true;          // false: timing only, contents are not kept
  // Functional, and also serves accesses without data (a timing-only system's payload) for
  // their time alone: a memory that holds command buffers and descriptors in either mode.
  bool timing_only_payload = false;

  // Throws std::invalid_argument naming the offending field.
  void validate() const;
};

class MemoryTarget : public sc_core::sc_module {
 public:
  // Any number of initiators (a NIC, DMA engines, QMANs) share the one bandwidth.
  tlm_utils::multi_passthrough_target_socket<MemoryTarget> target_socket;

  MemoryTarget(sc_core::sc_module_name name, const MemoryTargetConfig& config);

  const MemoryTargetConfig& config() const { return config_; }
  // The contents, for loaders and tests; empty in timing-only mode.
  SparseMemory& backing() { return memory_; }
  const SparseMemory& backing() const { return memory_; }
  const BandwidthServer& server() const { return server_; }

  struct Stats {
    Counter& reads;
    Counter& writes;
    Counter& bytes_read;
    Counter& bytes_written;
    TimeWeighted& busy;
  };
  const Stats& stats() const { return stats_; }

 private:
  void b_transport(int initiator, tlm::tlm_generic_payload& trans, sc_core::sc_time& delay);
  unsigned int transport_dbg(int initiator, tlm::tlm_generic_payload& trans);

  // Sets an error response and returns false when the memory cannot serve the transaction.
  bool accept(tlm::tlm_generic_payload& trans) const;
  bool in_range(std::uint64_t addr, std::uint64_t len) const;
  void move_data(tlm::tlm_generic_payload& trans);
  void account(tlm::tlm_command command, std::uint64_t bytes, const BandwidthServer::Grant& grant);
  static Stats make_stats(StatsGroup group);

  MemoryTargetConfig config_;
  SparseMemory memory_;
  BandwidthServer server_;
  Stats stats_;
};

}  // namespace podsim::core
