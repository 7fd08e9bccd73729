// The models a training study runs, as the layers one data-parallel replica computes: transformer
// layers (workloads/transformer.h) and a language model's head (workloads/lm_head.h), or a
// convolutional network's units (workloads/convnet.h), each with its parameter count, so that
// its gradient's size and (from a profile, profile.h) its compute time are known. Presets:
// BERT-Large (phase 1, sequence 128, and phase 2, 512), a GPT-style decoder whose layers, width,
// heads and sequence are the user's, ResNet-50 and the MNIST net of Graphcore's guide.
// Captures: the layers' shapes and order, the parameters of each (the embedding tables tied to
// the head, the position table with the first layer), the per-worker batch.
// Captures also dropout in the transformer layers (attention probabilities and residual branches)
// at the preset's probability, BERT's masked-LM head over the masked tokens' slots alone, and
// packed rows' attention masks when asked (`packed`).
// Ignores: BERT's pooler, its masked-LM transform (a dense layer and a norm over those slots) and
// the gather of their hidden states, the embeddings' dropout and norm, the embedding lookup's
// compute.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "workloads/convnet.h"
#include "workloads/lm_head.h"
#include "workloads/transformer.h"

namespace podsim::training {

enum class LayerKind { kTransformer, kLmHead, kConv };

// The optimizer a step ends with (profile.h runs its kernels on fp32 master weights): AdamW,
// LAMB (AdamW's direction scaled per tensor), LARS (momentum SGD scaled per tensor) [T16] or
// plain momentum SGD.
enum class Optimizer { kAdamW, kLamb, kLars, kSgd };
const char* to_string(Optimizer o);
// The names to_string gives, for help texts and the command line's check.
std::vector<std::string> optimizer_names();
// Throws std::invalid_argument naming the known ones.
Optimizer find_optimizer(const std::string& name);
// fp32 state bytes a parameter beside its master weight: two moments, or one momentum.
double state_bytes(Optimizer o);

// One distinct layer shape: the unit the profile simulates once.
struct LayerShape {
  LayerKind kind = LayerKind::kTransformer;
  workloads::TransformerConfig transformer;  // kTransformer
  workloads::LmHeadConfig head;              // kLmHead
  workloads::ConvUnitConfig conv;            // kConv
  bool input_gradient = true;                // kConv: false for a network's first unit
  std::uint64_t extra_parameters = 0;        // parameters without compute of their own (tables)
  // Parameters whose gradient this layer yields.
  std::uint64_t parameters() const;
  // A short name, unique per shape ("transformer h1024 ...").
  std::string key() const;
};

struct Model {
  std::string name, description;
  std::uint32_t batch = 1;         // samples per worker per step
  std::vector<LayerShape> shapes;  // distinct
  std::vector<int> layers;         // forward order, each an index into shapes
  Optimizer optimizer = Optimizer::kAdamW;
  std::uint64_t parameters() const;
};

// What the user asks for: a preset and what to change of it (0: the preset's).
struct ModelRequest {
  std::string name = "bert-large";
  std::uint32_t batch = 0, layers = 0, hidden = 0, heads = 0, sequence = 0, vocab = 0;
  double dropout = -1;       // the probability of dropping (0: none); negative: the preset's
  std::uint32_t packed = 0;  // transformers: sequences packed into a row, attention masked
  // Transformers' attention: "unfused", "fused" (a sequence at a time, recomputed in the
  // backward pass: FusedSDPA); empty: the preset's.
  std::string attention;
  // BERT's masked-LM head: "masked" (the masked tokens gathered first, the head on them alone),
  // "all" (the head on every token, the loss's scores gathered after it), "every" (the head and
  // the loss on every token, the unmasked ones' labels ignored); empty: masked.
  std::string mlm_head;
  std::string optimizer;  // adamw, lamb, lars or sgd; empty: the preset's
};

// The preset names, for help texts and errors.
std::vector<std::string> model_names();
// Throws std::invalid_argument naming what is wrong (an unknown model, a shape the layers
// cannot take).
Model make_model(const ModelRequest& request);

}  // namespace podsim::training
