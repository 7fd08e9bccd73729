// Eager and lazy execution on the runtime, as a framework's bridge drives Synapse: operations
// on tensors that live on the device.
//  - eager: each operation is compiled as a graph of its own (recipes cached by the graph's
//    signature, so a loop compiles each distinct operation once) and launched at once;
//  - lazy: operations are recorded until mark_step() (or a read of a result), then compiled as
//    one graph, whose temporaries become workspace the compiler plans, and launched; recipes
//    are cached by the step graph's signature, so a training loop compiles once.
// Captures: persistent tensors (device memory for the session's life), temporaries (until the
// step ends: device memory in eager mode, workspace in lazy mode), host reads and writes
// through pinned buffers and DMA. Ignores: views, in-graph host operations, dynamic shapes.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "synapse/graph.h"
#include "synapse/runtime.h"

namespace podsim::synapse {

enum class Mode : std::uint8_t { kEager, kLazy };
const char* to_string(Mode m);

struct SessionStats {
  std::uint64_t compiles = 0, cache_hits = 0, launches = 0;
  std::set<std::string> notes;   // what the compiler said (fusions), once each
  core::TimePs device_time = 0;  // from each launch's first CS to its completion
};

class Session {
 public:
  Session(Runtime& runtime, Mode mode);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  struct Value {
    int id = -1;
  };
  Value persistent(const std::string& name, Dtype dtype, std::vector<std::uint32_t> shape);
  Value temporary(const std::string& name, Dtype dtype, std::vector<std::uint32_t> shape);

  // As Graph's (names need only be unique within a step); checked when called.
  void gemm(const std::string& name, Value a, Value b, Value c, mme::GemmDesc gemm,
            bool accumulate = false, std::array<std::uint64_t, 3> offsets = {});
  void convolution(const std::string& name, mme::MmeOp op, const mme::ConvDesc& conv, Value a,
                   Value b, Value c);
  void kernel(const std::string& name, const tpc::KernelRequest& request,
              const std::vector<Value>& tensors);
  // src into the start of dst on a DMA engine (dst at least its size in bytes); with
  // `elements`, src's elements from `src_offset` (Graph::copy).
  void copy(const std::string& name, Value src, Value dst, std::uint64_t src_offset = 0,
            std::uint64_t elements = 0);

  // What a value is: its name, type and shape.
  const Tensor& tensor(Value v) const;
  // Where a persistent value lives in device memory, for the libraries beside the session (a
  // collective on it, a copy into a bucket). Throws std::invalid_argument for a temporary.
  std::uint64_t address(Value v) const;

  // Host values of a persistent tensor, converted to and from its type. A read runs what is
  // recorded first.
  void write(Value v, const std::vector<double>& values);
  std::vector<double> read(Value v);
  // Ends a step: lazy mode compiles and runs what was recorded; both free the temporaries.
  void mark_step();

  // Runs one small step on every engine (a kernel on every TPC, a GEMM on the MMEs, a DMA copy)
  // and frees what it used. An engine's first job costs more than its later ones (the stem of
  // ResNet-50 at batch 16 took 2.8 us longer as the first thing the TPCs ran), which a loop's
  // steady state never sees; a measurement warms the engines so first.
  void warm_up();
  // While on, lazy steps compile and upload their recipes but do not run them: a profile warms
  // its recipes without simulating them, and its first timed launch starts as after a warm-up
  // run (the runtime's cache holds the program and command buffers).
  void set_compile_only(bool on) { compile_only_ = on; }

  const SessionStats& stats() const { return stats_; }
  Mode mode() const { return mode_; }

 private:
  struct Slot {
    Tensor tensor;
    std::uint64_t address = 0;  // device memory (persistent; eager temporaries)
    bool temporary = false;
  };
  struct Op {
    std::string name;
    bool mme = false, copy = false;
    mme::MmeOp mme_op = mme::MmeOp::kGemm;
    mme::GemmDesc gemm;
    mme::ConvDesc conv;
    bool accumulate = false;
    std::array<std::uint64_t, 3> offsets{};  // a copy's: its source offset, its elements
    tpc::KernelRequest request;
    std::vector<int> operands;
  };
  Slot& slot(Value v);
  const Slot& slot(Value v) const;
  void record(Op op);
  // Builds the graph of `ops`, compiles it (or finds it cached) and launches it.
  void launch(const std::vector<Op>& ops);
  // A graph of `ops` alone, its tensors in first-use order; the persistent ones' addresses.
  Graph graph_of(const std::vector<Op>& ops, std::vector<std::uint64_t>* addresses) const;
  const Recipe& recipe_for(const Graph& g);

  Runtime& rt_;
  Mode mode_;
  StreamId compute_, h2d_, d2h_;
  std::vector<Slot> slots_;
  std::vector<Op> pending_;
  std::map<std::string, std::unique_ptr<Recipe>> cache_;
  std::uint64_t workspace_ = 0, workspace_bytes_ = 0;
  SessionStats stats_;
  bool compile_only_ = false;
};

}  // namespace podsim::synapse
