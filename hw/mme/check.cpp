#include "hw/mme/check.h"

#include <fmt/format.h>

#include <cmath>

#include "core/random.h"
#include "hw/tpc/vpu.h"

namespace podsim::mme {
namespace {

using tpc::Dtype;

double unit_roundoff(Dtype t) {
  switch (t) {
    case Dtype::kBf16:
      return 0x1.0p-8;
    case Dtype::kF16:
      return 0x1.0p-11;
    default:
      return 0x1.0p-24;
  }
}

std::vector<std::uint8_t> random_buffer(std::uint64_t elements, Dtype t, core::Random& rng) {
  std::vector<std::uint8_t> out(elements * tpc::info(t).bytes);
  for (std::uint64_t i = 0; i < elements; ++i) tpc::write_element(out, t, i, 2 * rng.uniform() - 1);
  return out;
}

std::vector<double> values(const std::vector<std::uint8_t>& buffer, Dtype t, bool absolute) {
  std::vector<double> out(buffer.size() / tpc::info(t).bytes);
  for (std::uint64_t i = 0; i < out.size(); ++i) {
    const double v = tpc::read_element(buffer, t, i);
    out[i] = absolute ? std::fabs(v) : v;
  }
  return out;
}

}  // namespace

MmeOperands make_operands(const MmeOperation& op, std::uint64_t seed) {
  core::Random rng(seed);
  MmeOperands o;
  o.a = random_buffer(mme::a_elements(op), op.in, rng);
  o.b = random_buffer(mme::b_elements(op), op.in, rng);
  o.c = op.accumulate ? random_buffer(mme::c_elements(op), op.out, rng)
                      : std::vector<std::uint8_t>(mme::c_elements(op) * tpc::info(op.out).bytes, 0);
  return o;
}

MmeCheck check_result(const MmeOperation& op, const MmeOperands& in,
                      const std::vector<std::uint8_t>& got) {
  std::vector<double> want = values(in.c, op.out, false), scale;
  mme::reference(op, values(in.a, op.in, false), values(in.b, op.in, false), want, &scale);
  const std::vector<double> previous = values(in.c, op.out, true);
  const double u = unit_roundoff(op.out);
  const double k = static_cast<double>(mme::GemmView(op).k());
  MmeCheck r;
  for (std::uint64_t i = 0; i < want.size(); ++i) {
    const double value = tpc::read_element(got, op.out, i);
    const double bound =
        (k * 0x1.0p-24 + u) * scale[i] + u * (op.accumulate ? previous[i] : 0) + 0x1.0p-126;
    const double error = std::fabs(value - want[i]);
    ++r.elements;
    const double ratio = std::isnan(error) ? INFINITY : error / bound;
    if (ratio > 1) ++r.beyond;
    if (ratio > r.worst) {
      r.worst = ratio;
      if (ratio > 1)
        r.first = fmt::format("element {}: {} where the reference gives {} (bound {:.3g})", i,
                              value, want[i], bound);
    }
  }
  return r;
}

}  // namespace podsim::mme
