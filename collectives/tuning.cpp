#include "collectives/tuning.h"

namespace podsim::collectives {

void TuningRule::check(core::ConfigChecks& c) const {
  if (max_bytes.bytes != 0 && max_bytes.bytes <= min_bytes.bytes) {
    c.fail("max_bytes", "must be above min_bytes (or 0 for no limit)");
  }
}

bool TuningRule::matches(Op op_asked, bool in_one_box, int boxes, std::uint64_t bytes) const {
  if (op && *op != op_asked) return false;
  if (boxes < min_boxes) return false;
  if (span != Span::kAny && (span == Span::kBox) != in_one_box) return false;
  return bytes >= min_bytes.bytes && (max_bytes.bytes == 0 || bytes < max_bytes.bytes);
}

core::Choices<std::optional<Op>> TuningRule::op_choices() {
  core::Choices<std::optional<Op>> out{{"any", std::nullopt}};
  for (Op op : kOps) out.emplace_back(to_string(op), op);
  return out;
}

core::Choices<Algorithm> TuningRule::algorithm_choices() {
  core::Choices<Algorithm> out;
  for (Algorithm a : kAlgorithms) out.emplace_back(to_string(a), a);
  return out;
}

namespace {
TuningRule rule(std::optional<Op> op, Span span, std::uint64_t max_bytes, Algorithm algorithm) {
  TuningRule r;
  r.op = op;
  r.span = span;
  r.max_bytes = core::ByteSize{max_bytes};
  r.algorithm = algorithm;
  return r;
}

// A hierarchical all-reduce below `max_bytes` over at least `min_boxes` boxes, halving-doubling
// across them.
TuningRule halving_doubling_across(std::uint64_t max_bytes, int min_boxes) {
  TuningRule r = rule(Op::kAllReduce, Span::kBoxes, max_bytes, Algorithm::kHierarchical);
  r.min_boxes = min_boxes;
  r.across = Algorithm::kHalvingDoubling;
  return r;
}
}  // namespace

// From timing-only sweeps, 4 KiB to 16 MiB (docs/collectives.md, "How auto picks"): in an hls2
// box the mesh wins from 64 KiB on (128 KiB for a reduce) and the tree below, where the mesh's
// many small commands cost more issue time than the tree's depth; across boxes halving-doubling's
// log2(n) steps win below about 512 KiB and the hierarchical all-reduce above, the tree wins small
// reduces, and the mesh everything else. Inside the hierarchical all-reduce, halving-doubling
// across the boxes beats the ring where the ring's step latencies cost more than its chunks'
// overlap and its mostly leaf-local hops save: up to 4 MiB on 4 boxes, 8 MiB on 8 to 32, 16 MiB
// on 16 (pod128) and about 64 MiB on 128 (coarse chips, flow network; docs/collectives.md).
std::vector<TuningRule> default_tuning() {
  constexpr std::uint64_t kKiB = 1024, kMiB = 1024 * kKiB;
  constexpr std::optional<Op> kAny;
  using A = Algorithm;
  return {
      rule(Op::kAllToAll, Span::kAny, 0, A::kMesh),
      rule(Op::kSendRecv, Span::kAny, 0, A::kRing),
      rule(Op::kAllReduce, Span::kBox, 64 * kKiB, A::kTree),
      rule(Op::kReduce, Span::kBox, 128 * kKiB, A::kTree),
      rule(kAny, Span::kBox, 0, A::kMesh),
      rule(Op::kAllReduce, Span::kBoxes, 512 * kKiB, A::kHalvingDoubling),
      halving_doubling_across(4 * kMiB, 2),
      halving_doubling_across(16 * kMiB, 8),
      halving_doubling_across(64 * kMiB, 64),
      rule(Op::kAllReduce, Span::kBoxes, 0, A::kHierarchical),
      rule(Op::kReduce, Span::kBoxes, 256 * kKiB, A::kTree),
      rule(kAny, Span::kBoxes, 0, A::kMesh),
  };
}

}  // namespace podsim::collectives
