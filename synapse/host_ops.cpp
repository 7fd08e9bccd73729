#include "synapse/host_ops.h"

#include <stdexcept>

namespace podsim::synapse {
namespace {

// dx = y (dy - sum over the row of dy y), the softmax's gradient along dimension 0.
void softmax_bwd(const tpc::KernelRequest& r, const std::vector<std::vector<double>>& in,
                 std::vector<std::vector<double>>& out) {
  if (r.shape.empty()) throw std::invalid_argument("softmax_bwd: a shape [C, R...]");
  const std::size_t columns = r.shape[0];
  const std::vector<double>& dy = in[0];
  const std::vector<double>& y = in[1];
  out[0].assign(dy.size(), 0.0);
  for (std::size_t start = 0; start < dy.size(); start += columns) {
    double dot = 0;
    for (std::size_t c = 0; c < columns; ++c) dot += dy[start + c] * y[start + c];
    for (std::size_t c = 0; c < columns; ++c)
      out[0][start + c] = y[start + c] * (dy[start + c] - dot);
  }
}

}  // namespace

const std::vector<HostOp>& host_ops() {
  static const std::vector<HostOp> ops{{"softmax_bwd",
                                        "dx = y (dy - sum(dy y)) along dimension 0, from dy and y",
                                        2, 1, softmax_bwd}};
  return ops;
}

const HostOp* find_host_op(const std::string& name) {
  for (const HostOp& op : host_ops()) {
    if (op.name == name) return &op;
  }
  return nullptr;
}

}  // namespace podsim::synapse
