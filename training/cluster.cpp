#include "training/cluster.h"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <utility>

namespace podsim::training {
namespace {

// Hosts in order of first appearance with their workers.
using Hosts = std::vector<std::pair<std::string, int>>;

void add_worker(Hosts& hosts, const std::string& host, int workers) {
  for (auto& [name, count] : hosts) {
    if (name == host) {
      count += workers;
      return;
    }
  }
  hosts.emplace_back(host, workers);
}

std::string chip_range(int first, int count) {
  return count == 1 ? fmt::format("chip {}", first)
                    : fmt::format("chips {}-{}", first, first + count - 1);
}

// "box 2" or, with several servers a box, "box 2 server 1".
std::string server_name(int host, const BoxShape& shape) {
  if (shape.servers == 1) return fmt::format("box {}", host);
  return fmt::format("box {} server {}", host / shape.servers, host % shape.servers);
}

std::string servers_text(const BoxShape& shape) {
  const auto plural = [](int n, const char* one, const char* many) {
    return fmt::format("{} {}", n, n == 1 ? one : many);
  };
  if (shape.servers == 1) return plural(shape.boxes, "box", "boxes");
  return fmt::format(
      "{} ({} of {})", plural(shape.boxes * shape.servers, "host server", "host servers"),
      plural(shape.boxes, "box", "boxes"), plural(shape.servers, "server", "servers"));
}

Placement place(const Hosts& hosts, const BoxShape& shape, const std::string& what) {
  if (hosts.empty()) throw std::invalid_argument(what + ": no workers");
  const int servers = shape.boxes * shape.servers;
  if (static_cast<int>(hosts.size()) > servers) {
    throw std::invalid_argument(fmt::format("{}: {} hosts, but the system has {}", what,
                                            hosts.size(), servers_text(shape)));
  }
  Placement p;
  std::vector<std::string> parts;
  const int per_server = shape.per_server();
  for (std::size_t h = 0; h < hosts.size(); ++h) {
    const auto& [name, workers] = hosts[h];
    if (workers < 1 || workers > per_server) {
      throw std::invalid_argument(
          fmt::format("{}: host {} has {} workers; a {} has {} chips", what, name, workers,
                      shape.servers == 1 ? "box" : "host server", per_server));
    }
    const int first = static_cast<int>(h) * per_server;
    for (int w = 0; w < workers; ++w) p.chips.push_back(first + w);
    parts.push_back(fmt::format("{} -> {} {}", name, server_name(static_cast<int>(h), shape),
                                chip_range(first, workers)));
  }
  p.description = fmt::format("{} worker{}: {}", p.chips.size(), p.chips.size() == 1 ? "" : "s",
                              fmt::join(parts, ", "));
  return p;
}

}  // namespace

Placement place_tf_config(const std::string& json_text, const BoxShape& shape) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(json_text);
  } catch (const nlohmann::json::exception& e) {
    throw std::invalid_argument(fmt::format("TF_CONFIG: not JSON: {}", e.what()));
  }
  const auto workers =
      j.contains("cluster") ? j["cluster"].value("worker", nlohmann::json()) : nlohmann::json();
  if (!workers.is_array() || workers.empty()) {
    throw std::invalid_argument("TF_CONFIG: cluster.worker must be a list of \"host:port\"");
  }
  if (j.contains("task")) {
    const auto& task = j["task"];
    const std::string type = task.value("type", "worker");
    const long index = task.value("index", 0L);
    if (type != "worker" && type != "chief") {
      throw std::invalid_argument(fmt::format("TF_CONFIG: task type '{}': worker or chief", type));
    }
    if (type == "worker" && (index < 0 || index >= static_cast<long>(workers.size()))) {
      throw std::invalid_argument(
          fmt::format("TF_CONFIG: task index {} out of range: the cluster has {} worker{}", index,
                      workers.size(), workers.size() == 1 ? "" : "s"));
    }
  }
  Hosts hosts;
  for (const auto& w : workers) {
    if (!w.is_string()) throw std::invalid_argument("TF_CONFIG: a worker is not \"host:port\"");
    const std::string address = w.get<std::string>();
    add_worker(hosts, address.substr(0, address.rfind(':')), 1);
  }
  return place(hosts, shape, "TF_CONFIG");
}

