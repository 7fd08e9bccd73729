#include "hw/system/collective_tuning.h"

namespace podsim::system {

namespace {
TuningRule rule(const char* op, Span span, std::uint64_t max_bytes, const char* algorithm) {
  TuningRule r;
  r.op = op;
  r.span = span;
  r.max_bytes = core::ByteSize{max_bytes};
  r.algorithm = algorithm;
  return r;
}
}  // namespace

// From timing-only sweeps, 4 KiB to 16 MiB (docs/collectives.md, "How auto picks"): in an hls2
// box the mesh wins from 64 KiB on (128 KiB for a reduce) and the tree below, where the mesh's
// many small commands cost more issue time than the tree's depth; across boxes halving-doubling's
// log2(n) steps win below about 512 KiB and the hierarchical all-reduce above, the tree wins small
// reduces, and the mesh everything else.
std::vector<TuningRule> default_tuning() {
  constexpr std::uint64_t kKiB = 1024;
  return {
      rule("all_to_all", Span::kAny, 0, "mesh"),
      rule("send_recv", Span::kAny, 0, "ring"),
      rule("all_reduce", Span::kBox, 64 * kKiB, "tree"),
      rule("reduce", Span::kBox, 128 * kKiB, "tree"),
      rule("any", Span::kBox, 0, "mesh"),
      rule("all_reduce", Span::kBoxes, 512 * kKiB, "halving_doubling"),
      rule("all_reduce", Span::kBoxes, 0, "hierarchical"),
      rule("reduce", Span::kBoxes, 256 * kKiB, "tree"),
      rule("any", Span::kBoxes, 0, "mesh"),
  };
}

}  // namespace podsim::system
