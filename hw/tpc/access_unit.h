// How a TPC core reaches global memory: the executor's loads and stores (tensor runs) become
// bulk transactions. A load that continues a tensor's stream where its last load ended is
// served from a burst (read_burst bytes, clipped to the tensor's extent) fetched when the stream
// first reached it, with `prefetch` further bursts requested ahead; any other load fetches just
// its bytes. Consecutive stores to a tensor are combined into one write of up to write_burst
// bytes, written when the run breaks, fills up, or at a fence or the kernel's end. Reads issue
// when the load pipe reaches them, writes when the vector pipe does (PipelineTimer).
// Captures: real bytes in functional mode (reads land in the burst buffers and are served from
// them; writes carry the combined bytes), the coherence the public TPC documents (a load after a
// store to the same place may see the old data until a fence), rejected accesses. Ignores:
// caches beyond a stream's bursts, bank conflicts, and the order of reads and writes inside the
// NoC beyond their issue times.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <vector>

#include "core/units.h"
#include "hw/tpc/executor.h"
#include "hw/tpc/pipeline_timer.h"

namespace podsim::tpc {

// The memory system as the access unit sees it: bulk reads and writes issued at a time; `data`
// is nullptr in a timing-only run.
class MemoryTransport {
 public:
  virtual ~MemoryTransport() = default;
  virtual bool read(std::uint64_t address, std::uint8_t* data, std::uint32_t bytes, core::TimePs at,
                    core::TimePs& done) = 0;
  virtual bool write(std::uint64_t address, const std::uint8_t* data, std::uint32_t bytes,
                     core::TimePs at, core::TimePs& done) = 0;
};

struct AccessConfig {
  std::uint32_t read_burst = 2048;
  int prefetch = 4;
  std::uint32_t write_burst = 2048;
  bool functional = true;
};

// What crossed the unit, for tile reuse: counts of bundles without memory access, and accesses
// with the address relative to their tensor's base.
struct AccessEvent {
  enum Kind : std::uint8_t { kBundles, kLoad, kStore, kFence, kBundleEnd } kind;
  std::uint8_t tensor = 0;
  std::uint32_t bytes = 0;
  std::uint64_t value = 0;  // bundles (kBundles), or the offset from the tensor's base
};

class AccessUnit : public GlobalAccess {
 public:
  AccessUnit(const AccessConfig& config, MemoryTransport& transport, PipelineTimer& timer);

  // A kernel starts: the tensors' extents (for clipping bursts), no stream open. Recorded and
  // replayed accesses are relative to `origins` (each tensor's base when none).
  void start(const std::array<TensorDescriptor, kMaxTensors>& tensors,
             const std::array<std::uint64_t, kMaxTensors>* origins = nullptr);
  // Writes what is still combined; false when a write was rejected.
  bool finish();

  bool load(int tensor, std::uint64_t address, std::uint8_t* data, std::uint32_t bytes) override;
  bool store(int tensor, std::uint64_t address, const std::uint8_t* data,
             std::uint32_t bytes) override;
  void fence() override;

  // Where every access is reported as it happens (tile recording), or none.
  void set_recorder(std::vector<AccessEvent>* events) { recorder_ = events; }
  // Replays a recorded access (no data) against this kernel's tensors.
  bool replay(const AccessEvent& e);
  // The address of the first rejected access, after a false return.
  std::uint64_t fault_address() const { return fault_; }

  struct Counters {
    std::uint64_t loads = 0, load_bytes = 0, reads = 0, read_bytes = 0;
    std::uint64_t stores = 0, store_bytes = 0, writes = 0, write_bytes = 0;
  };
  const Counters& counters() const { return counters_; }

 private:
  struct Burst {
    std::uint64_t start = 0, end = 0;
    core::TimePs ready = 0;
    std::vector<std::uint8_t> data;
  };
  struct Stream {
    std::deque<Burst> bursts;
    std::uint64_t next = ~std::uint64_t{0};  // where a continuing load starts
    std::uint64_t limit = 0;                 // the tensor's extent ends here
    std::uint64_t write_start = 0, write_end = 0;
    std::vector<std::uint8_t> write_data;
  };

  bool fetch(Stream& s, std::uint64_t start, std::uint64_t end, core::TimePs at);
  bool flush(Stream& s);
  void record(AccessEvent::Kind kind, int tensor, std::uint64_t address, std::uint32_t bytes);

  AccessConfig config_;
  MemoryTransport& transport_;
  PipelineTimer& timer_;
  std::array<Stream, kMaxTensors> streams_;
  std::array<std::uint64_t, kMaxTensors> bases_{};
  std::vector<AccessEvent>* recorder_ = nullptr;
  std::uint64_t fault_ = 0;
  Counters counters_;
};

}  // namespace podsim::tpc
