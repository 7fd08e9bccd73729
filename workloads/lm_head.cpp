#include "workloads/lm_head.h"

#include <fmt/format.h>

#include <algorithm>

#include "workloads/dense.h"
#include "workloads/values.h"

namespace podsim::workloads {

using tpc::Dtype;

std::string LmHeadConfig::problem() const {
  if (tokens == 0 || hidden == 0 || vocab == 0) return "tokens, hidden and vocab must be positive";
  if (dtype == Dtype::kI32) return "the head's type must be a float type";
  if (loss_tokens > tokens)
    return fmt::format("the loss's {} tokens are more than the head's {}", loss_tokens, tokens);
  return {};
}

LmHead::LmHead(synapse::Session& session, const LmHeadConfig& config) : s_(session), c_(config) {
  const std::string problem = c_.problem();
  if (!problem.empty()) throw std::invalid_argument("lm head: " + problem);
  x_ = s_.persistent("head.x", c_.dtype, {c_.hidden, c_.tokens});
  dx_ = s_.persistent("head.dx", c_.dtype, {c_.hidden, c_.tokens});
  const std::uint32_t loss = loss_tokens();
  labels_ = s_.persistent("head.labels", Dtype::kI32, {loss});
  // The mean loss's gradient.
  dloss_ = s_.persistent("head.dloss", Dtype::kF32, {loss});
  s_.write(dloss_, std::vector<double>(loss, 1.0 / loss));
  for (std::uint32_t at = 0; at < c_.vocab; at += kShard) {
    Shard s;
    s.columns = std::min(kShard, c_.vocab - at);
    const auto n = shards_.size();
    s.table = s_.persistent(fmt::format("head.table{}", n), c_.dtype, {s.columns, c_.hidden});
    s.dtable = s_.persistent(fmt::format("head.dtable{}", n), c_.dtype, {s.columns, c_.hidden});
    if (c_.transform) {
      s.bias = s_.persistent(fmt::format("head.bias{}", n), c_.dtype, {s.columns});
      s.dbias = s_.persistent(fmt::format("head.dbias{}", n), c_.dtype, {s.columns});
    }
    shards_.push_back(s);
  }
  if (!c_.transform) return;
  const std::uint32_t h = c_.hidden;
  const std::map<std::string, std::vector<std::uint32_t>> shapes{
      {"w", {h, h}}, {"b", {h}}, {"gamma", {h}}, {"beta", {h}}};
  for (const auto& [name, shape] : shapes) {
    t_[name] = s_.persistent("head.transform." + name, c_.dtype, shape);
    t_["d" + name] = s_.persistent("head.transform.d" + name, c_.dtype, shape);
  }
}

// BERT's transform: y = layer_norm(gelu(x w + b)), every token.
LmHead::Value LmHead::transform_forward() {
  const std::uint32_t h = c_.hidden, tokens = c_.tokens;
  const Dtype t = c_.dtype;
  const Value zb = dense(s_, "head.transform", x_, t_.at("w"), t_.at("b"), {tokens, h, h, t});
  t_["a"] = s_.temporary("head.transform.a", t, {h, tokens});
  s_.kernel("head.transform.gelu", request("gelu", t, {h, tokens}), {zb, t_.at("a")});
  t_["zb"] = zb;
  t_["mean"] = s_.temporary("head.transform.mean", Dtype::kF32, {tokens});
  t_["rstd"] = s_.temporary("head.transform.rstd", Dtype::kF32, {tokens});
  const Value y = s_.temporary("head.transform.normed", t, {h, tokens});
  s_.kernel("head.transform.norm", request("layer_norm", t, {h, tokens}, {{"eps", 1e-12}}),
            {t_.at("a"), t_.at("gamma"), t_.at("beta"), y, t_.at("mean"), t_.at("rstd")});
  return y;
}

void LmHead::transform_backward(Value dy) {
  const std::uint32_t h = c_.hidden, tokens = c_.tokens;
  const Dtype t = c_.dtype;
  const Value da = s_.temporary("head.transform.da", t, {h, tokens});
  s_.kernel("head.transform.norm_bwd", request("layer_norm_bwd", t, {h, tokens}),
            {dy, t_.at("a"), t_.at("mean"), t_.at("rstd"), t_.at("gamma"), da, t_.at("dgamma"),
             t_.at("dbeta")});
  const Value dz = s_.temporary("head.transform.dz", t, {h, tokens});
  s_.kernel("head.transform.gelu_bwd", request("gelu_bwd", t, {h, tokens}), {da, t_.at("zb"), dz});
  dense_backward(s_, "head.transform", x_, t_.at("w"), dz, t_.at("dw"), t_.at("db"), &dx_,
                 {tokens, h, h, t});
}

void LmHead::step(bool backward) {
  const Dtype t = c_.dtype;
  const std::uint32_t tokens = c_.tokens, h = c_.hidden, loss_rows = loss_tokens();
  const Value x = c_.transform ? transform_forward() : x_;
  // With a transform, the decoder's gradient of its input goes to the transform's backward.
  const Value dx = c_.transform ? s_.temporary("head.dy", t, {h, tokens}) : dx_;
  for (std::size_t n = 0; n < shards_.size(); ++n) {
    const Shard& s = shards_[n];
    const std::string name = fmt::format("head{}", n);
    Value logits = s_.temporary(name + ".logits", t, {s.columns, tokens});
    mme::GemmDesc g;  // x^T table: tokens x columns
    g.m = tokens;
    g.n = s.columns;
    g.k = h;
    s_.gemm(name + ".logits", x, s.table, logits, g);
    if (c_.transform) {
      const Value biased = s_.temporary(name + ".biased", t, {s.columns, tokens});
      s_.kernel(name + ".bias", request("bias_add", t, {s.columns, tokens}),
                {logits, s.bias, biased});
      logits = biased;
    }
    Value scored = logits;  // the loss's rows
    if (loss_rows < tokens) {
      scored = s_.temporary(name + ".gathered", t, {s.columns, loss_rows});
      s_.copy(name + ".gather", logits, scored, 0, std::uint64_t{s.columns} * loss_rows);
    }
    const Value loss = s_.temporary(name + ".loss", Dtype::kF32, {loss_rows});
    s_.kernel(name + ".loss", request("cross_entropy", t, {s.columns, loss_rows}),
              {scored, labels_, loss});
    if (!backward) continue;
    Value dlogits = s_.temporary(name + ".dscored", t, {s.columns, loss_rows});
    s_.kernel(name + ".loss_bwd", request("cross_entropy_bwd", t, {s.columns, loss_rows}),
              {scored, labels_, dloss_, dlogits});
    if (loss_rows < tokens) {  // the gather's gradient: its rows into zeros
      const Value all = s_.temporary(name + ".dlogits", t, {s.columns, tokens});
      s_.kernel(name + ".zero", request("fill", t, {s.columns, tokens}), {all});
      s_.copy(name + ".scatter", dlogits, all);
      dlogits = all;
    }
    if (c_.transform) {
      s_.kernel(name + ".bgrad", request("reduce_sum", t, {s.columns, tokens}, {{"dim", 1}}),
                {dlogits, s.dbias});
    }
    mme::GemmDesc wgrad;  // x dlogits^T: hidden x columns
    wgrad.m = h;
    wgrad.n = s.columns;
    wgrad.k = tokens;
    wgrad.trans_a = true;
    s_.gemm(name + ".wgrad", x, dlogits, s.dtable, wgrad);
    mme::GemmDesc dgrad;  // dlogits table^T: tokens x hidden, summed over the shards
    dgrad.m = tokens;
    dgrad.n = h;
    dgrad.k = s.columns;
    dgrad.trans_b = true;
    s_.gemm(name + ".dgrad", dlogits, s.table, dx, dgrad, n > 0);
  }
  if (backward && c_.transform) transform_backward(dx);
  s_.mark_step();
}

}  // namespace podsim::workloads
