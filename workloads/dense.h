// A dense layer over a batch of rows on the Synapse-like stack, as the transformer layer and the
// language-model head build theirs: y = in w + b (an MME GEMM into a temporary, then the bias on
// the TPCs), and its backward (the weight gradient in^T dout and the bias's, a sum over the
// rows; the input's gradient dout w^T). Nodes are named `name`, `name.bias`, `name.wgrad`,
// `name.bgrad`, `name.dgrad`. Captures what each node computes; ignores nothing of its own (the
// compiler fuses and schedules the nodes).
#pragma once

#include <cstdint>
#include <string>

#include "synapse/session.h"

namespace podsim::workloads {

struct DenseShape {
  std::uint32_t rows = 0, in = 0, out = 0;  // in [in, rows], w [out, in], y [out, rows]
  tpc::Dtype dtype = tpc::Dtype::kBf16;
};

synapse::Session::Value dense(synapse::Session& s, const std::string& name,
                              synapse::Session::Value in, synapse::Session::Value w,
                              synapse::Session::Value b, const DenseShape& shape);

// dw, db from in and dout; the input's gradient into `din` when it is given (dw, db and din
// written whole).
void dense_backward(synapse::Session& s, const std::string& name, synapse::Session::Value in,
                    synapse::Session::Value w, synapse::Session::Value dout,
                    synapse::Session::Value dw, synapse::Session::Value db,
                    const synapse::Session::Value* din, const DenseShape& shape);

}  // namespace podsim::workloads
