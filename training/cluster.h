// Jobs described the way users launch them, mapped onto a system's chips: a TensorFlow
// TF_CONFIG (one worker per device, as HPUStrategy runs), an mpirun-style host list
// ("host1:8,host2:8": slots per host) or Lightning's num_nodes x devices. Each host (node) is
// one host server of the system, in order of first appearance: a box, or with several servers a
// box (host.servers) one of its equal blocks of chips; its workers take the server's chips in
// order. Plain C++.
#pragma once

#include <string>
#include <vector>

#include "hw/ipulink/ipu_wiring.h"

namespace podsim::training {

struct Placement {
  std::vector<int> chips;   // rank r runs on chips[r]
  std::string description;  // how: "host1 -> box 0 chips 0-7, ..."
};

// The system's shape the job is placed on.
struct BoxShape {
  int boxes = 1, per_box = 8;
  int servers = 1;  // host servers per box, each serving per_box / servers chips
  int per_server() const { return per_box / servers; }
};

// Each throws std::invalid_argument naming what is wrong: malformed text, a task index out of
// range, more hosts than host servers, more workers on a host than its server has chips.
Placement place_tf_config(const std::string& json_text, const BoxShape& shape);
Placement place_host_list(const std::string& hosts, const BoxShape& shape);
Placement place_nodes(int num_nodes, int devices, const BoxShape& shape);
// GCL's replicas on IPU-Link boxes (ladders of `ladder`): `ranks`, a power of two, take a ring
// of one box whose neighbours are linked, or whole boxes' rings one after another (a ring over
// the pods' GW-Links) [S16].
Placement place_rings(int ranks, const ipulink::Ladder& ladder, const BoxShape& shape);
// Replicas pipelined over `stages` IPUs each, `ipus` in all: stage s of every replica takes the
// s-th block of ipus / stages IPUs (a power of two), laid out as place_rings lays out that many
// replicas, so that each stage's gradients all-reduce over a ring of its own. Rank
// s * (ipus / stages) + r is replica r's stage s.
Placement place_pipeline(int ipus, int stages, const ipulink::Ladder& ladder,
                         const BoxShape& shape);

}  // namespace podsim::training
