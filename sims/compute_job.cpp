#include "sims/compute_job.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>

#include "core/event_queue.h"
#include "core/kernel.h"
#include "hw/mme/check.h"
#include "hw/tpc/kernels/functional.h"
#include "sims/chip_software.h"
#include "sims/command.h"
#include "synapse/single_node.h"

namespace podsim::sims {
namespace {

constexpr std::uint64_t kAlign = 4096;
constexpr int kVectorBytes = 256;  // a TPC vector register (docs/tpc/isa.md)

std::uint64_t aligned(std::uint64_t v) { return (v + kAlign - 1) / kAlign * kAlign; }

tpc::Dtype parse_dtype(const std::string& flag, const std::string& name) {
  if (const auto t = tpc::find_dtype(name)) return *t;
  throw UsageError(
      fmt::format("{} {}: not a type (f32, bf16, f16, i32, u32, i16, u16, i8, u8)", flag, name));
}

std::uint32_t parse_count(const std::string& name, const std::string& text) {
  char* end = nullptr;
  const unsigned long v = std::strtoul(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || v > 0xFFFF || text[0] == '-') {
    throw UsageError(fmt::format("--param {}={}: not a whole number from 0 to 65535", name, text));
  }
  return static_cast<std::uint32_t>(v);
}

// A convolution's stride, pad and dilation: `name` sets both dimensions, `name_h` and `name_w`
// one each.
void take_pair(std::map<std::string, std::string>& params, const std::string& name,
               std::uint32_t& h, std::uint32_t& w) {
  if (auto it = params.find(name); it != params.end()) {
    h = w = parse_count(name, it->second);
    params.erase(it);
  }
  for (auto [suffix, target] : {std::pair{"_h", &h}, {"_w", &w}}) {
    if (auto it = params.find(name + suffix); it != params.end()) {
      *target = parse_count(name + suffix, it->second);
      params.erase(it);
    }
  }
}

std::string shape_text(const std::vector<std::uint32_t>& shape) {
  return fmt::format("[{}]", fmt::join(shape, ", "));
}

mme::MmeOperation mme_operation(const ComputeRequest& r) {
  mme::MmeOperation op;
  op.in = parse_dtype("--dtype", r.dtype);
  op.out = r.to.empty() ? op.in : parse_dtype("--to", r.to);
  op.accumulate = r.accumulate;
  std::map<std::string, std::string> params = r.params;
  if (r.name == "gemm") {
    if (r.shape.size() != 3 && r.shape.size() != 4)
      throw UsageError(
          fmt::format("gemm --shape {}: give M,N,K or M,N,K,BATCH", shape_text(r.shape)));
    op.gemm =
        mme::GemmDesc{r.shape[0], r.shape[1], r.shape[2], r.shape.size() == 4 ? r.shape[3] : 1u,
                      r.trans_a,  r.trans_b};
  } else {
    if (r.shape.size() != 7)
      throw UsageError(
          fmt::format("{} --shape {}: give N,C,H,W,K,R,S (images, input channels, "
                      "height, width, output channels, filter height and width)",
                      r.name, shape_text(r.shape)));
    if (r.trans_a || r.trans_b) throw UsageError("--trans-a and --trans-b apply to gemm only");
    op.op = r.name == "conv_fwd"     ? mme::MmeOp::kConvForward
            : r.name == "conv_dgrad" ? mme::MmeOp::kConvDataGrad
                                     : mme::MmeOp::kConvWeightGrad;
    mme::ConvDesc& c = op.conv;
    c.n = r.shape[0], c.c = r.shape[1], c.h = r.shape[2], c.w = r.shape[3];
    c.k = r.shape[4], c.r = r.shape[5], c.s = r.shape[6];
    take_pair(params, "stride", c.stride_h, c.stride_w);
    take_pair(params, "pad", c.pad_h, c.pad_w);
    take_pair(params, "dilation", c.dil_h, c.dil_w);
  }
  if (!params.empty()) {
    throw UsageError(fmt::format(
        "{} takes no parameter '{}'{}", r.name, params.begin()->first,
        r.name == "gemm" ? "" : " (it takes stride, pad, dilation and their _h, _w forms)"));
  }
  if (auto problem = op.problem()) throw UsageError(fmt::format("{}: {}", r.name, *problem));
  return op;
}

tpc::KernelPlan kernel_plan(const ComputeRequest& r) {
  if (r.trans_a || r.trans_b || r.accumulate)
    throw UsageError("--trans-a, --trans-b and --accumulate apply to MME operations only");
  tpc::KernelRequest k;
  k.kernel = r.name;
  k.dtype = parse_dtype("--dtype", r.dtype);
  if (!r.to.empty()) k.to = parse_dtype("--to", r.to);
  k.shape = r.shape;
  for (const auto& [name, text] : r.params) {
    char* end = nullptr;
    const double v = std::strtod(text.c_str(), &end);
    if (text.empty() || *end != '\0')
      throw UsageError(fmt::format("--param {}={}: not a number", name, text));
    k.params[name] = v;
  }
  try {
    return tpc::plan_kernel(k);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
}

std::string mme_description(const ComputeRequest& r, const mme::MmeOperation& op) {
  const std::string types = fmt::format("{}->{}", tpc::info(op.in).name, tpc::info(op.out).name);
  if (op.op == mme::MmeOp::kGemm) {
    const mme::GemmDesc& g = op.gemm;
    return fmt::format("gemm {} M {} N {} K {}{}{}{}{}", types, g.m, g.n, g.k,
                       g.batch > 1 ? fmt::format(" batch {}", g.batch) : "",
                       g.trans_a ? " A^T" : "", g.trans_b ? " B^T" : "",
                       op.accumulate ? " accumulate" : "");
  }
  const mme::ConvDesc& c = op.conv;
  return fmt::format(
      "{} {} N {} C {} H {} W {} K {} R {} S {} stride {}x{} pad {}x{} dilation {}x{}", r.name,
      types, c.n, c.c, c.h, c.w, c.k, c.r, c.s, c.stride_h, c.stride_w, c.pad_h, c.pad_w, c.dil_h,
      c.dil_w);
}

void check_fits(chip::Chip& c, std::uint64_t bytes) {
  if (bytes > c.memory_size()) {
    throw UsageError(fmt::format("the operands take {}, more than {}'s {} of device memory",
                                 core::to_string(core::ByteSize{bytes}), c.name(),
                                 core::to_string(core::ByteSize{c.memory_size()})));
  }
}

}  // namespace

bool is_mme_operation(const std::string& name) {
  return name == "gemm" || name == "conv_fwd" || name == "conv_dgrad" || name == "conv_wgrad";
}

ComputeJob::ComputeJob(const ComputeRequest& request) : request_(request) {
  if (is_mme_operation(request.name)) {
    mme_ = mme_operation(request);
    description_ = mme_description(request, *mme_);
  } else {
    plan_ = kernel_plan(request);
    description_ =
        fmt::format("{} {}{} {}", request.name, request.dtype,
                    request.to.empty() ? "" : "->" + request.to, shape_text(request.shape));
  }
}

std::uint64_t ComputeJob::device_bytes() const {
  if (mme_) {
    const auto in = tpc::info(mme_->in).bytes, out = tpc::info(mme_->out).bytes;
    return aligned(mme::a_elements(*mme_) * in) + aligned(mme::b_elements(*mme_) * in) +
           aligned(mme::c_elements(*mme_) * out);
  }
  std::uint64_t bytes = 0;
  for (const tpc::BufferSpec& b : plan_->buffers) bytes += aligned(b.bytes());
  return bytes;
}

// Functional runs hold the operands on the host and in the chip's memory, the results read
// back, and the reference's copies (doubles for the MME's: values, magnitudes, bounds).
std::uint64_t ComputeJob::host_bytes(bool functional) const {
  if (!functional) return 0;
  if (!mme_) return 4 * device_bytes();
  const std::uint64_t ab = mme::a_elements(*mme_) + mme::b_elements(*mme_);
  return 3 * device_bytes() + 16 * ab + 32 * mme::c_elements(*mme_);
}

ComputeResult ComputeJob::run(system::SystemModel& model, const driver::DeviceProperties& props,
                              std::uint64_t seed, bool lock_step) {
  lock_step_ = lock_step;
  ComputeResult r = mme_ ? run_mme(model, props, seed) : run_kernel(model, props, seed);
  r.description = description_;
  const chip::Chip& c = model.chip(0);
  const double hbm = c.config().hbm.bandwidth.bytes_per_second();
  r.memory_ps = hbm > 0 ? r.min_bytes / hbm * 1e12 : 0;
  if (mme_) r.compute_ps = r.peak_flops > 0 ? r.flops / r.peak_flops * 1e12 : 0;
  r.roofline_ps = std::max(r.memory_ps, r.compute_ps);
  r.memory_bound = r.memory_ps >= r.compute_ps;
  return r;
}

// Runs `program` (the launch through the runtime) on chip 0's host; the engines' span of the run
// (from the first of `engines` starting to the last ending) is its time.
void ComputeJob::launch(system::SystemModel& model, const driver::DeviceProperties& props,
                        ComputeResult& r, const std::vector<const engine::EngineShell*>& engines,
                        const std::function<void(synapse::Runtime&)>& program) {
  const double cpu = cpu_seconds();
  const std::string failure = run_with_runtime(
      model, props,
      [&](synapse::Runtime& runtime) {
        program(runtime);
        r.finished = true;
      },
      lock_step_);
  r.simulation_cpu = cpu_seconds() - cpu;
  if (!failure.empty() && !r.finished) {
    // What the device or the compiler refused: a usage error when it is the request's fault.
    throw UsageError(failure);
  }
  core::TimePs first = ~core::TimePs{0}, last = 0;
  for (const engine::EngineShell* e : engines) {
    if (e->jobs_ended() == 0) continue;
    first = std::min(first, e->first_start());
    last = std::max(last, e->last_end());
  }
  r.time = last > first ? last - first : 0;
  r.ok = r.finished && model.chip(0).error_count() == 0;
}

ComputeResult ComputeJob::run_kernel(system::SystemModel& model,
                                     const driver::DeviceProperties& props, std::uint64_t seed) {
  chip::Chip& c = model.chip(0);
  const tpc::KernelPlan& plan = *plan_;
  check_fits(c, device_bytes());
  std::vector<std::vector<std::uint8_t>> buffers, given;
  if (model.functional()) {
    buffers = tpc::make_buffers(plan, seed);
    for (std::size_t i = 0; i < buffers.size(); ++i)
      if (plan.buffers[i].role != tpc::BufferSpec::Role::kScratch) given.push_back(buffers[i]);
  }
  const int cores =
      request_.engines == 0 ? std::min(c.tpc_cores(), props.tpc_cores) : request_.engines;
  std::vector<const engine::EngineShell*> engines;
  for (int t = 0; t < cores && t < c.tpc_cores(); ++t) engines.push_back(&c.tpc(t));
  ComputeResult r;
  launch(model, props, r, engines, [&](synapse::Runtime& runtime) {
    synapse::run_kernel(runtime, plan.request, request_.engines,
                        model.functional() ? &given : nullptr);
  });
  r.flops = plan.flops;
  r.min_bytes = plan.min_bytes;
  std::uint64_t busy = 0;
  std::uint64_t slots[4] = {};
  for (int t = 0; t < cores; ++t) {
    const auto& s = c.tpc(t).stats();
    busy += s.busy_ps.value();
    r.bundles += s.bundles.value();
    r.bytes_moved += static_cast<double>(s.bytes_read.value() + s.bytes_written.value());
    slots[0] += s.load_ops.value();
    slots[1] += s.spu_ops.value();
    slots[2] += s.vpu_ops.value();
    slots[3] += s.store_ops.value();
  }
  static const char* const kSlots[4] = {"load", "spu", "vpu", "store"};
  const int busiest = static_cast<int>(std::max_element(slots, slots + 4) - slots);
  r.busiest_slot = kSlots[busiest];
  r.busiest_slot_ops = slots[busiest];
  // The ideal schedule: the busiest slot full every cycle on every core used.
  r.compute_ps =
      static_cast<double>(slots[busiest]) / cores / c.config().tpc.core.clock.hertz * 1e12;
  r.engine_busy = r.time ? static_cast<double>(busy) / (static_cast<double>(r.time) * cores) : 0;
  const int lanes = kVectorBytes / tpc::info(plan.request.dtype).bytes;
  r.peak_flops = 2.0 * lanes * cores * c.config().tpc.core.clock.hertz;
  if (!model.functional() || !r.finished) return r;
  r.checked = true;
  std::vector<std::vector<std::uint8_t>> expected = buffers;
  tpc::run_reference(plan, expected);
  for (std::size_t i = 0, g = 0; i < buffers.size(); ++i) {
    const auto role = plan.buffers[i].role;
    if (role == tpc::BufferSpec::Role::kScratch) continue;
    const std::vector<std::uint8_t>& got = given[g++];
    if (role != tpc::BufferSpec::Role::kOutput && role != tpc::BufferSpec::Role::kInOut) continue;
    if (auto bad = tpc::compare_buffer(plan, static_cast<int>(i), got, expected[i]))
      r.check_failures.push_back(fmt::format("{}: {}", plan.buffers[i].name, *bad));
  }
  return r;
}

ComputeResult ComputeJob::run_mme(system::SystemModel& model, const driver::DeviceProperties& props,
                                  std::uint64_t seed) {
  chip::Chip& c = model.chip(0);
  check_fits(c, device_bytes());
  const mme::MmeOperation& op = *mme_;
  const auto in = tpc::info(op.in).bytes, out = tpc::info(op.out).bytes;
  mme::MmeOperands operands;
  std::vector<std::vector<std::uint8_t>> given;
  if (model.functional()) {
    operands = mme::make_operands(op, seed);
    given = {operands.a, operands.b, operands.c};
  }
  const int engines =
      request_.engines == 0 ? std::min(c.mme_engines(), props.mme_engines) : request_.engines;
  std::vector<const engine::EngineShell*> shells;
  for (int i = 0; i < engines && i < c.mme_engines(); ++i) shells.push_back(&c.mme(i));
  ComputeResult r;
  launch(model, props, r, shells, [&](synapse::Runtime& runtime) {
    synapse::run_mme(runtime, op, request_.engines, model.functional() ? &given : nullptr);
  });
  r.flops = op.flops();
  r.min_bytes = static_cast<double>((mme::a_elements(op) + mme::b_elements(op)) * in +
                                    mme::c_elements(op) * out * (op.accumulate ? 2 : 1));
  const mme::MmeConfig& e = c.config().mme.engine;
  std::uint64_t cycles = 0;
  for (int i = 0; i < engines && i < c.mme_engines(); ++i) {
    const auto& s = c.mme(i).stats();
    cycles += s.array_cycles.value();
    r.bytes_moved += static_cast<double>(s.bytes_read.value() + s.bytes_written.value());
  }
  const double period_ps = 1e12 / e.clock.hertz;
  r.engine_busy =
      r.time ? static_cast<double>(cycles) * period_ps / (static_cast<double>(r.time) * engines)
             : 0;
  r.peak_flops = 2.0 * e.rows * e.cols * e.clock.hertz * engines;
  if (!model.functional() || !r.finished) return r;
  r.checked = true;
  const mme::MmeCheck check = mme::check_result(op, operands, given[2]);
  r.worst = check.worst;
  if (check.beyond > 0) {
    r.check_failures.push_back(fmt::format("{} of {} results beyond the bound; worst {}",
                                           check.beyond, check.elements, check.first.value_or("")));
  }
  return r;
}

}  // namespace podsim::sims
