// The host CPU as the driver will see it: programs that run as SystemC threads and reach the
// device only through the root complex (memory-mapped BAR accesses and configuration accesses
// through ECAM, each a timed b_transport the program waits for) and interrupt handlers keyed
// by the MSI data word the driver programmed into the device's MSI-X table.
// Captures: uncached MMIO (a read stalls the program for the round trip; a write too, which
// is conservative for posted writes), a fixed core-to-root-complex latency per access, and
// handlers called at the time the message arrives. Ignores: cores, caches, write combining and
// the host's own memory traffic (programs reach host memory directly through HostMemory's
// backing store, as a driver's CPU writes would be coherent).
#pragma once

#include <tlm_utils/simple_initiator_socket.h>

#include <cstdint>
#include <functional>
#include <map>
#include <systemc>
#include <tlm>

#include "core/config_binding.h"
#include "core/units.h"
#include "hw/host/root_complex.h"

namespace podsim::host {

struct HostCpuConfig {
  core::Duration uncore_latency{40000};  // 40 ns
  // What the host's software does with training's gradients, as rates (host-staged strategies:
  // training/data_parallel.h): summing buffers in host memory, and an optimizer's update.
  core::Bandwidth reduce_bandwidth{25.6e9 * 8};
  core::Bandwidth update_bandwidth{51.2e9 * 8};

  template <class V>
  void describe(V& v) {
    v.field("uncore_latency", uncore_latency,
            core::Spec("a core's uncached access to the root complex, each way")
                .min(0)
                .source("placeholder [U]: part of the 400-500 ns MMIO read round trip of [P3]"));
    v.field("reduce_bandwidth", reduce_bandwidth,
            core::Spec("bytes of result per second the CPU sums buffers into one at (MPI's "
                       "reductions of staged gradients)")
                .positive()
                .source("[D] [U]: an eighth of one socket's 204.8 GB/s [P5], a reduction reading "
                        "two buffers and writing one on a few threads"));
    v.field("update_bandwidth", update_bandwidth,
            core::Spec("bytes per second an optimizer's update on the CPU reads and writes "
                       "(weights, optimizer state and gradients in host memory)")
                .positive()
                .source("[D] [U]: a quarter of one socket's 204.8 GB/s [P5]"));
  }
};

class HostCpu : public sc_core::sc_module {
 public:
  tlm_utils::simple_initiator_socket<HostCpu> to_root;

  using Program = std::function<void(HostCpu&)>;
  using Handler = std::function<void()>;

  // Binds to_root to the root complex's from_cpu. Throws std::invalid_argument on a bad
  // configuration, naming the key.
  HostCpu(sc_core::sc_module_name name, const HostCpuConfig& config, RootComplex& root);

  // Runs `program` in its own thread, from the start of simulation (or now, if it runs).
  void run(Program program);

  // From a program's thread only: each waits until the access completes and returns its status
  // (TLM_ADDRESS_ERROR_RESPONSE for addresses nothing claims).
  tlm::tlm_response_status read(std::uint64_t address, void* data, std::uint32_t length);
  tlm::tlm_response_status write(std::uint64_t address, const void* data, std::uint32_t length);
  tlm::tlm_response_status config_read32(int bus, std::uint32_t offset, std::uint32_t& value);
  tlm::tlm_response_status config_write32(int bus, std::uint32_t offset, std::uint32_t value);

  // `handler` runs when an MSI with this data word arrives; others count as spurious. An empty
  // handler forgets the word (a driver going away).
  void on_interrupt(std::uint32_t data, Handler handler);
  std::uint64_t spurious_interrupts() const { return spurious_; }

 private:
  tlm::tlm_response_status access(tlm::tlm_command command, std::uint64_t address,
                                  std::uint8_t* data, std::uint32_t length);
  void interrupt(std::uint32_t data);

  HostCpuConfig config_;
  RootComplex& root_;
  std::map<std::uint32_t, Handler> handlers_;
  std::uint64_t spurious_ = 0;
  int programs_ = 0;
};

}  // namespace podsim::host
