// What a layer shape asks of a chip, counted from its dimensions, for compute models that take
// work rather than run recipes (the IPU roofline, ipu_profile.h): its multiply-add FLOPs forward
// (backward is twice that: the input's and the weights' gradients), and the bytes of the
// activations its forward pass writes and its backward pass reads again, and the output it hands
// the next layer.
// Captures: matmuls and convolutions (the FLOPs that matter), attention's two batched matmuls,
// the activations of each sub-layer. Ignores: element-wise FLOPs (norms, softmax, GELU, pools:
// counted as bytes, not FLOPs), the embedding lookup.
#pragma once

#include "training/model.h"

namespace podsim::training {

struct LayerWork {
  double forward_flops = 0;
  double activation_bytes = 0;  // written forward, read backward
  double output_bytes = 0;      // what it hands the next layer (a pipeline stage's boundary)
  double parameters = 0;
  double backward_flops() const { return 2 * forward_flops; }
};

LayerWork layer_work(const LayerShape& shape);

}  // namespace podsim::training
