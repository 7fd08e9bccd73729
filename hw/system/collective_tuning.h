// The table the collectives consult when a collective asks for the `auto` algorithm: rules in
// order, the first that matches the operation, the ranks' span and the size (and names an
// algorithm that can run there) wins. It sits in the system description because the best choice
// depends on the wiring, and a preset (or a user's copy of it) can carry its own; the defaults
// below come from timing-only sweeps on hls1, hls2 and hls2-pod128 (docs/collectives.md).
// The names match collectives' own (collective.h); a test keeps them in step.
#pragma once

#include <string>
#include <vector>

#include "hw/core/config_binding.h"
#include "hw/core/units.h"

namespace podsim::system {

// kBox: every pair of ranks shares a direct link (one all-to-all box); kBoxes: some pairs meet
// only over the scale-out network.
enum class Span { kAny, kBox, kBoxes };

struct TuningRule {
  std::string op = "any";
  Span span = Span::kAny;
  core::ByteSize min_bytes{0};
  core::ByteSize max_bytes{0};  // 0: no upper limit
  std::string algorithm = "ring";

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
    v.choice("algorithm", algorithm, algorithm_choices(), core::Spec("the algorithm to run"));
  }

  void check(core::ConfigChecks& c) const {
    if (max_bytes.bytes != 0 && max_bytes.bytes <= min_bytes.bytes) {
      c.fail("max_bytes", "must be above min_bytes (or 0 for no limit)");
    }
  }

  bool matches(const std::string& op_name, bool in_one_box, std::uint64_t bytes) const {
    if (op != "any" && op != op_name) return false;
    if (span != Span::kAny && (span == Span::kBox) != in_one_box) return false;
    return bytes >= min_bytes.bytes && (max_bytes.bytes == 0 || bytes < max_bytes.bytes);
  }

  static core::Choices<std::string> op_choices() {
    return names({"any", "all_reduce", "reduce_scatter", "all_gather", "broadcast", "reduce",
                  "all_to_all", "send_recv"});
  }
  static core::Choices<std::string> algorithm_choices() {
    return names({"ring", "mesh", "hierarchical", "halving_doubling", "tree"});
  }

 private:
  static core::Choices<std::string> names(std::initializer_list<const char*> list) {
    core::Choices<std::string> out;
    for (const char* name : list) out.emplace_back(name, name);
    return out;
  }
};

std::vector<TuningRule> default_tuning();

struct CollectivesConfig {
  std::vector<TuningRule> auto_rules = default_tuning();

  template <class V>
  void describe(V& v) {
    v.list("auto", auto_rules,
           core::Spec("how `auto` picks an algorithm: the first rule that matches and can run "
                      "wins; with none, all_to_all runs on the mesh and the rest on the ring")
               .source("podsim timing-only sweeps (docs/collectives.md, How auto picks)"));
  }
};

}  // namespace podsim::system
