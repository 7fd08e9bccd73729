#include "hw/tpc/tpc_registers.h"

#include <algorithm>

#include "podsim/spec/gaudi1.h"

namespace podsim::tpc {
namespace {

std::uint32_t lo(std::uint64_t v) { return static_cast<std::uint32_t>(v); }
std::uint32_t hi(std::uint64_t v) { return static_cast<std::uint32_t>(v >> 32); }

}  // namespace

std::vector<RegisterRun> register_image(const KernelRegisters& k) {
  RegisterRun tensors{PODSIM_GAUDI1_TPC_CFG_TENSOR_BASE_ADDR_LOW_OFFSET, {}};
  for (const TensorDescriptor& d : k.state.tensors) {
    tensors.values.push_back(lo(d.base));
    tensors.values.push_back(hi(d.base));
    tensors.values.push_back(d.padding);
    tensors.values.push_back(podsim_gaudi1_make_tpc_tensor_config(
        static_cast<std::uint32_t>(d.dtype), static_cast<std::uint32_t>(std::max(d.dims, 1) - 1)));
    for (int dim = 0; dim < kMaxDims; ++dim) {
      tensors.values.push_back(d.size[static_cast<std::size_t>(dim)]);
      tensors.values.push_back(static_cast<std::uint32_t>(d.stride[static_cast<std::size_t>(dim)]));
    }
  }
  RegisterRun kernel{PODSIM_GAUDI1_TPC_CFG_SYNC_OBJECT_MESSAGE_OFFSET,
                     {k.sync_message, lo(k.sync_object), lo(k.binary), hi(k.binary)}};
  for (int dim = 0; dim < kMaxDims; ++dim) {
    const auto i = static_cast<std::size_t>(dim);
    kernel.values.push_back(static_cast<std::uint32_t>(k.state.slice_start[i]));
    kernel.values.push_back(
        static_cast<std::uint32_t>(k.state.slice_end[i] - k.state.slice_start[i]));
  }
  kernel.values.push_back(0);  // KERNEL_CONFIG
  kernel.values.push_back(k.kernel_id);
  kernel.values.insert(kernel.values.end(), k.state.srf.begin(), k.state.srf.end());
  RegisterRun scale{PODSIM_GAUDI1_TPC_CFG_ACCESS_SCALE_OFFSET,
                    std::vector<std::uint32_t>(5 * kMaxTensors, 0)};
  if (k.access_scale) {
    for (int t = 0; t < kMaxTensors; ++t) {
      for (int dim = 0; dim < kMaxDims; ++dim) {
        scale.values[static_cast<std::size_t>(5 * t + dim)] = static_cast<std::uint32_t>(
            (*k.access_scale)[static_cast<std::size_t>(t)][static_cast<std::size_t>(dim)]);
      }
    }
  }
  // The sync object's high address bits: a register on its own (written with WREG_32).
  RegisterRun high{PODSIM_GAUDI1_TPC_CFG_SM_BASE_ADDRESS_HIGH_OFFSET, {hi(k.sync_object)}};
  return {tensors, kernel, scale, high};
}

}  // namespace podsim::tpc
