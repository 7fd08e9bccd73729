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

Placement place(const Hosts& hosts, const BoxShape& shape, const std::string& what) {
  if (hosts.empty()) throw std::invalid_argument(what + ": no workers");
  if (static_cast<int>(hosts.size()) > shape.boxes) {
    throw std::invalid_argument(fmt::format("{}: {} hosts, but the system has {} box{}", what,
                                            hosts.size(), shape.boxes,
                                            shape.boxes == 1 ? "" : "es"));
  }
  Placement p;
  std::vector<std::string> parts;
  for (std::size_t b = 0; b < hosts.size(); ++b) {
    const auto& [name, workers] = hosts[b];
    if (workers < 1 || workers > shape.per_box) {
      throw std::invalid_argument(fmt::format("{}: host {} has {} workers; a box has {} chips",
                                              what, name, workers, shape.per_box));
    }
    const int first = static_cast<int>(b) * shape.per_box;
    for (int w = 0; w < workers; ++w) p.chips.push_back(first + w);
    parts.push_back(fmt::format("{} -> box {} {}", name, b, chip_range(first, workers)));
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
    int slots = shape.per_box;
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

Placement place_rings(int ranks, const ipulink::Ladder& ladder, const BoxShape& shape) {
  if (ranks < 1 || (ranks & (ranks - 1)) != 0) {
    throw std::invalid_argument(
        fmt::format("{} replicas: GCL's rings take a power of two of them", ranks));
  }
  const int boxes = ranks <= shape.per_box ? 1 : ranks / shape.per_box;
  if (ranks > shape.per_box && ranks % shape.per_box != 0) {
    throw std::invalid_argument(
        fmt::format("{} replicas: more than a box takes whole boxes of {}", ranks, shape.per_box));
  }
  if (boxes > shape.boxes) {
    throw std::invalid_argument(
        fmt::format("{} replicas: the system has {} chips", ranks, shape.boxes * shape.per_box));
  }
  const std::vector<int> ring = ipulink::ring_order(ladder, std::min(ranks, shape.per_box));
  Placement p;
  for (int box = 0; box < boxes; ++box) {
    for (int ipu : ring) p.chips.push_back(box * shape.per_box + ipu);
  }
  p.description = fmt::format("{} replica{} in IPU-Link ring order over {} box{}", ranks,
                              ranks == 1 ? "" : "s", boxes, boxes == 1 ? "" : "es");
  return p;
}

}  // namespace podsim::training
