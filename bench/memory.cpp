// Memory bandwidth and simulation speed: HBM streaming read and write bandwidth of each chip's
// preset beside its peak, random-access bandwidth, and how fast a full gaudi2 stream simulates
// (simulated time / wall time). Runs the HBM timing engine directly (hw/hbm/bulk_engine.h, what
// hbm::Hbm's b_transport calls), with 1 MiB transactions offered at the peak rate.
//
//   bench/memory [--json FILE] [--mib N]
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "bench/podsim_run.h"
#include "hw/hbm/bulk_engine.h"
#include "hw/pcie/pcie_timing.h"

namespace {

using podsim::core::TimePs;
using podsim::hbm::BulkEngine;
using podsim::hbm::HbmConfig;

struct Measure {
  double fraction = 0;  // of peak
  double gbytes_per_second = 0;
  double sim_per_wall = 0;
  double wall_ns_per_transaction = 0;
};

// `count` transactions of `bytes`, sequential (or at random aligned addresses), offered at the
// peak rate; the achieved rate is their bytes over the last completion.
// With `mixed`, each transaction is a read or a write at random (a NIC's payloads both ways).
Measure stream(const HbmConfig& config, bool write, std::uint64_t bytes, std::uint64_t count,
               bool random, bool mixed = false) {
  BulkEngine engine(config);
  const double peak = config.peak_bandwidth().bytes_per_second();
  const std::uint64_t capacity = engine.decoder().capacity();
  std::mt19937_64 rng(1);
  TimePs arrival = 0, done = 0;
  const auto start = std::chrono::steady_clock::now();
  for (std::uint64_t i = 0; i < count; ++i) {
    const std::uint64_t address =
        random ? rng() % (capacity / bytes) * bytes : (i * bytes) % capacity;
    const bool is_write = mixed ? (rng() & 1) != 0 : write;
    done = std::max(done, engine.access(is_write, address, bytes, arrival));
    arrival = static_cast<TimePs>(static_cast<double>(i + 1) * bytes / peak * 1e12);
  }
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double simulated = static_cast<double>(done) * 1e-12;
  const double rate = static_cast<double>(bytes * count) / simulated;
  return {rate / peak, rate / 1e9, simulated / wall, wall * 1e9 / static_cast<double>(count)};
}

void figure(nlohmann::json& out, const std::string& name, double value, const char* unit,
            const std::string& goal) {
  out["figures"].push_back({{"name", name}, {"value", value}, {"unit", unit}, {"goal", goal}});
}

// Host <-> device DMA of 64 MiB over a x16 link, from the link's overhead model.
void print_pcie(nlohmann::json& out) {
  constexpr std::uint64_t kBytes = 64ull << 20;
  fmt::print("\nPCIe x16 host <-> device DMA, {} MiB, {} B max payload\n", kBytes >> 20,
             podsim::pcie::gen4_x16().max_payload);
  const std::pair<const char*, podsim::pcie::PcieLinkConfig> links[] = {
      {"gen4", podsim::pcie::gen4_x16()}, {"gen5", podsim::pcie::gen5_x16()}};
  for (const auto& [generation, link] : links) {
    const double to_device =
        podsim::pcie::dma_rate(link, podsim::pcie::Direction::kHostToDevice, kBytes) / 1e9;
    const double to_host =
        podsim::pcie::dma_rate(link, podsim::pcie::Direction::kDeviceToHost, kBytes) / 1e9;
    fmt::print("  {} x16: host to device {:.2f} GB/s, device to host {:.2f} GB/s\n", generation,
               to_device, to_host);
    const std::string name = std::string("pcie ") + generation + " x16 ";
    const char* goal = generation == std::string("gen4") ? "24-26" : "-";
    figure(out, name + "host to device dma rate", to_device, "GB/s", goal);
    figure(out, name + "device to host dma rate", to_host, "GB/s", goal);
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::string json_file, mib = "1024";
  constexpr const char* kUsage = "usage: memory [--json FILE] [--mib N (MiB streamed per case)]";
  if (!podsim::bench::read_flags(argc, argv, {{"--json", &json_file}, {"--mib", &mib}}, kUsage)) {
    return 2;
  }
  std::uint64_t stream_mib = 0;
  try {
    stream_mib = std::stoull(mib);
  } catch (const std::exception&) {
  }
  if (stream_mib == 0 || stream_mib > (1u << 20)) {
    std::fprintf(stderr, "memory: --mib: '%s' is not a positive number of MiB\n%s\n", mib.c_str(),
                 kUsage);
    return 2;
  }
  try {
    nlohmann::json out;
    out["figures"] = nlohmann::json::array();
    const std::uint64_t tx = 1 << 20;
    fmt::print("HBM streaming, 1 MiB transactions ({} MiB per case)\n", stream_mib);
    fmt::print("{:<8} {:<6} {:>11} {:>11} {:>9} {:>11} {:>9} {:>6}\n", "chip", "memory",
               "peak GB/s", "read GB/s", "read %", "write GB/s", "write %", "goal");
    const struct {
      const char* chip;
      const char* memory;
    } chips[] = {{"gaudi1", "HBM2"}, {"gaudi2", "HBM2E"}, {"gaudi3", "HBM2E"}};
    for (const auto& c : chips) {
      const HbmConfig config = podsim::hbm::preset_for_chip(c.chip);
      const Measure read = stream(config, false, tx, stream_mib, false);
      const Measure write = stream(config, true, tx, stream_mib, false);
      const double peak = config.peak_bandwidth().bytes_per_second() / 1e9;
      fmt::print("{:<8} {:<6} {:>11.1f} {:>11.1f} {:>8.1f}% {:>11.1f} {:>8.1f}% {:>6}\n", c.chip,
                 c.memory, peak, read.gbytes_per_second, 100 * read.fraction,
                 write.gbytes_per_second, 100 * write.fraction, ">= 85%");
      const std::string what = fmt::format("{} hbm stream", c.chip);
      figure(out, what + " peak bandwidth", peak, "GB/s", "-");
      figure(out, what + " read bandwidth", read.gbytes_per_second, "GB/s", "-");
      figure(out, what + " read fraction of peak", read.fraction, "1", ">= 0.85");
      figure(out, what + " write bandwidth", write.gbytes_per_second, "GB/s", "-");
      figure(out, what + " write fraction of peak", write.fraction, "1", ">= 0.85");
    }

    const HbmConfig gaudi2 = podsim::hbm::hbm2e();
    const std::uint64_t random_count = stream_mib * 4096;  // 64-byte reads
    const Measure random = stream(gaudi2, false, 64, random_count, true);
    fmt::print("\nRandom 64 B reads, gaudi2: {:.1f} GB/s, {:.1f}% of peak (tFAW bounds it)\n",
               random.gbytes_per_second, 100 * random.fraction);
    figure(out, "gaudi2 hbm random 64 B read bandwidth", random.gbytes_per_second, "GB/s", "-");
    figure(out, "gaudi2 hbm random 64 B read fraction of peak", random.fraction, "1", "-");

    const Measure speed = stream(gaudi2, false, tx, stream_mib, false);
    fmt::print(
        "Simulation speed, full gaudi2 stream: {:.2e} simulated s per wall s (goal >= "
        "1.00e-03)\n",
        speed.sim_per_wall);
    figure(out, "gaudi2 hbm stream simulated time per wall time", speed.sim_per_wall, "1",
           ">= 0.001");

    const Measure packets = stream(gaudi2, false, 4096, stream_mib * 256, true, true);
    fmt::print(
        "Transaction cost, gaudi2, 4 KiB at random addresses (reads and writes): {:.0f} wall ns "
        "per b_transport (goal <= 300)\n",
        packets.wall_ns_per_transaction);
    figure(out, "gaudi2 hbm 4 KiB random-address transaction cost", packets.wall_ns_per_transaction,
           "ns", "<= 300");

    print_pcie(out);

    if (!json_file.empty()) std::ofstream(json_file) << out.dump(2) << "\n";
  } catch (const std::exception& e) {
    std::fprintf(stderr, "memory: %s\n", e.what());
    return 1;
  }
  return 0;
}