Placement place_host_list(const std::string& list, const BoxShape& shape) {
  Hosts hosts;
  std::size_t at = 0;
  while (at <= list.size()) {
    const std::size_t comma = std::min(list.find(',', at), list.size());
    const std::string item = list.substr(at, comma - at);
    at = comma + 1;
    if (item.empty()) throw std::invalid_argument(fmt::format("hosts '{}': an empty host", list));
    const std::size_t colon = item.find(':');
    int slots = shape.per_server();
    if (colon != std::string::npos) {
      const std::string count = item.substr(colon + 1);
      std::size_t used = 0;
      try {
        slots = std::stoi(count, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used == 0 || used != count.size()) {
        throw std::invalid_argument(fmt::format("hosts '{}': '{}' is not host:slots", list, item));
      }
    }
    add_worker(hosts, item.substr(0, colon), slots);
  }
  return place(hosts, shape, fmt::format("hosts '{}'", list));
}

Placement place_nodes(int num_nodes, int devices, const BoxShape& shape) {
  if (num_nodes < 1 || devices < 1) {
    throw std::invalid_argument(
        fmt::format("num_nodes {} x devices {}: both must be at least 1", num_nodes, devices));
  }
  Hosts hosts;
  for (int n = 0; n < num_nodes; ++n) hosts.emplace_back(fmt::format("node {}", n), devices);
  return place(hosts, shape, fmt::format("num_nodes {} x devices {}", num_nodes, devices));
}

namespace {

// `count` IPUs (a power of two) in GCL's ring order from system-wide IPU `first`: a ring of one
// box's sub-ladder, or whole boxes' rings one after another (a ring over the pods' GW-Links).
// `first` is a multiple of `count` (and so of a rung, or of a box).
std::vector<int> ring_block(int first, int count, const ipulink::Ladder& ladder,
                            const BoxShape& shape) {
  std::vector<int> chips;
  const std::vector<int> ring = ipulink::ring_order(ladder, std::min(count, shape.per_box));
  for (int box_first = first; box_first < first + count; box_first += shape.per_box) {
    for (int ipu : ring) chips.push_back(box_first + ipu);
  }
  return chips;
}

// Throws unless `replicas` is a power of two that whole boxes take when larger than one, and
// `ipus` fit the system.
void check_rings(int replicas, int ipus, const BoxShape& shape) {
  if (replicas < 1 || (replicas & (replicas - 1)) != 0) {
    throw std::invalid_argument(
        fmt::format("{} replicas: GCL's rings take a power of two of them", replicas));
  }
  if (replicas > shape.per_box && replicas % shape.per_box != 0) {
    throw std::invalid_argument(fmt::format("{} replicas: more than a box takes whole boxes of {}",
                                            replicas, shape.per_box));
  }
  if (ipus > shape.boxes * shape.per_box) {
    throw std::invalid_argument(
        fmt::format("{} IPUs: the system has {} chips", ipus, shape.boxes * shape.per_box));
  }
}

std::string boxes_text(int ipus, const BoxShape& shape) {
  const int boxes = (ipus + shape.per_box - 1) / shape.per_box;
  return fmt::format("{} box{}", boxes, boxes == 1 ? "" : "es");
}

}  // namespace

Placement place_rings(int ranks, const ipulink::Ladder& ladder, const BoxShape& shape) {
  check_rings(ranks, ranks, shape);
  Placement p;
  p.chips = ring_block(0, ranks, ladder, shape);
  p.description = fmt::format("{} replica{} in IPU-Link ring order over {}", ranks,
                              ranks == 1 ? "" : "s", boxes_text(ranks, shape));
  return p;
}

Placement place_pipeline(int ipus, int stages, const ipulink::Ladder& ladder,
                         const BoxShape& shape) {
  if (stages < 1 || ipus % stages != 0) {
    throw std::invalid_argument(
        fmt::format("{} IPUs in pipelines of {} stages: the IPUs must be a multiple of the stages",
                    ipus, stages));
  }
  const int replicas = ipus / stages;
  check_rings(replicas, ipus, shape);
  Placement p;
  for (int s = 0; s < stages; ++s) {
    const std::vector<int> block = ring_block(s * replicas, replicas, ladder, shape);
    p.chips.insert(p.chips.end(), block.begin(), block.end());
  }
  p.description = fmt::format(
      "{} replica{} pipelined over {} IPUs each, on {}: stage s on IPUs {}s to {}s + {}, in "
      "IPU-Link ring order",
      replicas, replicas == 1 ? "" : "s", stages, boxes_text(ipus, shape), replicas, replicas,
      replicas - 1);
  return p;
}

}  // namespace podsim::training
