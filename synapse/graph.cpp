#include "synapse/graph.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <stdexcept>

namespace podsim::synapse {

std::uint64_t Tensor::elements() const {
  std::uint64_t n = 1;
  for (std::uint32_t s : shape) n *= s;
  return n;
}
std::uint64_t Tensor::bytes() const { return elements() * tpc::info(dtype).bytes; }

TensorId Graph::tensor(const std::string& name, Dtype dtype, std::vector<std::uint32_t> shape,
                       TensorKind kind) {
  if (name.empty()) throw std::invalid_argument("a tensor needs a name");
  for (const Tensor& t : tensors_) {
    if (t.name == name) throw std::invalid_argument(fmt::format("tensor {}: defined twice", name));
  }
  if (shape.empty() || std::count(shape.begin(), shape.end(), 0u) > 0) {
    throw std::invalid_argument(fmt::format("tensor {}: sizes [{}] (each must be at least 1)", name,
                                            fmt::join(shape, ", ")));
  }
  tensors_.push_back(Tensor{name, dtype, std::move(shape), kind});
  return static_cast<TensorId>(tensors_.size() - 1);
}

const Tensor& Graph::tensor(TensorId id) const {
  if (id < 0 || static_cast<std::size_t>(id) >= tensors_.size())
    throw std::invalid_argument(fmt::format("tensor id {} is not in the graph", id));
  return tensors_[static_cast<std::size_t>(id)];
}

void Graph::check_id(const std::string& node, TensorId id) const {
  if (id < 0 || static_cast<std::size_t>(id) >= tensors_.size())
    throw std::invalid_argument(fmt::format("node {}: tensor id {} is not in the graph", node, id));
}

void Graph::check_span(const std::string& node, const char* operand, TensorId id, Dtype dtype,
                       std::uint64_t elements, std::uint64_t offset) const {
  check_id(node, id);
  const Tensor& t = tensors_[static_cast<std::size_t>(id)];
  if (t.dtype != dtype) {
    throw std::invalid_argument(fmt::format("node {}: {} ({}) is {}, the operation needs {}", node,
                                            operand, t.name, tpc::info(t.dtype).name,
                                            tpc::info(dtype).name));
  }
  if (t.elements() < elements || t.elements() - elements < offset) {
    throw std::invalid_argument(fmt::format(
        "node {}: {} ({}) holds {} elements, the operation spans {}{}", node, operand, t.name,
        t.elements(), elements, offset ? fmt::format(" from element {}", offset) : ""));
  }
}

void Graph::add(Node node) {
  if (node.name.empty()) throw std::invalid_argument("a node needs a name");
  for (const Node& n : nodes_) {
    if (n.name == node.name)
      throw std::invalid_argument(fmt::format("node {}: defined twice", node.name));
  }
  nodes_.push_back(std::move(node));
}

void Graph::gemm(const std::string& name, TensorId a, TensorId b, TensorId c, mme::GemmDesc gemm,
                 bool accumulate, std::array<std::uint64_t, 3> offsets) {
  check_id(name, a);
  check_id(name, c);
  Node n{name, NodeKind::kMme, {}, offsets, {}, {a, b, c}, {a, b}, {c}, {}};
  n.mme.op = mme::MmeOp::kGemm;
  n.mme.gemm = gemm;
  n.mme.in = tensors_[static_cast<std::size_t>(a)].dtype;
  n.mme.out = tensors_[static_cast<std::size_t>(c)].dtype;
  n.mme.accumulate = accumulate;
  if (accumulate) n.reads.push_back(c);
  if (auto problem = n.mme.problem())
    throw std::invalid_argument(fmt::format("node {}: {}", name, *problem));
  check_span(name, "a", a, n.mme.in, mme::a_elements(n.mme), offsets[0]);
  check_span(name, "b", b, n.mme.in, mme::b_elements(n.mme), offsets[1]);
  check_span(name, "c", c, n.mme.out, mme::c_elements(n.mme), offsets[2]);
  add(std::move(n));
}

void Graph::append(Node node) { add(std::move(node)); }

void Graph::convolution(const std::string& name, mme::MmeOp op, const mme::ConvDesc& conv,
                        TensorId a, TensorId b, TensorId c, std::array<std::uint64_t, 3> offsets) {
  if (op == mme::MmeOp::kGemm)
    throw std::invalid_argument(fmt::format("node {}: a GEMM is not a convolution", name));
  check_id(name, a);
  check_id(name, c);
  Node n{name, NodeKind::kMme, {}, offsets, {}, {a, b, c}, {a, b}, {c}, {}};
  n.mme.op = op;
  n.mme.conv = conv;
  n.mme.in = tensors_[static_cast<std::size_t>(a)].dtype;
  n.mme.out = tensors_[static_cast<std::size_t>(c)].dtype;
  if (auto problem = n.mme.problem())
    throw std::invalid_argument(fmt::format("node {}: {}", name, *problem));
  check_span(name, "a", a, n.mme.in, mme::a_elements(n.mme), offsets[0]);
  check_span(name, "b", b, n.mme.in, mme::b_elements(n.mme), offsets[1]);
  check_span(name, "c", c, n.mme.out, mme::c_elements(n.mme), offsets[2]);
  add(std::move(n));
}

void Graph::kernel(const std::string& name, const tpc::KernelRequest& request,
                   const std::vector<TensorId>& tensors) {
  tpc::KernelPlan plan;
  try {
    plan = tpc::plan_kernel(request);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(fmt::format("node {}: {}", name, e.what()));
  }
  Node n{name, NodeKind::kKernel, {}, {}, request, {}, {}, {}, {}};
  std::size_t next = 0;
  for (const tpc::BufferSpec& buffer : plan.buffers) {
    using Role = tpc::BufferSpec::Role;
    if (buffer.role == Role::kScratch) continue;
    if (next == tensors.size()) {
      throw std::invalid_argument(
          fmt::format("node {}: {} takes more tensors than the {} given ({} "
                      "has none)",
                      name, request.kernel, tensors.size(), buffer.name));
    }
    const TensorId id = tensors[next++];
    check_span(name, buffer.name.c_str(), id, buffer.dtype, buffer.elements());
    if (tensors_[static_cast<std::size_t>(id)].bytes() != buffer.bytes()) {
      throw std::invalid_argument(fmt::format("node {}: {} ({}) is {} bytes, the kernel's {} is {}",
                                              name, buffer.name, tensor(id).name,
                                              tensor(id).bytes(), buffer.name, buffer.bytes()));
    }
    n.operands.push_back(id);
    if (buffer.role != Role::kOutput) n.reads.push_back(id);
    if (buffer.role != Role::kInput) n.writes.push_back(id);
  }
  if (next != tensors.size()) {
    throw std::invalid_argument(fmt::format("node {}: {} takes {} tensors, {} given", name,
                                            request.kernel, next, tensors.size()));
  }
  add(std::move(n));
}

void Graph::copy(const std::string& name, TensorId src, TensorId dst, std::uint64_t src_offset,
                 std::uint64_t elements) {
  check_id(name, src);
  check_id(name, dst);
  if (elements > 0 || src_offset > 0) {
    const Tensor& s = tensor(src);
    const Tensor& d = tensor(dst);
    if (s.dtype != d.dtype || elements == 0 || src_offset + elements > s.elements() ||
        elements > d.elements()) {
      throw std::invalid_argument(fmt::format(
          "node {}: copies elements [{}, +{}) of {} ({} elements) to {} ({} elements): a part "
          "goes into the start of a tensor of its type that holds it",
          name, src_offset, elements, s.name, s.elements(), d.name, d.elements()));
    }
    Node n{name, NodeKind::kCopy, {}, {src_offset, 0, 0}, {}, {src, dst}, {src}, {dst}, {}};
    n.elements = elements;
    add(std::move(n));
    return;
  }
  if (tensor(src).bytes() > tensor(dst).bytes()) {
    throw std::invalid_argument(fmt::format("node {}: copies {} ({} bytes) to {} ({} bytes)", name,
                                            tensor(src).name, tensor(src).bytes(), tensor(dst).name,
                                            tensor(dst).bytes()));
  }
  add(Node{name, NodeKind::kCopy, {}, {}, {}, {src, dst}, {src}, {dst}, {}});
}

std::string Graph::signature() const {
  std::string s;
  for (const Tensor& t : tensors_) {
    s += fmt::format("t {} [{}] {};", tpc::info(t.dtype).name, fmt::join(t.shape, ","),
                     t.kind == TensorKind::kPersistent ? 'p'
                     : t.kind == TensorKind::kSram     ? 's'
                                                       : 'w');
  }
  for (const Node& n : nodes_) {
    s += fmt::format("n{} ", static_cast<int>(n.kind));
    if (n.kind == NodeKind::kMme) {
      const mme::MmeOperation& o = n.mme;
      const mme::GemmDesc& g = o.gemm;
      const mme::ConvDesc& c = o.conv;
      s += fmt::format(
          "{} {} {} {} g{},{},{},{},{},{},{},{},{},{},{},{} c{},{},{},{},{},{},{},{},{},"
          "{},{},{},{}",
          static_cast<int>(o.op), static_cast<int>(o.in), static_cast<int>(o.out), o.accumulate,
          g.m, g.n, g.k, g.batch, g.trans_a, g.trans_b, g.lda, g.ldb, g.ldc, g.stride_a, g.stride_b,
          g.stride_c, c.n, c.c, c.h, c.w, c.k, c.r, c.s, c.stride_h, c.stride_w, c.pad_h, c.pad_w,
          c.dil_h, c.dil_w);
      s += fmt::format(" @{},{},{}", n.offsets[0], n.offsets[1], n.offsets[2]);
      if (n.engine) s += fmt::format(" e{}", *n.engine);
    } else if (n.kind == NodeKind::kKernel) {
      const tpc::KernelRequest& r = n.kernel;
      s += fmt::format("{} {} {} [{}]", r.kernel, static_cast<int>(r.dtype),
                       r.to ? static_cast<int>(*r.to) : -1, fmt::join(r.shape, ","));
      for (const auto& [key, value] : r.params) s += fmt::format(" {}={}", key, value);
    } else if (n.elements > 0) {
      s += fmt::format("@{}+{}", n.offsets[0], n.elements);
    }
    s += fmt::format(" ({});", fmt::join(n.operands, ","));
  }
  return s;
}

}  // namespace podsim::synapse
