#include "hw/pcie/pcie_timing.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace podsim::pcie {

namespace {

bool is_power_of_two(int n) { return n > 0 && (n & (n - 1)) == 0; }

bool is_8b10b(Generation g) { return g == Generation::kGen1 || g == Generation::kGen2; }

// Header bytes [P1]: memory requests 3DW or 4DW by address width; completions always 3DW.
std::uint32_t header_bytes(TlpKind kind, bool address_64bit) {
  if (kind == TlpKind::kCompletion) return 12;
  return address_64bit ? 16 : 12;
}

// Framing plus sequence number [P1]: 8b/10b puts STP and END symbols around a 2-byte sequence
// number; 128b/130b folds the sequence number into a 4-byte STP token and needs no END.
std::uint32_t framing_and_sequence_bytes(Generation g) { return is_8b10b(g) ? 1 + 2 + 1 : 4; }

constexpr std::uint32_t kLcrcBytes = 4;
constexpr std::uint32_t kEcrcBytes = 4;
// A DLLP is 6 bytes plus SDP and END symbols (8b/10b) or a 2-byte SDP token (128b/130b) [P1].
constexpr double kDllpBytes = 8;

std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) { return (a + b - 1) / b; }

// Bytes of a stream of TLPs of `unit` bytes carrying n bytes (the last one shorter).
template <class Cost>
double split_cost(std::uint64_t n, std::uint64_t unit, Cost cost) {
  const std::uint64_t full = n / unit, rest = n % unit;
  return static_cast<double>(full) * cost(unit) + (rest ? cost(rest) : 0.0);
}

}  // namespace

PcieLinkConfig gen4_x16() { return PcieLinkConfig{}; }

PcieLinkConfig gen5_x16() {
  PcieLinkConfig c;
  c.generation = Generation::kGen5;
  return c;
}

void PcieLinkConfig::check(core::ConfigChecks& c) const {
  if (!is_power_of_two(lanes) || lanes > 32) c.fail("lanes", "must be 1, 2, 4, 8, 16 or 32");
  if (!is_power_of_two(max_payload)) c.fail("max_payload", "must be a power of two");
  if (!is_power_of_two(max_read_request)) c.fail("max_read_request", "must be a power of two");
  if (read_completion_boundary != 64 && read_completion_boundary != 128) {
    c.fail("read_completion_boundary", "must be 64 or 128");
  }
  if (tlp_granularity % 4 != 0) c.fail("tlp_granularity", "must be a multiple of 4 bytes");
}

LinkTiming::LinkTiming(const PcieLinkConfig& config) : config_(config) {
  core::validate_config(config_);
}

double LinkTiming::lane_gtps() const {
  switch (config_.generation) {
    case Generation::kGen1:
      return 2.5;
    case Generation::kGen2:
      return 5.0;
    case Generation::kGen3:
      return 8.0;
    case Generation::kGen4:
      return 16.0;
    case Generation::kGen5:
      return 32.0;
  }
  return 0;
}

// 8b/10b carries 8 bits per 10 transferred and a 4-symbol SKP set per 1538 symbol times at the
// longest interval; 128b/130b carries 128 per 130 and one SKP block per 375 data blocks [P1,P3].
double LinkTiming::data_rate() const {
  const bool old = is_8b10b(config_.generation);
  const double encoding = old ? 8.0 / 10.0 : 128.0 / 130.0;
  const double skp = old ? 4.0 / 1538.0 : 1.0 / 376.0;
  return lane_gtps() * 1e9 * encoding / 8.0 * config_.lanes * (1.0 - skp);
}

double LinkTiming::tlp_link_bytes(TlpKind kind, std::uint32_t payload) const {
  std::uint32_t bytes = framing_and_sequence_bytes(config_.generation) +
                        header_bytes(kind, config_.address_64bit) + payload + kLcrcBytes +
                        (config_.ecrc ? kEcrcBytes : 0);
  const auto granule = static_cast<std::uint32_t>(config_.tlp_granularity);
  bytes = (bytes + granule - 1) / granule * granule;
  const double dllps = kDllpBytes / config_.tlps_per_ack + kDllpBytes / config_.tlps_per_fc_update;
  return bytes + dllps;
}

