#include "workloads/dense.h"

#include "workloads/values.h"

namespace podsim::workloads {

using Value = synapse::Session::Value;

Value dense(synapse::Session& s, const std::string& name, Value in, Value w, Value b,
            const DenseShape& d) {
  const Value z = s.temporary(name + ".z", d.dtype, {d.out, d.rows});
  const Value y = s.temporary(name + ".y", d.dtype, {d.out, d.rows});
  mme::GemmDesc g;
  g.m = d.rows;
  g.n = d.out;
  g.k = d.in;
  s.gemm(name, in, w, z, g);
  s.kernel(name + ".bias", request("bias_add", d.dtype, {d.out, d.rows}), {z, b, y});
  return y;
}

void dense_backward(synapse::Session& s, const std::string& name, Value in, Value w, Value dout,
                    Value dw, Value db, const Value* din, const DenseShape& d) {
  mme::GemmDesc wgrad;  // in^T dout
  wgrad.m = d.in;
  wgrad.n = d.out;
  wgrad.k = d.rows;
  wgrad.trans_a = true;
  s.gemm(name + ".wgrad", in, dout, dw, wgrad);
  s.kernel(name + ".bgrad", request("reduce_sum", d.dtype, {d.out, d.rows}, {{"dim", 1}}),
           {dout, db});
  if (din == nullptr) return;
  mme::GemmDesc dgrad;  // dout w^T
  dgrad.m = d.rows;
  dgrad.n = d.in;
  dgrad.k = d.out;
  dgrad.trans_b = true;
  s.gemm(name + ".dgrad", dout, w, *din, dgrad);
}

}  // namespace podsim::workloads
