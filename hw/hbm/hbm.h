// The HBM of a chip behind a TLM target socket: bulk transactions (a DMA descriptor, a packet's
// payload, a tensor tile) split across every pseudo-channel and timed by the banks' rules
// (BulkEngine), with contents in a sparse store. Addresses are offsets into the HBM.
// Captures: loosely timed b_transport that never waits (it adds the time its last burst completes
// to `delay`; transactions are committed in call order), functional and timing-only modes with
// identical timing, debug transport, per-channel statistics. With `model: rate` a transaction
// instead holds one server for its bytes at the stream rate the banks' rules give (measured once,
// stream_timing) and completes an unloaded latency later: per-HBM statistics only, and no loss to
// bank conflicts or channel imbalance.
// Ignores: DMI, byte enables (TLM_BYTE_ENABLE_ERROR_RESPONSE), streaming
// (TLM_BURST_ERROR_RESPONSE), ECC and the chip's address map (the chip adds its HBM base).
#pragma once

#include <tlm_utils/multi_passthrough_target_socket.h>

#include <memory>
#include <systemc>
#include <tlm>

#include "core/bandwidth_server.h"
#include "core/sparse_memory.h"
#include "core/stats.h"
#include "core/trace.h"
#include "hw/hbm/bulk_engine.h"
#include "hw/hbm/hbm_config.h"

namespace podsim::hbm {

class Hbm : public sc_core::sc_module {
 public:
  tlm_utils::multi_passthrough_target_socket<Hbm> target_socket;

  // `functional`: payloads carry data, kept in a sparse store sized to the capacity; otherwise
  // accesses without data are served for their time alone, while what is written with data
  // (the driver's page tables, descriptors) is still kept, as the SRAM keeps command buffers.
  // Throws std::invalid_argument naming the key on a bad configuration.
  Hbm(sc_core::sc_module_name name, const HbmConfig& config, bool functional = true);
  ~Hbm() override;

  const HbmConfig& config() const { return engine_.config(); }
  std::uint64_t capacity() const { return engine_.decoder().capacity(); }
  bool functional() const { return functional_; }
  // The contents, for loaders and tests; throws std::logic_error in timing-only mode.
  core::SparseMemory& backing();
  const BulkEngine& engine() const { return engine_; }
  // Bytes read and written so far, over every channel (for reports).
  std::uint64_t bytes_moved() const;

 private:
  void b_transport(int initiator, tlm::tlm_generic_payload& trans, sc_core::sc_time& delay);
  unsigned int transport_dbg(int initiator, tlm::tlm_generic_payload& trans);
  tlm::tlm_response_status check(const tlm::tlm_generic_payload& trans) const;
  bool in_range(std::uint64_t address, std::uint64_t length) const;
  void move_data(tlm::tlm_generic_payload& trans);
  void register_stats();
  core::TimePs serve(bool write, std::uint64_t address, std::uint64_t length, core::TimePs arrival);

  // The rate model's server and what it counts; unused with the banks' model.
  struct Rate {
    core::BandwidthServer server;
    double ps_per_byte[2];  // read, write
    core::Counter reads, writes, bytes_read, bytes_written;
  };
  static Rate rate_of(const HbmConfig& config);

  // The trace's tracks: one per channel (the rate model: one for the whole HBM).
  void trace_channels();
  std::vector<core::BusySpans> busy_;
  std::uint64_t close_hook_ = 0;

  BulkEngine engine_;
  std::unique_ptr<Rate> rate_;
  bool functional_;
  std::unique_ptr<core::SparseMemory> memory_;
};

}  // namespace podsim::hbm