double LinkTiming::write_link_bytes(std::uint64_t n) const {
  return split_cost(n, static_cast<std::uint64_t>(config_.max_payload), [&](std::uint64_t p) {
    return tlp_link_bytes(TlpKind::kMemoryWrite, static_cast<std::uint32_t>(p));
  });
}

std::uint64_t LinkTiming::read_requests(std::uint64_t n) const {
  return ceil_div(n, static_cast<std::uint64_t>(config_.max_read_request));
}

double LinkTiming::read_request_link_bytes(std::uint64_t n) const {
  return static_cast<double>(read_requests(n)) * tlp_link_bytes(TlpKind::kMemoryRead, 0);
}

double LinkTiming::completion_link_bytes(std::uint64_t n) const {
  const auto unit = static_cast<std::uint64_t>(
      config_.completions_at_rcb ? config_.read_completion_boundary : config_.max_payload);
  const auto one_request = [&](std::uint64_t r) {
    return split_cost(r, unit, [&](std::uint64_t p) {
      return tlp_link_bytes(TlpKind::kCompletion, static_cast<std::uint32_t>(p));
    });
  };
  return split_cost(n, static_cast<std::uint64_t>(config_.max_read_request), one_request);
}

core::TimePs LinkTiming::serialize(double bytes) const {
  return static_cast<core::TimePs>(std::ceil(bytes / data_rate() * 1e12));
}

std::uint64_t LinkTiming::posted_window() const {
  const auto headers = static_cast<std::uint64_t>(config_.posted_header_credits) *
                       static_cast<std::uint64_t>(config_.max_payload);
  const auto data = static_cast<std::uint64_t>(config_.posted_data_credits) * 16;
  if (headers == 0) return data;
  if (data == 0) return headers;
  return std::min(headers, data);
}

// A credit comes back after the TLP crossed, the receiver freed it, and the UpdateFC crossed.
core::TimePs LinkTiming::credit_loop() const {
  return 2 * latency() + static_cast<core::TimePs>(config_.fc_update_latency.ps);
}

core::TimePs LinkTiming::write_occupancy(std::uint64_t n) const {
  const core::TimePs wire = serialize(write_link_bytes(n));
  const std::uint64_t window = posted_window();
  if (window == 0 || n <= window) return wire;
  const double waits = static_cast<double>(n - window) / static_cast<double>(window);
  return std::max(wire, static_cast<core::TimePs>(std::ceil(waits * credit_loop())));
}

core::TimePs LinkTiming::completion_occupancy(std::uint64_t n,
                                              core::TimePs completer_latency) const {
  const core::TimePs wire = serialize(completion_link_bytes(n));
  const std::uint64_t requests = read_requests(n);
  const auto tags = static_cast<std::uint64_t>(config_.read_tags);
  if (requests <= tags) return wire;
  const auto mrrs = static_cast<std::uint64_t>(config_.max_read_request);
  const core::TimePs round_trip = serialize(tlp_link_bytes(TlpKind::kMemoryRead, 0)) +
                                  2 * latency() + completer_latency +
                                  serialize(completion_link_bytes(mrrs));
  const double waits = static_cast<double>(requests - tags) / static_cast<double>(tags);
  return std::max(wire, static_cast<core::TimePs>(std::ceil(waits * round_trip)));
}

core::TimePs LinkTiming::write_time(std::uint64_t n) const {
  return write_occupancy(n) + latency();
}

core::TimePs LinkTiming::read_time(std::uint64_t n, core::TimePs completer_latency) const {
  const core::TimePs first_request = serialize(tlp_link_bytes(TlpKind::kMemoryRead, 0));
  return first_request + latency() + completer_latency +
         completion_occupancy(n, completer_latency) + latency();
}

double dma_rate(const PcieLinkConfig& config, Direction direction, std::uint64_t bytes) {
  if (bytes == 0) throw std::invalid_argument("pcie::dma_rate: bytes must be greater than zero");
  const LinkTiming timing(config);
  const core::TimePs t =
      direction == Direction::kDeviceToHost ? timing.write_time(bytes) : timing.read_time(bytes);
  return static_cast<double>(bytes) / (static_cast<double>(t) * 1e-12);
}

}  // namespace podsim::pcie
