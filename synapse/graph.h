// A graph in SynapseAI's shape: tensors (sizes with dimension 0 fastest, a type, persistent or
// workspace) and nodes in program order: MME operations (GEMMs and convolutions), kernels of
// the TPC kernel library by name, and device-to-device copies. Plain data checked as it is
// built: a node whose tensors do not fit its operation is refused with a message naming both.
// Program order is the graph's meaning: a node sees what the nodes before it wrote, so in-place
// updates (an optimizer's weights) are ordered as they were added.
// Captures: what the compiler (compiler.h) needs to lower, place and schedule each node.
// Ignores: tensor views and strides other than the operations' own, control flow, dynamic
// shapes.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "hw/mme/operation.h"
#include "hw/tpc/kernels/library.h"

namespace podsim::synapse {

using tpc::Dtype;

// Persistent tensors live where the user says at each launch; workspace tensors in the
// recipe's workspace, placed by the compiler.
// kSram: a buffer the compiler stages an operand in, in the runtime's part of the on-die SRAM.
enum class TensorKind : std::uint8_t { kPersistent, kWorkspace, kSram };

struct Tensor {
  std::string name;
  Dtype dtype = Dtype::kF32;
  std::vector<std::uint32_t> shape;  // dimension 0 fastest
  TensorKind kind = TensorKind::kWorkspace;
  std::uint64_t elements() const;
  std::uint64_t bytes() const;
};

using TensorId = int;

enum class NodeKind : std::uint8_t { kMme, kKernel, kCopy };

struct Node {
  std::string name;
  NodeKind kind = NodeKind::kKernel;
  mme::MmeOperation mme;  // kMme: the operation (its addresses unset)
  // kMme: elements from each operand tensor's start; kCopy: offsets[0], where in the source
  // the copy starts.
  std::array<std::uint64_t, 3> offsets{};
  tpc::KernelRequest kernel;       // kKernel
  std::vector<TensorId> operands;  // in the operation's order: MME a, b, c; a plan's buffers
  std::vector<TensorId> reads, writes;
  // kMme: the one engine it runs on (a part of a split common dimension); none: all of them.
  std::optional<std::uint32_t> engine;
  std::uint64_t elements = 0;  // kCopy: how many it copies (0: the whole source)
};

class Graph {
 public:
  // Throws std::invalid_argument for an empty or repeated name, a zero or missing size.
  TensorId tensor(const std::string& name, Dtype dtype, std::vector<std::uint32_t> shape,
                  TensorKind kind = TensorKind::kWorkspace);

  // c = a b (GEMM, batched when gemm.batch > 1; c += a b when `accumulate`): the operand types
  // come from the tensors (a and b alike); each tensor must hold what the operation spans from
  // its offset (elements: a view into a larger tensor, as an attention head's columns).
  void gemm(const std::string& name, TensorId a, TensorId b, TensorId c, mme::GemmDesc gemm,
            bool accumulate = false, std::array<std::uint64_t, 3> offsets = {});
  // A convolution as the MME runs it (operation.h's layouts): forward reads x and w and writes
  // y; data gradient reads dy and w and writes dx; weight gradient reads x and dy, writes dw.
  void convolution(const std::string& name, mme::MmeOp op, const mme::ConvDesc& conv, TensorId a,
                   TensorId b, TensorId c, std::array<std::uint64_t, 3> offsets = {});
  // A kernel of the TPC kernel library: `tensors` are the plan's buffers other than scratch, in
  // the plan's order (docs/tpc/kernels.md), each of the buffer's type and size.
  void kernel(const std::string& name, const tpc::KernelRequest& request,
              const std::vector<TensorId>& tensors);
  // src into the start of dst, at least its size in bytes; with `elements`, the source's
  // elements [src_offset, src_offset + elements) into the start of a tensor of its type (an SRAM
  // buffer's slice, a gather's rows).
  void copy(const std::string& name, TensorId src, TensorId dst, std::uint64_t src_offset = 0,
            std::uint64_t elements = 0);
  // A node of a graph over the same first tensors, as it was checked there (a compiler pass
  // rewriting a graph). Throws std::invalid_argument for a name already used.
  void append(Node node);

  const std::vector<Tensor>& tensors() const { return tensors_; }
  const std::vector<Node>& nodes() const { return nodes_; }
  const Tensor& tensor(TensorId id) const;
  // The graph's structure and parameters as text: equal for graphs that compile alike (names
  // aside), the key recipes are cached by.
  std::string signature() const;

 private:
  void check_id(const std::string& node, TensorId id) const;
  void check_span(const std::string& node, const char* operand, TensorId id, Dtype dtype,
                  std::uint64_t elements, std::uint64_t offset = 0) const;
  void add(Node node);

  std::vector<Tensor> tensors_;
  std::vector<Node> nodes_;
};

}  // namespace podsim::synapse
