// Training at scale: one data-parallel step (hccl strategy, no step-0 broadcast) of ResNet-50 and
// the GPT-style model (BERT-Large and the MNIST net with --models) at 8, 64, 256 and 1024 Gaudi2s
// (hls2, hls2-pod128, hls2-rack8x and hls2-rack16x, the first N chips of each), each point a podsim
// process of its own over one compute profile measured first; prints samples/s and efficiency
// against linear scaling with the wall time of each point, in flow mode with coarse chips and, with
// --networks packet, packet by packet. The goals for the 1024-chip point of one step on one
// core: under 10 minutes packet by packet, under 30 s in flow mode.
//
//   bench/training_scale [--podsim PATH] [--json FILE] [--models A,B] [--points N,N,...]
//                        [--networks flow,packet] [--layers N] [--solve-interval T]
//                        [--packet-replay exact|congested] [--packet-chips coarse|detailed]
//
// Every point runs on coarse chips (the collectives' engines timed by rate) unless
// --packet-chips detailed puts the packet points on detailed ones. Packet points replay equal
// collectives after ECN marks too (`podsim train --replay-congested`, approximate; docs/training.md
// measures its agreement) unless --packet-replay exact, which simulates every collective once a
// switch has marked (exact, and far slower from 256 chips).
// --layers cuts each transformer model's depth for a quick look; the figures are recorded without
// it. --solve-interval is the flow network's (network.flow_solve_interval; 0ns, exact, by default:
// an interval batches changes into fewer solves but seldom saves time, docs/network.md).
#include <fmt/format.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "bench/podsim_run.h"

namespace {

using podsim::bench::run_podsim;

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream s(text);
  for (std::string item; std::getline(s, item, ',');) out.push_back(item);
  return out;
}

// The smallest preset with at least `chips` chips.
std::string system_for(int chips) {
  if (chips <= 8) return "hls2";
  if (chips <= 128) return "hls2-pod128";
  if (chips <= 512) return "hls2-rack8x";
  return "hls2-rack16x";
}

struct Figure {
  std::string name;
  double value;
  std::string unit, goal;
};

}  // namespace

int main(int argc, char** argv) {
  std::string podsim = PODSIM_BINARY, json_file, models_text = "resnet50,gpt",
              points_text = "8,64,256,1024", networks_text = "flow", layers, solve_interval = "0ns",
              packet_replay = "congested", packet_chips = "coarse";
  if (!podsim::bench::read_flags(argc, argv,
                                 {{"--podsim", &podsim},
                                  {"--json", &json_file},
                                  {"--models", &models_text},
                                  {"--points", &points_text},
                                  {"--networks", &networks_text},
                                  {"--layers", &layers},
                                  {"--solve-interval", &solve_interval},
                                  {"--packet-replay", &packet_replay},
                                  {"--packet-chips", &packet_chips}},
                                 "usage: training_scale [--podsim PATH] [--json FILE] [--models "
                                 "A,B] [--points N,N,...] [--networks flow,packet] [--layers N] "
                                 "[--solve-interval T] [--packet-replay exact|congested] "
                                 "[--packet-chips coarse|detailed]")) {
    return 2;
  }
  if (packet_replay != "exact" && packet_replay != "congested") {
    std::fprintf(stderr, "training_scale: --packet-replay %s: exact or congested\n",
                 packet_replay.c_str());
    return 2;
  }
  if (packet_chips != "coarse" && packet_chips != "detailed") {
    std::fprintf(stderr, "training_scale: --packet-chips %s: coarse or detailed\n",
                 packet_chips.c_str());
    return 2;
  }
  std::vector<int> points;
  try {
    for (const auto& p : split(points_text)) points.push_back(std::stoi(p));
  } catch (const std::exception&) {
    std::fprintf(stderr, "training_scale: --points %s: chip counts\n", points_text.c_str());
    return 2;
  }
  std::vector<Figure> figures;
  const std::string profile_file = fmt::format("/tmp/podsim-training-scale-{}.json", ::getpid());
  try {
    for (const std::string& model : split(models_text)) {
      std::vector<std::string> shape = {"--model", model};
      const bool transformer = model != "resnet50" && model != "mnist";
      if (!layers.empty() && transformer) shape.insert(shape.end(), {"--layers", layers});
      std::vector<std::string> profile_args = {"--system", "hls2", "train"};
      profile_args.insert(profile_args.end(), shape.begin(), shape.end());
      profile_args.insert(profile_args.end(), {"--profile-out", profile_file});
      const auto profiled = run_podsim(podsim, profile_args);
      fmt::print(
          "{}: compute profile measured on one Gaudi2 in {:.1f} s; flow points solve "
          "rates every {}; packet points run on {} chips and replay equal collectives {}\n",
          model, profiled.wall_seconds, solve_interval, packet_chips,
          packet_replay == "congested" ? "through congestion (approximate)" : "only exactly");
      figures.push_back(
          {fmt::format("{} compute profile wall time", model), profiled.wall_seconds, "s", "-"});
      fmt::print("{:>8} {:>6} {:>10} {:>12} {:>11} {:>9} {:>9}\n", "network", "chips", "step_ms",
                 "samples/s", "efficiency", "wall_s", "rss_GiB");
      for (const std::string& network : split(networks_text)) {
        for (int chips : points) {
          std::vector<std::string> args = {"--system", system_for(chips), "--network", network};
          if (network == "flow") {
            args.insert(args.end(), {"--set", "network.flow_solve_interval=" + solve_interval});
          }
          args.push_back("train");
          args.insert(args.end(), shape.begin(), shape.end());
          args.insert(args.end(), {"--profile", profile_file, "--ranks", std::to_string(chips),
                                   "--steps", "1", "--no-broadcast"});
          args.insert(args.end(), {"--chips", network == "flow" ? "coarse" : packet_chips});
          if (network == "packet" && packet_replay == "congested") {
            args.push_back("--replay-congested");
          }
          const auto run = run_podsim(podsim, args);
          const auto& step = run.result["steps"][0];
          const double rate = step["samples_per_s"].get<double>();
          const double eff = step["efficiency"].get<double>();
          fmt::print("{:>8} {:>6} {:>10.3f} {:>12.1f} {:>10.1f}% {:>9.1f} {:>9.2f}\n", network,
                     chips, step["step_ps"].get<double>() * 1e-9, rate, 100 * eff, run.wall_seconds,
                     run.max_rss_gib);
          const std::string at = fmt::format(
              "{} {} chips {}{}", model, chips, network,
              network == "flow"
                  ? ""
                  : fmt::format(" ({} chips{})", packet_chips,
                                packet_replay == "congested" ? ", equal collectives replayed "
                                                               "through congestion"
                                                             : ""));
          figures.push_back({at + " samples per second", rate, "samples/s", "-"});
          figures.push_back({at + " scaling efficiency", eff, "fraction", "-"});
          const char* goal = chips != 1024 ? "-" : network == "flow" ? "< 30" : "< 600";
          figures.push_back({at + " wall time of one step", run.wall_seconds, "s", goal});
        }
      }
    }
  } catch (const std::exception& e) {
    std::remove(profile_file.c_str());
    std::fprintf(stderr, "training_scale: %s\n", e.what());
    return 1;
  }
  std::remove(profile_file.c_str());
  if (!json_file.empty()) {
    nlohmann::json j;
    for (const auto& f : figures) {
      j["figures"].push_back(
          {{"name", f.name}, {"value", f.value}, {"unit", f.unit}, {"goal", f.goal}});
    }
    std::ofstream(json_file) << j.dump(2) << "\n";
  }
  return 0;
}
