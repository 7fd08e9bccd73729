#include "workloads/lm_head.h"

#include <fmt/format.h>

#include <algorithm>

#include "workloads/values.h"

namespace podsim::workloads {

using tpc::Dtype;

std::string LmHeadConfig::problem() const {
  if (tokens == 0 || hidden == 0 || vocab == 0) return "tokens, hidden and vocab must be positive";
  if (dtype == Dtype::kI32) return "the head's type must be a float type";
  return {};
}

LmHead::LmHead(synapse::Session& session, const LmHeadConfig& config) : s_(session), c_(config) {
  const std::string problem = c_.problem();
  if (!problem.empty()) throw std::invalid_argument("lm head: " + problem);
  x_ = s_.persistent("head.x", c_.dtype, {c_.hidden, c_.tokens});
  dx_ = s_.persistent("head.dx", c_.dtype, {c_.hidden, c_.tokens});
  labels_ = s_.persistent("head.labels", Dtype::kI32, {c_.tokens});
  // The mean loss's gradient.
  dloss_ = s_.persistent("head.dloss", Dtype::kF32, {c_.tokens});
  s_.write(dloss_, std::vector<double>(c_.tokens, 1.0 / c_.tokens));
  for (std::uint32_t at = 0; at < c_.vocab; at += kShard) {
    Shard s;
    s.columns = std::min(kShard, c_.vocab - at);
    const auto n = shards_.size();
    s.table = s_.persistent(fmt::format("head.table{}", n), c_.dtype, {s.columns, c_.hidden});
    s.dtable = s_.persistent(fmt::format("head.dtable{}", n), c_.dtype, {s.columns, c_.hidden});
    shards_.push_back(s);
  }
}

void LmHead::step(bool backward) {
  const Dtype t = c_.dtype;
  const std::uint32_t tokens = c_.tokens, h = c_.hidden;
  for (std::size_t n = 0; n < shards_.size(); ++n) {
    const Shard& s = shards_[n];
    const std::string name = fmt::format("head{}", n);
    const Value logits = s_.temporary(name + ".logits", t, {s.columns, tokens});
    mme::GemmDesc g;  // x^T table: tokens x columns
    g.m = tokens;
    g.n = s.columns;
    g.k = h;
    s_.gemm(name + ".logits", x_, s.table, logits, g);
    const Value loss = s_.temporary(name + ".loss", Dtype::kF32, {tokens});
    s_.kernel(name + ".loss", request("cross_entropy", t, {s.columns, tokens}),
              {logits, labels_, loss});
    if (!backward) continue;
    const Value dlogits = s_.temporary(name + ".dlogits", t, {s.columns, tokens});
    s_.kernel(name + ".loss_bwd", request("cross_entropy_bwd", t, {s.columns, tokens}),
              {logits, labels_, dloss_, dlogits});
    mme::GemmDesc wgrad;  // x dlogits^T: hidden x columns
    wgrad.m = h;
    wgrad.n = s.columns;
    wgrad.k = tokens;
    wgrad.trans_a = true;
    s_.gemm(name + ".wgrad", x_, dlogits, s.dtable, wgrad);
    mme::GemmDesc dgrad;  // dlogits table^T: tokens x hidden, summed over the shards
    dgrad.m = tokens;
    dgrad.n = h;
    dgrad.k = s.columns;
    dgrad.trans_b = true;
    s_.gemm(name + ".dgrad", dlogits, s.table, dx_, dgrad, n > 0);
  }
  s_.mark_step();
}

}  // namespace podsim::workloads
