#include "training/layer_work.h"

#include "hw/tpc/isa.h"

namespace podsim::training {
namespace {

double out_size(double in, double window, double stride, double pad) {
  return static_cast<double>(static_cast<long long>((in + 2 * pad - window) / stride)) + 1;
}

// QKV, the output projection and the two FFN matmuls, and attention's scores and weighted sum;
// activations: about ten tensors of the layer's width (inputs of each matmul and norm, the
// residuals), two of the FFN's, and the scores before and after softmax. With dropout: the
// dropped probabilities, and a byte a element of each mask (probabilities, two residual branches).
// Fused attention keeps none of the scores' (the backward pass computes them again).
LayerWork transformer(const workloads::TransformerConfig& c, double element) {
  const double tokens = c.tokens(), h = c.hidden, f = c.ffn;
  const double scores = static_cast<double>(c.batch) * c.heads * c.sequence * c.sequence;
  LayerWork w;
  w.forward_flops = 2 * tokens * (4 * h * h + 2 * h * f) + 2 * 2 * scores * c.head_size();
  const double kept = c.fused_attention ? 0 : scores;
  w.activation_bytes = element * (10 * tokens * h + 2 * tokens * f + 2 * kept);
  if (c.dropout > 0) w.activation_bytes += element * kept + (kept + 2 * tokens * h);
  w.output_bytes = element * tokens * h;
  return w;
}

LayerWork head(const workloads::LmHeadConfig& c, double element) {
  const double logits = static_cast<double>(c.tokens) * c.vocab;
  const double states = static_cast<double>(c.tokens) * c.hidden;
  LayerWork w;
  w.forward_flops = 2 * logits * c.hidden + (c.transform ? 2 * states * c.hidden : 0);
  // The logits before and after the loss's softmax, the hidden states (and the transform's
  // three: before and after GELU, after the norm).
  w.activation_bytes = element * (2 * logits + states + (c.transform ? 3 * states : 0));
  w.output_bytes = element * c.tokens;  // the per-token losses
  return w;
}

// Each convolution's FLOPs at its output positions; activations: the convolutions' outputs,
// their norms' and ReLUs' (three tensors each).
LayerWork conv(const workloads::ConvUnitConfig& c, double element) {
  LayerWork w;
  const double n = c.batch;
  const auto add = [&](double in_c, double out_c, double window, double positions) {
    w.forward_flops += 2 * in_c * out_c * window * window * positions * n;
    w.activation_bytes += 3 * element * out_c * positions * n;
    w.output_bytes = element * out_c * positions * n;  // the last convolution's
  };
  const double h = c.height, wd = c.width;
  switch (c.kind) {
    case workloads::ConvUnitKind::kConvBlock:
      add(c.channels, c.filters, c.window,
          out_size(h, c.window, c.stride, c.pad) * out_size(wd, c.window, c.stride, c.pad));
      break;
    case workloads::ConvUnitKind::kBottleneck: {
      const double out = out_size(h, 3, c.stride, 1) * out_size(wd, 3, c.stride, 1);
      add(c.channels, c.mid, 1, h * wd);
      add(c.mid, c.mid, 3, out);
      add(c.mid, c.filters, 1, out);
      if (c.stride != 1 || c.channels != c.filters) add(c.channels, c.filters, 1, out);
      break;
    }
    case workloads::ConvUnitKind::kClassifier:
      // Dense layers: two FLOPs per weight per sample.
      w.forward_flops = 2 * n * static_cast<double>(c.parameters());
      w.activation_bytes = element * n * (static_cast<double>(c.channels) + c.classes);
      w.output_bytes = element * n * c.classes;
      break;
  }
  return w;
}

}  // namespace

LayerWork layer_work(const LayerShape& shape) {
  LayerWork w;
  switch (shape.kind) {
    case LayerKind::kTransformer:
      w = transformer(shape.transformer, tpc::info(shape.transformer.dtype).bytes);
      break;
    case LayerKind::kLmHead:
      w = head(shape.head, tpc::info(shape.head.dtype).bytes);
      break;
    case LayerKind::kConv:
      w = conv(shape.conv, tpc::info(shape.conv.dtype).bytes);
      break;
  }
  w.parameters = static_cast<double>(shape.parameters());
  return w;
}

}  // namespace podsim::training
