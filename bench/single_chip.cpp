// One chip through the whole software stack: a transformer layer's forward and backward step
// (`podsim run --workload transformer-block`: Synapse recipes launched through the driver) with
// its per-engine breakdown and the wall time to simulate it, and the uAPI round trip (a NOP
// command submission and its wait, from a client program under the LD_PRELOAD shim) in wall
// microseconds; and the CPU time of ResNet-50's one-chip step profile (`podsim train --model
// resnet50 --ranks 1 --profile-out FILE`, 256 images; --scale divides the batch).
//
//   bench/single_chip [--podsim PATH] [--json FILE] [--scale N] [--system NAME]
//
// The chip is a Gaudi2 (hls2 chip 0) unless --system names another (hls1 for a Gaudi1); the
// round trip runs on the shim's default, a Gaudi1 of hls1, as hl-thunk's clients expect.
// --scale divides the round trips' count and the layer's sequence for a quick look; the figures
// are recorded at scale 1.
#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench/podsim_run.h"

namespace {

struct Figure {
  std::string name;
  double value;
  std::string unit;
  std::string goal;
};

// Runs the round-trip client under the shim; returns microseconds per submit + wait.
double round_trip_us(const std::string& client, const std::string& shim, long count) {
  const std::string out = fmt::format("/tmp/podsim-round-trip-{}.txt", ::getpid());
  const std::string command =
      fmt::format("LD_PRELOAD={} PODSIM_SYSTEM=hls1 {} {} > {}", shim, client, count, out);
  if (std::system(command.c_str()) != 0) throw std::runtime_error("failed: " + command);
  std::ifstream in(out);
  long n = 0;
  double seconds = 0;
  in >> n >> seconds;
  std::remove(out.c_str());
  if (n != count || seconds <= 0) throw std::runtime_error("no result from " + client);
  return seconds / static_cast<double>(n) * 1e6;
}

}  // namespace

int main(int argc, char** argv) {
  std::string podsim = PODSIM_BINARY, client = ROUND_TRIP_BINARY, shim = SHIM_LIBRARY;
  std::string json_file, scale_text = "1", system = "hls2";
  if (!podsim::bench::read_flags(argc, argv,
                                 {{"--podsim", &podsim},
                                  {"--json", &json_file},
                                  {"--scale", &scale_text},
                                  {"--system", &system}},
                                 "usage: single_chip [--podsim PATH] [--json FILE] [--scale N] "
                                 "[--system NAME]")) {
    return 2;
  }
  long scale = std::atol(scale_text.c_str());
  if (scale < 1) {
    std::fprintf(stderr, "single_chip: --scale must be a whole number of at least 1\n");
    return 2;
  }
  try {
    const std::uint32_t sequence = std::max<std::uint32_t>(16, 256 / scale);
    const std::vector<std::string> args{"--system",
                                        system,
                                        "run",
                                        "--workload",
                                        "transformer-block",
                                        "--steps",
                                        "3",
                                        "--batch",
                                        "2",
                                        "--sequence",
                                        std::to_string(sequence),
                                        "--hidden",
                                        "512",
                                        "--heads",
                                        "8",
                                        "--ffn",
                                        "2048",
                                        "--dtype",
                                        "bf16"};
    const podsim::bench::PodsimRun run = podsim::bench::run_podsim(podsim, args);
    const nlohmann::json& last = run.result["steps"].back();  // recipes cached: steady state
    const std::string chip = run.result["chip"].get<std::string>();
    const int tpcs = run.result["engines"]["tpc"].get<int>();
    const int mmes = run.result["engines"]["mme"].get<int>();
    const double step_us = last["step_ps"].get<double>() * 1e-6;
    const double device_us = last["device_ps"].get<double>() * 1e-6;
    const auto busy = [&](const char* key) { return last[key].get<double>() * 1e-6; };
    fmt::print("{} ({} chip 0) through the driver and Synapse, lazy mode, bf16\n", chip, system);
    fmt::print("transformer layer: batch 2, sequence {}, hidden 512, 8 heads, ffn 2048\n",
               sequence);
    fmt::print("  {:<40} {:>12.2f} us\n", "step (inputs in, forward, backward, out)", step_us);
    fmt::print("  {:<40} {:>12.2f} us\n", "recipe launches on the device", device_us);
    const double tpc_fraction = busy("tpc_busy_ps") / (tpcs * device_us);
    const double mme_fraction = busy("mme_busy_ps") / (mmes * device_us);
    fmt::print("  {:<40} {:>12.2f} us ({:.1f}% of {} x device)\n",
               fmt::format("TPC busy, summed over {}", tpcs), busy("tpc_busy_ps"),
               100 * tpc_fraction, tpcs);
    fmt::print("  {:<40} {:>12.2f} us ({:.1f}% of {} x device)\n",
               fmt::format("MME busy, summed over {}", mmes), busy("mme_busy_ps"),
               100 * mme_fraction, mmes);
    fmt::print("  {:<40} {:>12.2f} us\n", "DMA busy, summed", busy("dma_busy_ps"));
    fmt::print("  {:<40} {:>12.3f} MB\n", "HBM traffic", last["hbm_bytes"].get<double>() * 1e-6);
    fmt::print("  {:<40} {:>12.2f} s ({} steps, set-up included)\n", "wall time to simulate",
               run.wall_seconds, 3);
    const long count = std::max(1000L, 100000L / scale);
    const double us = round_trip_us(client, shim, count);
    fmt::print("uAPI round trip (NOP CS submit + WAIT_CS, shim): {:.1f} us wall per pair over {}\n",
               us, count);
    const std::string profile = fmt::format("/tmp/podsim-single-chip-{}.json", ::getpid());
    const std::uint32_t images = std::max<std::uint32_t>(8, 256 / scale);
    const podsim::bench::PodsimRun resnet = podsim::bench::run_podsim(
        podsim, {"--system", system, "train", "--model", "resnet50", "--batch",
                 std::to_string(images), "--ranks", "1", "--profile-out", profile});
    std::remove(profile.c_str());
    fmt::print("ResNet-50 one-chip step profile, {} images: {:.1f} s of CPU ({:.1f} s wall)\n",
               images, resnet.cpu_seconds, resnet.wall_seconds);
    const auto name = [&](const char* what) {
      return fmt::format("{} transformer layer {}", chip, what);
    };
    const std::vector<Figure> figures{
        {name("step simulated time"), step_us, "us", "report"},
        {name("device time of the launches"), device_us, "us", "report"},
        {name("tpc busy fraction"), tpc_fraction, "1", "report"},
        {name("mme busy fraction"), mme_fraction, "1", "report"},
        {name("dma busy time summed over engines"), busy("dma_busy_ps"), "us", "report"},
        {name("hbm traffic per step"), last["hbm_bytes"].get<double>() * 1e-6, "MB", "report"},
        {name("wall seconds to simulate three steps"), run.wall_seconds, "s", "report"},
        {"uapi nop cs submit and wait round trip wall time", us, "us", "report"},
        {fmt::format("{} resnet50 one-chip step profile cpu time at {} images", chip, images),
         resnet.cpu_seconds, "s", "< 60"},
    };
    if (!json_file.empty()) {
      nlohmann::json j;
      for (const Figure& f : figures)
        j["figures"].push_back(
            {{"name", f.name}, {"value", f.value}, {"unit", f.unit}, {"goal", f.goal}});
      std::ofstream(json_file) << j.dump(2) << "\n";
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "single_chip: %s\n", e.what());
    return 1;
  }
  return 0;
}
