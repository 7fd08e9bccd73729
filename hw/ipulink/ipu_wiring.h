// How a pod's IPUs are cabled: the IPU-Link ladder inside a pod, the GW-Links between pods, and
// the logical rings collectives run over them, all as plain graphs.
// Captures: the ladder of GCL's physical topologies [S16] (two IPUs a rung, each linked to its
// rung partner and to the IPUs above and below it in its column), closed into a torus for an
// IPU-POD64 [S14]; the IPU-Link ports each IPU then uses; rings of a power-of-two number of
// replicas whose neighbours are directly linked [S16]; which machines of two pods the GW-Links
// join, cross-connected or through GW-Link switches [S14], [S17].
// Ignores: the links' timing (they become chip-to-chip links in the system topology), the
// Sync-Links' own wiring, several rings sharing a link, and routing across pods that are not
// joined directly.
#pragma once

#include <vector>

#include "core/config_binding.h"
#include "core/units.h"
#include "hw/ipulink/ipu_config.h"

namespace podsim::ipulink {

// Rung r holds IPUs 2r (left column) and 2r + 1 (right column); a machine of four IPUs holds two
// consecutive rungs, so machine m holds IPUs 4m to 4m + 3.
struct Ladder {
  int rungs = 8;
  int links_per_rung = 2;
  int links_per_column_neighbour = 2;
  bool torus = false;

  int ipus() const { return 2 * rungs; }

  template <class V>
  void describe(V& v) {
    v.field("rungs", rungs,
            core::Spec("rungs of two IPUs")
                .range(1, 1 << 16)
                .source("[S14] IPU-POD16: 8; IPU-POD64: 32"));
    v.field("links_per_rung", links_per_rung,
            core::Spec("parallel IPU-Links between the two IPUs of a rung")
                .range(0, 64)
                .source("placeholder [U]: not published per pair; docs/ipulink.md"));
    v.field("links_per_column_neighbour", links_per_column_neighbour,
            core::Spec("parallel IPU-Links from an IPU to the one above it in its column")
                .range(0, 64)
                .source("[D] 8 front-panel ports [S14] over the 4 IPUs a machine links up or "
                        "down"));
    v.field("torus", torus,
            core::Spec("the top rung linked to the bottom one, closing both columns into loops")
                .source("[S14], [S16] IPU-POD64: torus; IPU-POD16: ladder (mesh)"));
  }

  void check(core::ConfigChecks& c) const {
    // With fewer rungs the closing link would join a rung to itself or double a column link.
    if (torus && rungs < 3) c.fail("torus", "a torus needs at least 3 rungs");
  }
};

// The IPU-POD16: four machines, 8 rungs, an open ladder.
Ladder pod16_ladder();
// The IPU-POD64: sixteen machines, 32 rungs, a torus.
Ladder pod64_ladder();

// `links` parallel IPU-Links between IPUs a < b.
struct IpuLink {
  int a = 0;
  int b = 0;
  int links = 0;
  friend bool operator==(const IpuLink& x, const IpuLink& y) {
    return x.a == y.a && x.b == y.b && x.links == y.links;
  }
};

// Every directly linked pair once, ordered by (a, b); pairs with no links are left out. Throws
// std::invalid_argument naming the key when the ladder is invalid.
std::vector<IpuLink> ladder_links(const Ladder& ladder);
// IPU-Links between IPUs a and b (0 when not directly linked, or a == b).
int links_between(const Ladder& ladder, int a, int b);
// IPU-Link ports each IPU uses, indexed by IPU.
std::vector<int> ports_per_ipu(const Ladder& ladder);
// Throws std::invalid_argument naming the IPU when one needs more ports than ipu.ipu_links.
void check_ports(const Ladder& ladder, const IpuConfig& ipu);

// A ring over `replicas` IPUs, each directly linked to the next and the last to the first: up
// the left column of the lowest replicas / 2 rungs and down the right one. A ring of 2 is a rung,
// of 1 the first IPU alone. Throws std::invalid_argument when replicas is not a power of two, is
// more than the ladder's IPUs, or the links the ring needs are missing.
std::vector<int> ring_order(const Ladder& ladder, int replicas);

// How the GW-Links of each machine reach the other pods.
enum class GwWiring {
  // Ports straight to the same machine of other pods: every port to the other pod of a pair,
  // else half of them to each neighbour of a ring of pods.
  kCrossConnected,
  // Port k of every machine to GW-Link switch k, so every pod reaches every other.
  kSwitched,
};

// Pods of the same ladder joined by their machines' GW-Links.
struct GwFabric {
  int pods = 2;
  Ladder pod = pod64_ladder();
  MachineConfig machine = m2000();
  GwWiring wiring = GwWiring::kCrossConnected;

  int machines_per_pod() const { return pod.ipus() / machine.ipus; }
  int ipus_per_pod() const { return pod.ipus(); }
  int ipus() const { return pods * pod.ipus(); }
  // A system-wide IPU number: pod p's IPUs follow pod p - 1's.
  int global_ipu(int pod_index, int ipu) const { return pod_index * pod.ipus() + ipu; }

  template <class V>
  void describe(V& v) {
    v.field("pods", pods,
            core::Spec("pods (racks) joined by GW-Links")
                .range(1, 1024)
                .source("[S14] IPU-POD128: 2 IPU-POD64; IPU-POD256: 4"));
    v.section("pod", pod, core::Spec("each pod's IPU-Link ladder"));
    v.section("machine", machine, core::Spec("the machines the pods are built from"));
    v.choice("wiring", wiring,
             core::Choices<GwWiring>{{"cross-connected", GwWiring::kCrossConnected},
                                     {"switched", GwWiring::kSwitched}},
             core::Spec("GW-Links straight between pods, or through one switch per port")
                 .source("[S14], [S17] IPU-POD128/256 cross-connected; Bow Pod256: 2 "
                         "switches"));
  }

  void check(core::ConfigChecks& c) const;
};

// Two IPU-POD64s, cross-connected.
GwFabric pod128_fabric();
// Four IPU-POD64s, cross-connected as a ring of pods.
GwFabric pod256_fabric();
// Four Bow Pod64s through 2 GW-Link switches.
GwFabric bow_pod256_fabric();

// Machine `machine` of two pods joined by GW-Links: its IPUs first_ipu to first_ipu + ipus - 1
// in each pod (the same numbers in both), over `ports` GW-Link ports of each machine.
struct GwJoin {
  int machine = 0;
  int first_ipu = 0;
  int ipus = 0;
  int ports = 0;
  // Cross-connected: the ports' rate, the pair's alone. Switched: the machine's whole GW rate,
  // which it shares among every other pod it talks to.
  core::Bandwidth bandwidth{};
  bool via_switch = false;
};

// The joins between pods p and q, one per machine; empty when the two are not joined directly
// (cross-connected pods two or more steps apart in the ring). Throws std::invalid_argument on
// an invalid fabric, pods out of range, or p == q.
std::vector<GwJoin> gw_joins(const GwFabric& fabric, int p, int q);
// A machine's GW-Link rate shared by its IPUs: what each IPU gets when all send at once.
core::Bandwidth gw_bandwidth_per_ipu(const GwFabric& fabric);

}  // namespace podsim::ipulink
