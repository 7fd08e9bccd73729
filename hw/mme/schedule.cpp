#include "hw/mme/schedule.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace podsim::mme {
namespace {

std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) { return (a + b - 1) / b; }

std::uint64_t fill(const MmeConfig& c) { return static_cast<std::uint64_t>(c.rows + c.cols - 2); }

}  // namespace

std::optional<std::string> geometry_problem(const MmeConfig& config, const MmeOperation& op) {
  if (op.tall == 0 && op.wide == 0) return std::nullopt;
  const std::string tile =
      fmt::format("a tile {} times as {} as the {}x{} array", 1 << (op.tall + op.wide),
                  op.tall ? "tall" : "wide", config.rows, config.cols);
  if (op.tall != 0 && op.wide != 0)
    return std::string("a tile both taller and wider than the array");
  if (op.tall > 12 || op.wide > 12) return tile + ": beyond any array";
  const int narrow = op.tall ? config.cols >> op.tall : config.rows >> op.wide;
  if (config.min_tile_side == 0 || narrow < config.min_tile_side) {
    return fmt::format(
        "{}: the cells form tiles no narrower than {}", tile,
        config.min_tile_side == 0 ? std::min(config.rows, config.cols) : config.min_tile_side);
  }
  return std::nullopt;
}

MmeConfig shaped(const MmeConfig& config, const MmeOperation& op) {
  if (auto problem = geometry_problem(config, op)) throw std::invalid_argument(*problem);
  MmeConfig c = config;
  c.rows = (config.rows << op.tall) >> op.wide;
  c.cols = (config.cols >> op.tall) << op.wide;
  return c;
}

std::uint64_t k_chunk(const MmeConfig& config, const GemmView& view, Dtype in) {
  const std::uint64_t panel_rows = static_cast<std::uint64_t>(config.rows) * config.block_rows;
  const std::uint64_t panel_cols = static_cast<std::uint64_t>(config.cols) * config.block_cols;
  const std::uint64_t per_k = 2 * (panel_rows + panel_cols) * tpc::info(in).bytes;
  const std::uint64_t chunk = std::max<std::uint64_t>(config.buffer.bytes / per_k / 8 * 8, 8);
  return std::min(chunk, view.k());
}

std::vector<Step> schedule(const MmeConfig& config, const GemmView& view, Dtype in) {
  const std::uint64_t R = static_cast<std::uint64_t>(config.rows),
                      C = static_cast<std::uint64_t>(config.cols);
  const std::uint64_t block_m = R * config.block_rows, block_n = C * config.block_cols;
  const std::uint64_t kc = k_chunk(config, view, in);
  const bool output_stationary = config.dataflow == Dataflow::kOutputStationary;
  std::vector<Step> steps;
  for (std::uint64_t b = 0; b < view.batch(); ++b) {
    for (std::uint64_t m0 = view.m_begin(); m0 < view.m_end(); m0 += block_m) {
      const std::uint64_t m1 = std::min(view.m_end(), m0 + block_m);
      for (std::uint64_t n0 = view.n_begin(); n0 < view.n_end(); n0 += block_n) {
        const std::uint64_t n1 = std::min(view.n_end(), n0 + block_n);
        for (std::uint64_t k0 = 0; k0 < view.k(); k0 += kc) {
          Step s{
              b, m0, m1, n0, n1, k0, std::min(view.k(), k0 + kc), 0, k0 == 0, k0 + kc >= view.k()};
          const std::uint64_t kk = s.k1 - s.k0, rows = m1 - m0, cols = n1 - n0;
          // Output stationary: every array tile of the block takes one cycle per k. Weight
          // stationary: every weight tile (R of k by C of n) takes one cycle per row of A.
          s.cycles = output_stationary ? ceil_div(rows, R) * ceil_div(cols, C) * kk
                                       : ceil_div(kk, R) * ceil_div(cols, C) * rows;
          if (!config.overlap_fill) {
            s.cycles += fill(config) * (output_stationary
                                            ? (s.last_k ? ceil_div(rows, R) * ceil_div(cols, C) : 0)
                                            : ceil_div(kk, R) * ceil_div(cols, C));
          }
          steps.push_back(s);
        }
      }
    }
  }
  if (config.overlap_fill && !steps.empty()) steps.back().cycles += fill(config);
  return steps;
}

std::uint64_t analytic_cycles(const MmeConfig& config, const GemmView& view, Dtype in) {
  const std::uint64_t R = static_cast<std::uint64_t>(config.rows),
                      C = static_cast<std::uint64_t>(config.cols);
  const std::uint64_t M = view.m_end() - view.m_begin(), N = view.n_end() - view.n_begin(),
                      K = view.k();
  const std::uint64_t block_m = R * config.block_rows;
  const std::uint64_t kc = k_chunk(config, view, in);
  std::uint64_t cycles = 0, fills = 0;
  if (config.dataflow == Dataflow::kOutputStationary) {
    // Blocks are whole tiles but the last ones: ceil over tiles is ceil over the whole.
    cycles = ceil_div(M, R) * ceil_div(N, C) * K;
    fills = ceil_div(M, R) * ceil_div(N, C);
  } else {
    const std::uint64_t full = K / kc, rest = K % kc;
    const std::uint64_t weight_tiles = full * ceil_div(kc, R) + (rest ? ceil_div(rest, R) : 0);
    cycles = weight_tiles * ceil_div(N, C) * M;
    fills = weight_tiles * ceil_div(N, C) * ceil_div(M, block_m);
  }
  cycles *= view.batch();
  fills *= view.batch();
  return cycles + fill(config) * (config.overlap_fill ? 1 : fills);
}

}  // namespace podsim::mme
