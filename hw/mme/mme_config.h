// The configuration of one MME: its systolic array (rows x columns of multiply-accumulate
// cells at a clock), the other output tiles its cells can form (geometries), its dataflow, and
// how it feeds the array (operand panels fetched per block of array tiles into a
// double-buffered operand buffer).
#pragma once

#include <algorithm>
#include <string>

#include "core/config_binding.h"
#include "core/units.h"

namespace podsim::mme {

enum class Dataflow { kOutputStationary, kWeightStationary };

struct MmeConfig {
  int rows = 128, cols = 128;
  // The array's cells may also form output tiles twice, four times... as tall and as narrow (or
  // as wide and as short) down to this many rows or columns; 0: the array's own shape only.
  int min_tile_side = 0;
  core::Frequency clock{1.5e9};
  Dataflow dataflow = Dataflow::kOutputStationary;
  int block_rows = 2, block_cols = 2;
  core::ByteSize buffer{2 << 20};
  bool overlap_fill = true;

  static const core::Choices<Dataflow>& dataflow_choices() {
    static const core::Choices<Dataflow> c = {{"output_stationary", Dataflow::kOutputStationary},
                                              {"weight_stationary", Dataflow::kWeightStationary}};
    return c;
  }

  template <class V>
  void describe(V& v) {
    v.field("rows", rows,
            core::Spec("rows of the systolic array (multiply-accumulate cells)")
                .range(1, 4096)
                .source("chip preset: derived from the published peak (docs/mme.md)"));
    v.field("cols", cols,
            core::Spec("columns of the systolic array")
                .range(1, 4096)
                .source("chip preset: derived from the published peak (docs/mme.md)"));
    v.field("min_tile_side", min_tile_side,
            core::Spec("the narrowest side of an output tile the cells can form: tiles of "
                       "rows * 2^g by cols / 2^g (or the reverse) down to this side; 0 for the "
                       "array's own shape only")
                .range(0, 4096)
                .source("chip preset: the MME stack's geometries (docs/mme.md)"));
    v.field("clock", clock,
            core::Spec("array cycles per second")
                .positive()
                .source("chip preset (which cites each value)"));
    v.choice("dataflow", dataflow, dataflow_choices(),
             core::Spec("output_stationary: each cell keeps one result while K streams through; "
                        "weight_stationary: each cell keeps one weight while the rows of A stream "
                        "through")
                 .source("[U] Habana does not publish the MME's dataflow; docs/mme.md"));
    v.field(
        "block_rows", block_rows,
        core::Spec("array tiles down M that share one fetch of their B panel (operand reuse)")
            .range(1, 64)
            .source("placeholder [U]: enough reuse to keep the array fed from HBM (docs/mme.md)"));
    v.field("block_cols", block_cols,
            core::Spec("array tiles along N that share one fetch of their A panel")
                .range(1, 64)
                .source("placeholder [U]: as block_rows"));
    v.field("buffer", buffer,
            core::Spec("operand buffer: two sets of A and B panels, which sets how much of K one "
                       "fetch covers")
                .range(4096, 1ull << 32)
                .source("placeholder [U]: not published"));
    v.field("overlap_fill", overlap_fill,
            core::Spec("fill and drain of the array overlap the next tile (paid once per "
                       "operation) rather than once per tile")
                .source("[U] a double-buffered accumulator; docs/mme.md"));
  }

  void check(core::ConfigChecks& c) const {
    const auto power_of_two = [](int v) { return v > 0 && (v & (v - 1)) == 0; };
    if (min_tile_side == 0) return;
    if (!power_of_two(rows) || !power_of_two(cols) || !power_of_two(min_tile_side) ||
        min_tile_side > std::min(rows, cols)) {
      c.fail("min_tile_side",
             "geometries need rows, cols and min_tile_side powers of two, min_tile_side at most "
             "the shorter side (rows " +
                 std::to_string(rows) + ", cols " + std::to_string(cols) + ", min_tile_side " +
                 std::to_string(min_tile_side) + ")");
    }
  }
};

}  // namespace podsim::mme
