// What the workloads share: values rounded to a tensor type, as the device stores them, and
// kernel requests for the TPC library.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "hw/tpc/kernels/library.h"

namespace podsim::workloads {

// Values by name, in a tensor's memory order: a workload's inputs, results and references.
using Tensors = std::map<std::string, std::vector<double>>;

// `v` as a tensor of type `t` holds it (round to nearest even).
inline double rounded(double v, tpc::Dtype t) {
  std::vector<std::uint8_t> b(8);
  tpc::write_element(b, t, 0, v);
  return tpc::read_element(b, t, 0);
}

inline tpc::KernelRequest request(const char* kernel, tpc::Dtype t,
                                  std::vector<std::uint32_t> shape,
                                  std::map<std::string, double> params = {}) {
  return tpc::KernelRequest{kernel, t, {}, std::move(shape), std::move(params)};
}

}  // namespace podsim::workloads
