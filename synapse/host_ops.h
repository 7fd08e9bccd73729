// Operations the bridge runs on the host CPU when the TPC kernel library has no kernel for them,
// as a framework bridge falls back to the CPU for an unsupported op (session.h): the inputs come
// back from the device, the CPU computes in double precision, the outputs go back.
// Every tensor has the request's shape (dimension 0 fastest) and type.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "hw/tpc/kernels/library.h"

namespace podsim::synapse {

struct HostOp {
  std::string name, summary;
  int inputs = 0, outputs = 0;
  std::function<void(const tpc::KernelRequest&, const std::vector<std::vector<double>>& in,
                     std::vector<std::vector<double>>& out)>
      run;
};

// nullptr when there is no such host operation.
const HostOp* find_host_op(const std::string& name);
const std::vector<HostOp>& host_ops();

}  // namespace podsim::synapse
