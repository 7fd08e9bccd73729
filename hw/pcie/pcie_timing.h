// The PCIe overhead arithmetic, without the SystemC kernel: how long a link is busy with a bulk
// write or read, and the rate a DMA engine gets from it.
// Captures: the signalling rate and encoding per generation and the lanes; SKP ordered sets; per
// TLP the framing, sequence number, 3DW/4DW header, optional ECRC and LCRC, rounded up to the
// controllers' datapath; ACK and UpdateFC DLLPs as a ratio per TLP; writes split at the max
// payload, reads at the max read request with completions of up to the max payload (or one per
// read completion boundary); posted credits limiting the bytes of writes in flight and tags
// limiting outstanding reads, each over its round trip. Ignores: 4 KiB boundary splits (bulk
// transfers are taken as aligned), replays after errors, and Gen6 FLIT mode.
//
// DLLPs are charged to the direction whose TLPs they acknowledge and credit. They physically
// travel the other way, so this is the link's cost under load in both directions at once (a
// device reading and writing host memory together), the case the DMA rates are quoted for.
#pragma once

#include <cstdint>

#include "core/units.h"
#include "hw/pcie/pcie_config.h"

namespace podsim::pcie {

// Who moves the data, from the host's point of view; the device's DMA engines drive both:
// host-to-device reads host memory (requests up, completions down), device-to-host writes it.
enum class Direction : std::uint8_t { kHostToDevice, kDeviceToHost };

enum class TlpKind : std::uint8_t { kMemoryWrite, kMemoryRead, kCompletion };

class LinkTiming {
 public:
  // Throws std::invalid_argument naming the key when the configuration is not a valid link.
  explicit LinkTiming(const PcieLinkConfig& config);

  const PcieLinkConfig& config() const { return config_; }
  // Gigatransfers per second of one lane.
  double lane_gtps() const;
  // Bytes per second the lanes carry after line encoding and SKP ordered sets.
  double data_rate() const;
  // Bytes of link time one TLP with `payload` bytes costs, its share of DLLPs included.
  double tlp_link_bytes(TlpKind kind, std::uint32_t payload) const;

  // Bytes of link time of whole streams: a bulk write of n bytes, the read requests for n bytes,
  // and the completions that return them.
  double write_link_bytes(std::uint64_t n) const;
  double read_request_link_bytes(std::uint64_t n) const;
  double completion_link_bytes(std::uint64_t n) const;
  std::uint64_t read_requests(std::uint64_t n) const;

  // Time the lanes are busy with `bytes` of link time, rounded up to a picosecond.
  core::TimePs serialize(double bytes) const;

  // How long one direction is busy with a bulk write of n bytes: its serialization, or longer
  // when the receiver's posted credits cannot cover the bytes in flight over a credit loop.
  core::TimePs write_occupancy(std::uint64_t n) const;
  // How long the completion direction is busy returning n bytes read: their serialization, or
  // longer when the tags cannot cover the reads in flight over their round trip, which includes
  // the completer's own latency.
  core::TimePs completion_occupancy(std::uint64_t n, core::TimePs completer_latency) const;

  // A bulk write across the link alone: occupancy plus latency.
  core::TimePs write_time(std::uint64_t n) const;
  // A bulk read across the link alone: the first request, the round trip, the completer's
  // latency and the completions.
  core::TimePs read_time(std::uint64_t n, core::TimePs completer_latency = 0) const;

  core::TimePs latency() const { return static_cast<core::TimePs>(config_.latency.ps); }

 private:
  // Bytes that posted credits let be in flight, or 0 when unlimited.
  std::uint64_t posted_window() const;
  core::TimePs credit_loop() const;

  PcieLinkConfig config_;
};

// The rate, in bytes per second, of a device DMA of `bytes` over a link alone (latency
// included, so small transfers get less), e.g. for "Gen4 x16 host<->device DMA rate" tables;
// the payload size is config.max_payload. Throws std::invalid_argument on a bad configuration
// or zero bytes.
double dma_rate(const PcieLinkConfig& config, Direction direction, std::uint64_t bytes);

}  // namespace podsim::pcie
