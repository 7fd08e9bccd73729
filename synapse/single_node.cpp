#include "synapse/single_node.h"

#include <fmt/format.h>

#include <algorithm>

#include "synapse/graph.h"

namespace podsim::synapse {
namespace {

// Allocates the graph's persistent tensors, copies `data` (when given) in, launches, and reads
// the tensors marked in `read_back` out again.
SingleNodeRun launch(Runtime& runtime, const Graph& graph, const Target& target,
                     std::vector<std::vector<std::uint8_t>>* data,
                     const std::vector<bool>& read_back) {
  const Recipe recipe = compile(graph, target);
  SingleNodeRun run;
  run.notes = recipe.notes;
  for (const std::uint32_t t : recipe.persistent)
    run.addresses.push_back(runtime.device_malloc(recipe.tensors[t].bytes));
  const std::uint64_t workspace =
      recipe.workspace_bytes > 0 ? runtime.device_malloc(recipe.workspace_bytes) : 0;
  const StreamId compute = runtime.create_stream(StreamKind::kCompute);
  std::uint64_t staging = 0, staging_bytes = 0;
  std::vector<std::uint64_t> offsets;
  if (data != nullptr) {
    for (const auto& d : *data) {
      offsets.push_back(staging_bytes);
      staging_bytes += (d.size() + 255) / 256 * 256;
    }
    staging = runtime.host_malloc(std::max<std::uint64_t>(staging_bytes, 1));
    const StreamId in = runtime.create_stream(StreamKind::kHostToDevice);
    for (std::size_t i = 0; i < data->size(); ++i) {
      const auto& d = (*data)[i];
      runtime.host_write(staging + offsets[i], d.data(), d.size());
      runtime.memcpy(in, run.addresses[i], staging + offsets[i], d.size());
    }
    runtime.synchronize(in);
  }
  const Event before = runtime.record(compute);
  runtime.launch(compute, recipe, run.addresses, workspace);
  const Event after = runtime.record(compute);
  runtime.synchronize(after);
  run.launch_ps = runtime.elapsed(before, after);
  if (data != nullptr) {
    const StreamId out = runtime.create_stream(StreamKind::kDeviceToHost);
    for (std::size_t i = 0; i < data->size(); ++i) {
      if (!read_back[i]) continue;
      auto& d = (*data)[i];
      runtime.memcpy(out, staging + offsets[i], run.addresses[i], d.size());
    }
    runtime.synchronize(out);
    for (std::size_t i = 0; i < data->size(); ++i)
      if (read_back[i])
        runtime.host_read(staging + offsets[i], (*data)[i].data(), (*data)[i].size());
    runtime.host_free(staging);
  }
  for (const std::uint64_t a : run.addresses) runtime.device_free(a);
  if (workspace != 0) runtime.device_free(workspace);
  return run;
}

}  // namespace

SingleNodeRun run_kernel(Runtime& runtime, const tpc::KernelRequest& request, int engines,
                         std::vector<std::vector<std::uint8_t>>* buffers) {
  const tpc::KernelPlan plan = tpc::plan_kernel(request);
  Target target = runtime.target();
  if (engines > target.tpcs) {
    throw std::invalid_argument(
        fmt::format("{} TPCs asked for, and the device has {}", engines, target.tpcs));
  }
  if (engines > 0) target.tpcs = engines;
  Graph graph;
  std::vector<TensorId> tensors;
  std::vector<bool> read_back;
  for (const tpc::BufferSpec& b : plan.buffers) {
    if (b.role == tpc::BufferSpec::Role::kScratch) continue;
    tensors.push_back(graph.tensor(b.name, b.dtype, {static_cast<std::uint32_t>(b.elements())},
                                   TensorKind::kPersistent));
    read_back.push_back(b.role == tpc::BufferSpec::Role::kOutput ||
                        b.role == tpc::BufferSpec::Role::kInOut);
  }
  graph.kernel(request.kernel, request, tensors);
  return launch(runtime, graph, target, buffers, read_back);
}

SingleNodeRun run_mme(Runtime& runtime, const mme::MmeOperation& op, int engines,
                      std::vector<std::vector<std::uint8_t>>* operands) {
  Target target = runtime.target();
  if (engines > target.mmes) {
    throw std::invalid_argument(
        fmt::format("{} MMEs asked for, and the device has {}", engines, target.mmes));
  }
  if (engines > 0) target.mmes = engines;
  const auto elements = [](std::uint64_t n) {
    if (n > 0xFFFFFFFFull) throw std::invalid_argument("an operand of more than 2^32 elements");
    return static_cast<std::uint32_t>(n);
  };
  Graph graph;
  const TensorId a =
      graph.tensor("a", op.in, {elements(mme::a_elements(op))}, TensorKind::kPersistent);
  const TensorId b =
      graph.tensor("b", op.in, {elements(mme::b_elements(op))}, TensorKind::kPersistent);
  const TensorId c =
      graph.tensor("c", op.out, {elements(mme::c_elements(op))}, TensorKind::kPersistent);
  if (op.op == mme::MmeOp::kGemm) {
    graph.gemm(to_string(op.op), a, b, c, op.gemm, op.accumulate);
  } else {
    if (op.accumulate) throw std::invalid_argument("a convolution does not accumulate");
    graph.convolution(to_string(op.op), op.op, op.conv, a, b, c);
  }
  return launch(runtime, graph, target, operands, {false, false, true});
}

}  // namespace podsim::synapse
