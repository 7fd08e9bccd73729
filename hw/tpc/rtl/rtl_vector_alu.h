// The RTL vector ALU (tpc_vector_alu.sv, Verilated into a SystemC module) as a VectorDatapath: a
// VPU operation on a 256-byte vector goes through the lane group eight 32-bit lanes at a time,
// its operands written to the RTL's input signals and its results read back once the RTL has
// evaluated (delta cycles; no simulated time passes). isa.yaml's `rtl:` lists say which
// operations and types it implements; the executor computes the others in C++.
// Captures: the RTL's bits for every implemented operation. Ignores: time (the TPC's pipeline
// model owns latencies); it must be called from a SystemC thread (the TPC runs kernels in one
// when tpc.core.vpu_model is rtl).
#pragma once

#include <cstdint>
#include <memory>
#include <systemc>

#include "hw/tpc/vpu.h"

class Vtpc_vector_alu;

namespace podsim::tpc {

class RtlVectorAlu : public sc_core::sc_module, public VectorDatapath {
 public:
  static constexpr int kLanes = 8;  // 32-bit lanes of the RTL's lane group

  explicit RtlVectorAlu(sc_core::sc_module_name name);
  ~RtlVectorAlu() override;

  // Whether the RTL implements `op` on type `t` (isa.yaml's rtl lists).
  static bool implements(Op op, Dtype t);
  // Throws std::logic_error when called outside a SystemC thread.
  bool execute(Op op, Dtype t, const VpuArgs& args) override;
  std::uint64_t operations() const { return operations_; }

 private:
  void evaluate();  // waits the delta cycles the RTL takes to answer

  std::unique_ptr<Vtpc_vector_alu> rtl_;
  sc_core::sc_signal<std::uint32_t> op_{"op"}, dtype_{"dtype"}, cond_{"cond"}, c_{"c"}, tag_{"tag"};
  sc_core::sc_signal<sc_dt::sc_bv<256>> a_{"a"}, b_{"b"}, d_{"d"}, y_{"y"};
  sc_core::sc_signal<std::uint32_t> y_mask_{"y_mask"}, tag_out_{"tag_out"};
  std::uint32_t tag_value_ = 0;
  std::uint64_t operations_ = 0;
};

}  // namespace podsim::tpc
