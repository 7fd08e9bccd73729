// The table the communicator consults when a collective asks for the `auto` algorithm: rules in
// order, the first that matches the operation, the ranks' span and the size (and names an
// algorithm that can run there) wins. A system file carries it under `collectives:` because the
// best choice depends on the wiring (system_file.h); the defaults below come from timing-only
// sweeps on hls1, hls2 and hls2-pod128 (docs/collectives.md). Its names are collective.h's.
#pragma once

#include <optional>
#include <vector>

#include "collectives/collective.h"
#include "core/config_binding.h"
#include "core/units.h"

namespace podsim::collectives {

// kBox: every pair of ranks shares a direct link (one all-to-all box); kBoxes: some pairs meet
// only over the scale-out network.
enum class Span { kAny, kBox, kBoxes };

struct TuningRule {
  std::optional<Op> op;  // none: any operation
  Span span = Span::kAny;
  core::ByteSize min_bytes{0};
  core::ByteSize max_bytes{0};  // 0: no upper limit
  int min_boxes = 1;            // the ranks span at least this many boxes
  Algorithm algorithm = Algorithm::kRing;
  // For the hierarchical algorithm: the algorithm of its phase across the boxes.
  Algorithm across = Algorithm::kRing;

  template <class V>
  void describe(V& v) {
    v.choice("op", op, op_choices(), core::Spec("the operation the rule is for, or any"));
    v.choice("span", span,
             core::Choices<Span>{{"any", Span::kAny}, {"box", Span::kBox}, {"boxes", Span::kBoxes}},
             core::Spec("box: every pair of ranks directly linked; boxes: some meet over the "
                        "scale-out network"));
    v.field("min_bytes", min_bytes, core::Spec("smallest size (nccl-tests' size) the rule covers"));
    v.field("max_bytes", max_bytes,
            core::Spec("sizes from this one up are not covered; 0: no upper limit"));
    v.field("min_boxes", min_boxes,
            core::Spec("the rule covers ranks over at least this many boxes").min(1));
    v.choice("algorithm", algorithm, algorithm_choices(), core::Spec("the algorithm to run"));
    v.choice(
        "across", across,
        core::Choices<Algorithm>{{"ring", Algorithm::kRing},
                                 {"halving_doubling", Algorithm::kHalvingDoubling}},
        core::Spec("with algorithm hierarchical: the algorithm of its phase across the boxes"));
  }
  void check(core::ConfigChecks& c) const;

  // For an `op_asked` of `bytes` over ranks in `boxes` boxes, all directly linked when
  // `in_one_box`.
  bool matches(Op op_asked, bool in_one_box, int boxes, std::uint64_t bytes) const;

  // "any" and every operation, by collective.h's names.
  static core::Choices<std::optional<Op>> op_choices();
  // Every algorithm but `auto`, by collective.h's names.
  static core::Choices<Algorithm> algorithm_choices();
};

std::vector<TuningRule> default_tuning();

struct TuningConfig {
  std::vector<TuningRule> auto_rules = default_tuning();
  // What coarse chips (`--chips coarse`) leave out of a collective: the host's launch through the
  // driver and the queues' start, from the collective's launch to its start on every chip.
  core::Duration coarse_launch_latency{6100000};  // 6.1 us
  // From a rank's end to when the other ranks' hosts know of it (system/host_notices.h): what a
  // collective's end, a hierarchical collective's next phase and the next collective wait for.
  core::Duration notice_latency{2000000};  // 2 us

  template <class V>
  void describe(V& v) {
    v.field("coarse_launch_latency", coarse_launch_latency,
            core::Spec("with coarse chips (--chips coarse): from a collective's launch to its "
                       "start on every chip, for the launch through the driver and the queues "
                       "that coarse chips do not model")
                .min(0)
                .source("[D] measured: the detailed chips' 1 KiB mesh all_reduce on hls2 ends "
                        "6.1 us after the coarse chips' without it (docs/collectives.md, Coarse "
                        "chips)"));
    v.field("notice_latency", notice_latency,
            core::Spec("from a rank's end to when every host knows of it: the next phase of a "
                       "hierarchical all_reduce, and the next collective, start that much after "
                       "the ranks they wait for have ended (times reported end at the ranks' own "
                       "ends)")
                .min(1)
                .source("[N7] an offloaded RDMA message between hosts takes 1-2 us one way; "
                        "the upper end, for the switch hop and the host's poll"));
    v.list("auto", auto_rules,
           core::Spec("how `auto` picks an algorithm: the first rule that matches and can run "
                      "wins; with none, all_to_all runs on the mesh and the rest on the ring")
               .source("podsim timing-only sweeps (docs/collectives.md, How auto picks)"));
  }
};

}  // namespace podsim::collectives
