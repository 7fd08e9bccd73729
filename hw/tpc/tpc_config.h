// The configuration of one TPC core: its clock, local memories, how far its load pipe runs
// ahead of its vector pipe, how it moves global memory in bulk, and the modes that check or
// speed up a run.
#pragma once

#include "core/config_binding.h"
#include "core/units.h"
#include "hw/tpc/isa.h"

namespace podsim::tpc {

enum class VpuModel { kCpp, kRtl };

struct TpcCoreConfig {
  core::Frequency clock{1.5e9};
  core::ByteSize vlm{80 * 1024};
  core::ByteSize slm{1024};
  int load_queue = 64;
  int store_queue = 16;
  core::ByteSize read_burst{2048};
  int prefetch = 4;
  core::ByteSize write_burst{2048};
  core::Duration quantum{100000};
  bool check_hazards = false;
  bool tile_reuse = false;
  VpuModel vpu_model = VpuModel::kCpp;
  Generation generation = Generation::kGaudi2;

  static const core::Choices<Generation>& generation_choices() {
    static const core::Choices<Generation> c = [] {
      core::Choices<Generation> out;
      for (int g = 0; g < kGenerationCount; ++g)
        out.emplace_back(kGenerationNames[g], static_cast<Generation>(g));
      return out;
    }();
    return c;
  }
  static const core::Choices<VpuModel>& vpu_model_choices() {
    static const core::Choices<VpuModel> c = {{"cpp", VpuModel::kCpp}, {"rtl", VpuModel::kRtl}};
    return c;
  }

  template <class V>
  void describe(V& v) {
    v.choice("generation", generation, generation_choices(),
             core::Spec("the core's generation: its pipeline latencies (hw/tpc/isa.yaml, per "
                        "generation from tpc_llvm) and the kernel binaries it runs, which are "
                        "scheduled for one generation")
                 .source("chip preset; [C5] tpc_llvm latenciesGen2.cpp, latenciesGen4.cpp, "
                         "latenciesDoron1.cpp"));
    v.field("clock", clock,
            core::Spec("bundles issued per second")
                .positive()
                .source("chip preset (which cites each value)"));
    v.field("vlm", vlm,
            core::Spec("vector local memory")
                .range(256, 1 << 24)
                .source("[C5] tpc_llvm README: 80 KB by default"));
    v.field("slm", slm,
            core::Spec("scalar local memory")
                .range(4, 1 << 24)
                .source("[C5] tpc_llvm README: 1 KB on Goya and Gaudi, 16 KB on Gaudi2"));
    v.field("load_queue", load_queue,
            core::Spec("global loads the load pipe may issue ahead of the vector pipe that "
                       "consumes them (the mechanism [S7] says hides global memory latency)")
                .range(1, 4096)
                .source("placeholder [U]: 64 x 256 B in flight hides ~700 ns at 24 B/cycle"));
    v.field("store_queue", store_queue,
            core::Spec("write transactions in flight before the vector pipe waits")
                .range(1, 4096)
                .source("placeholder [U]"));
    v.field("read_burst", read_burst,
            core::Spec("bytes one read of a sequential stream fetches: a load that continues "
                       "where the tensor's last one ended starts a burst of this size")
                .range(256, 1 << 20)
                .source("placeholder [U]: 16 of Gaudi's 128-byte lines [C2]"));
    v.field("prefetch", prefetch,
            core::Spec("bursts a sequential stream keeps in flight ahead of its loads")
                .range(0, 64)
                .source("placeholder [U]"));
    v.field("write_burst", write_burst,
            core::Spec("bytes of consecutive stores combined into one write")
                .range(256, 1 << 20)
                .source("placeholder [U]: as read_burst"));
    v.field("quantum", quantum,
            core::Spec("how far a core runs ahead of the rest of the system before it lets "
                       "others run (temporal decoupling; smaller interleaves memory traffic of "
                       "cores more finely)")
                .positive()
                .source("[D] 150 bundles at 1.5 GHz: short beside memory latency, so cores reach "
                        "shared memories nearly in time order, long beside the cost of a pass "
                        "through the event queue"));
    v.field("check_hazards", check_hazards,
            core::Spec("report every read of a register whose new value has not landed yet (an "
                       "error event per kernel, listing the first ones)")
                .source("a checking mode (docs/tpc/isa.md)"));
    v.field("tile_reuse", tile_reuse,
            core::Spec("in a timing-only run, replay the recorded memory traffic and cycles of "
                       "an identical tile (same kernel, arguments, slice shape and alignment) "
                       "instead of executing it again")
                .source("a speed option (docs/tpc/core.md)"));
    v.choice("vpu_model", vpu_model, vpu_model_choices(),
             core::Spec("cpp: the C++ vector datapath; rtl: the SystemVerilog vector ALU "
                        "through Verilator for the operations it implements")
                 .source("docs/tpc/core.md"));
  }
  void check(core::ConfigChecks& c) const;
};

}  // namespace podsim::tpc
