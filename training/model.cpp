#include "training/model.h"

#include <fmt/format.h>

#include <cmath>
#include <stdexcept>
#include <tuple>

namespace podsim::training {

std::uint64_t LayerShape::parameters() const {
  if (kind == LayerKind::kConv) return conv.parameters() + extra_parameters;
  if (kind == LayerKind::kLmHead) {
    const std::uint64_t h = head.hidden, v = head.vocab;
    // The transform's dense layer and layer norm (h x h + 3h) and the decoder's bias (v).
    return v * h + (head.transform ? h * h + 3 * h + v : 0) + extra_parameters;
  }
  const std::uint64_t h = transformer.hidden, f = transformer.ffn;
  // qkv (3h x h + 3h), projection (h x h + h), the MLP (2 h f + f + h), two layer norms (4h).
  return 4 * h * h + 2 * h * f + 9 * h + f + extra_parameters;
}

std::string LayerShape::key() const {
  if (kind == LayerKind::kConv) return conv.key() + (input_gradient ? "" : " (no input gradient)");
  if (kind == LayerKind::kLmHead) {
    return fmt::format(
        "lm_head tokens {} hidden {} vocab {}{}{}", head.tokens, head.hidden, head.vocab,
        head.transform ? " transform" : "",
        head.loss_tokens ? fmt::format(" loss tokens {}", head.loss_tokens) : std::string());
  }
  const auto& t = transformer;
  return fmt::format("transformer batch {} sequence {} hidden {} heads {} ffn {}{}{}{}", t.batch,
                     t.sequence, t.hidden, t.heads, t.ffn,
                     t.dropout > 0 ? fmt::format(" dropout {}", t.dropout) : std::string(),
                     t.packed > 1 ? fmt::format(" packed {}", t.packed) : std::string(),
                     t.fused_attention ? " fused attention" : "");
}

std::uint64_t Model::parameters() const {
  std::uint64_t n = 0;
  for (int l : layers) n += shapes[static_cast<std::size_t>(l)].parameters();
  return n;
}

const char* to_string(Optimizer o) {
  switch (o) {
    case Optimizer::kAdamW:
      return "adamw";
    case Optimizer::kLamb:
      return "lamb";
    case Optimizer::kLars:
      return "lars";
    case Optimizer::kSgd:
      return "sgd";
  }
  return "?";
}

constexpr Optimizer kOptimizers[] = {Optimizer::kAdamW, Optimizer::kLamb, Optimizer::kLars,
                                     Optimizer::kSgd};

std::vector<std::string> optimizer_names() {
  std::vector<std::string> names;
  for (Optimizer o : kOptimizers) names.emplace_back(to_string(o));
  return names;
}

Optimizer find_optimizer(const std::string& name) {
  for (Optimizer o : kOptimizers) {
    if (name == to_string(o)) return o;
  }
  throw std::invalid_argument(
      fmt::format("optimizer '{}': not one of {}", name, fmt::join(optimizer_names(), ", ")));
}

double state_bytes(Optimizer o) {
  return o == Optimizer::kAdamW || o == Optimizer::kLamb ? 8.0 : 4.0;
}

std::vector<std::string> model_names() {
  return {"bert-large", "bert-large-512", "gpt", "resnet50", "mnist"};
}

namespace {

struct Decoder {
  std::string name, description;
  std::uint32_t batch, layers, hidden, heads, sequence, vocab, positions, token_types;
  double dropout;
  // The share of a sample's tokens the head predicts: BERT's masked-LM predicts only the masked
  // tokens, 15% of them, in ceil(0.15 S) slots a sample (20 at sequence 128, as BERT's
  // pretraining data has; 77 at 512) [T5]; 0: every
  // token (a causal LM's head).
  double predicted;
  // Attention as the model's public runs compute it [T17]: BERT's unfused (Habana's MLPerf
  // BERT), the decoder's fused and recomputed (Habana's MLPerf GPT-3: FusedSDPA with recompute).
  bool fused_attention;
};

// Sizes: BERT-Large as its paper gives it and the pretraining scripts run it (phase 1: sequence
// 128, 64 per worker; phase 2: 512, 8 per worker) [T5]; the GPT-style default is GPT-2 medium
// (24 layers, 1024 wide, 16 heads, 1024 tokens, 50257 words) [T6]. Both drop 0.1 of the
// attention probabilities and of the residual branches in training [T5, T6].
Decoder preset(const std::string& name) {
  if (name == "bert-large") {
    return {
        name, "BERT-Large, pretraining phase 1", 64, 24, 1024, 16, 128, 30522, 512, 2, 0.1, 0.15,
        false};
  }
  if (name == "bert-large-512") {
    return {name, "BERT-Large, pretraining phase 2", 8, 24, 1024, 16, 512, 30522, 512, 2, 0.1, 0.15,
            false};
  }
  if (name == "gpt") {
    return {name, "GPT-style decoder", 8, 24, 1024, 16, 1024, 50257, 1024, 0, 0.1, 0, true};
  }
  throw std::invalid_argument(
      fmt::format("model '{}': not one of {}", name, fmt::join(model_names(), ", ")));
}

void apply(std::uint32_t given, std::uint32_t& value) {
  if (given != 0) value = given;
}

// A convolutional network's units as layer shapes, alike units sharing one.
Model conv_model(const ModelRequest& r) {
  Model m;
  m.name = r.name;
  for (const auto& [option, value] : {std::pair<const char*, std::uint32_t>{"layers", r.layers},
                                      {"hidden", r.hidden},
                                      {"heads", r.heads},
                                      {"sequence", r.sequence},
                                      {"vocab", r.vocab},
                                      {"packed", r.packed}}) {
    if (value != 0) {
      throw std::invalid_argument(
          fmt::format("model {}: --{} is for the transformer models; a convolutional network "
                      "takes only --batch",
                      r.name, option));
    }
  }
  for (const auto& [option, value, models] :
       {std::tuple<const char*, const std::string&, const char*>{"mlm-head", r.mlm_head,
                                                                 "BERT's models"},
        {"attention", r.attention, "the transformer models"}}) {
    if (!value.empty()) {
      throw std::invalid_argument(
          fmt::format("model {}: --{} is for {}; a convolutional network takes only --batch",
                      r.name, option, models));
    }
  }
  if (r.dropout >= 0) {
    throw std::invalid_argument(fmt::format(
        "model {}: --dropout is for the transformer models; a convolutional network takes only "
        "--batch",
        r.name));
  }
  const bool resnet = r.name == "resnet50";
  // Per-device batches: 256 in Habana's ResNet-50 references [T9], 64 in Graphcore's MNIST
  // example [T4]. ResNet-50 trains with LARS, as MLPerf's runs do [V3, T16].
  m.batch = r.batch != 0 ? r.batch : resnet ? 256 : 64;
  m.optimizer = !r.optimizer.empty() ? find_optimizer(r.optimizer)
                : resnet             ? Optimizer::kLars
                                     : Optimizer::kAdamW;
  const auto units = resnet ? workloads::resnet50_units(m.batch, tpc::Dtype::kBf16)
                            : workloads::mnist_units(m.batch, tpc::Dtype::kBf16);
  for (std::size_t i = 0; i < units.size(); ++i) {
    LayerShape s;
    s.kind = LayerKind::kConv;
    s.conv = units[i];
    s.input_gradient = i > 0;
    const std::string problem = s.conv.problem();
    if (!problem.empty()) throw std::invalid_argument(fmt::format("model {}: {}", m.name, problem));
    std::size_t index = 0;
    while (index < m.shapes.size() && m.shapes[index].key() != s.key()) ++index;
    if (index == m.shapes.size()) m.shapes.push_back(s);
    m.layers.push_back(static_cast<int>(index));
  }
  m.description = fmt::format("{}: {} units, {}, {} per worker, {:.3f} M parameters",
                              resnet ? "ResNet-50 v1.5 (224x224 images, 1000 classes)"
                                     : "MNIST convolutional net (28x28 images, 10 classes)",
                              units.size(), to_string(m.optimizer), m.batch,
                              static_cast<double>(m.parameters()) * 1e-6);
  return m;
}

}  // namespace

Model make_model(const ModelRequest& r) {
  if (r.name == "resnet50" || r.name == "mnist") return conv_model(r);
  Decoder d = preset(r.name);
  apply(r.batch, d.batch);
  apply(r.layers, d.layers);
  apply(r.hidden, d.hidden);
  apply(r.heads, d.heads);
  apply(r.sequence, d.sequence);
  apply(r.vocab, d.vocab);
  if (r.sequence != 0 && r.sequence > d.positions) d.positions = r.sequence;
  if (r.dropout >= 0) d.dropout = r.dropout;
  if (d.layers < 1)
    throw std::invalid_argument(fmt::format("model {}: at least one layer", d.name));
  Model m;
  m.name = d.name;
  m.batch = d.batch;
  // BERT trains with LAMB, as MLPerf's runs do [V3, T16]; the GPT-style decoder with AdamW.
  m.optimizer = !r.optimizer.empty()           ? find_optimizer(r.optimizer)
                : d.name.rfind("bert", 0) == 0 ? Optimizer::kLamb
                                               : Optimizer::kAdamW;
  LayerShape layer;
  layer.transformer.batch = d.batch;
  layer.transformer.sequence = d.sequence;
  layer.transformer.hidden = d.hidden;
  layer.transformer.heads = d.heads;
  layer.transformer.ffn = 4 * d.hidden;
  layer.transformer.dropout = d.dropout;
  layer.transformer.packed = r.packed;
  if (!r.attention.empty() && r.attention != "unfused" && r.attention != "fused") {
    throw std::invalid_argument(
        fmt::format("model {}: attention '{}' is not unfused or fused", d.name, r.attention));
  }
  layer.transformer.fused_attention =
      r.attention.empty() ? d.fused_attention : r.attention == "fused";
  const std::string problem = layer.transformer.problem();
  if (!problem.empty()) throw std::invalid_argument(fmt::format("model {}: {}", d.name, problem));
  LayerShape first = layer;  // the position (and token type) tables' gradients come with it
  first.extra_parameters = std::uint64_t{d.positions + d.token_types} * d.hidden;
  LayerShape head;
  head.kind = LayerKind::kLmHead;
  const auto slots = d.predicted > 0
                         ? static_cast<std::uint32_t>(std::ceil(d.predicted * d.sequence - 1e-9))
                         : d.sequence;
  const bool bert = d.predicted > 0;
  if (!r.mlm_head.empty() &&
      (!bert || (r.mlm_head != "masked" && r.mlm_head != "all" && r.mlm_head != "every"))) {
    throw std::invalid_argument(
        bert ? fmt::format("model {}: --mlm-head '{}' is not masked, all or every", d.name,
                           r.mlm_head)
             : fmt::format("model {}: --mlm-head is for BERT's masked-LM head; this model "
                           "predicts every token",
                           d.name));
  }
  // BERT's head transforms every hidden state first and adds the decoder's bias [T5, T17].
  head.head.transform = bert;
  if (r.mlm_head == "all") {  // the head on every token, the loss on the masked ones
    head.head.tokens = d.batch * d.sequence;
    head.head.loss_tokens = d.batch * slots;
  } else if (r.mlm_head == "every") {  // the head and the loss on every token
    head.head.tokens = d.batch * d.sequence;
  } else {
    head.head.tokens = d.batch * slots;
  }
  head.head.hidden = d.hidden;
  head.head.vocab = d.vocab;
  const std::string head_problem = head.head.problem();
  if (!head_problem.empty()) {
    throw std::invalid_argument(fmt::format("model {}: {}", d.name, head_problem));
  }
  m.shapes = {first, layer, head};
  m.layers.push_back(0);
  for (std::uint32_t i = 1; i < d.layers; ++i) m.layers.push_back(1);
  m.layers.push_back(2);
  m.description = fmt::format(
      "{}: {} layers, hidden {}, {} heads, sequence {}{}{}, vocabulary {}, dropout {}, {}, {} "
      "per worker, {:.1f} M parameters",
      d.description, d.layers, d.hidden, d.heads, d.sequence,
      r.packed > 1 ? fmt::format(" ({} sequences packed a row, masked)", r.packed) : "",
      layer.transformer.fused_attention ? ", fused attention" : "", d.vocab, d.dropout,
      to_string(m.optimizer), d.batch, static_cast<double>(m.parameters()) * 1e-6);
  return m;
}

}  // namespace podsim::training
