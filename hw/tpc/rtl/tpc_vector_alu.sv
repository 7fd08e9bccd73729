// The TPC vector ALU for one lane group: eight 32-bit lanes, each holding one f32, i32 or u32
// element or two bf16 elements, computed combinationally. podsim's C++ datapath (hw/tpc/vpu.cpp)
// and this RTL implement the same operations; tests/tpc/rtl_alu_sc_test.cpp holds them to
// identical bits on random operands.
//
// Arithmetic: binary32 with round-to-nearest-even and gradual underflow (subnormals in and out);
// every NaN result is the canonical quiet NaN 0x7FC00000. A bf16 operation widens its operands
// to binary32 (exactly), computes in binary32 and rounds the result to bf16 (nearest even,
// canonical NaN 0x7FC0). mac rounds after the product and after the sum. Integers wrap.
//
// Captures: the element arithmetic of add, sub, mul, mac, min, max, abs, neg, and, or, xor, not,
// shl, shr, cmp and sel on f32, bf16, i32 and u32. Ignores: f16 and 8/16-bit integers (the C++
// datapath computes them), pipelining (the core's timing model owns latencies), power.
/* verilator lint_off UNUSEDSIGNAL */

module tpc_vector_alu #(
    parameter int LANES = 8
) (
    input  logic [4:0]            op,      // OP_* below
    input  logic [1:0]            dtype,   // TYPE_* below
    input  logic [2:0]            cond,    // cmp: eq, ne, lt, le, gt, ge
    input  logic [LANES*32-1:0]   a,
    input  logic [LANES*32-1:0]   b,
    input  logic [LANES*32-1:0]   d,       // mac's addend
    input  logic [2*LANES-1:0]    c,       // sel's predicate, a bit per element
    input  logic [31:0]           tag,     // passed through: the wrapper's handshake
    output logic [LANES*32-1:0]   y,
    output logic [2*LANES-1:0]    y_mask,  // cmp's result, a bit per element
    output logic [31:0]           tag_out
);
  /* verilator lint_off UNUSEDPARAM */
  localparam logic [4:0] OP_ADD = 0, OP_SUB = 1, OP_MUL = 2, OP_MAC = 3, OP_MIN = 4, OP_MAX = 5,
                         OP_ABS = 6, OP_NEG = 7, OP_AND = 8, OP_OR = 9, OP_XOR = 10, OP_NOT = 11,
                         OP_SHL = 12, OP_SHR = 13, OP_CMP = 14, OP_SEL = 15;
  localparam logic [1:0] TYPE_F32 = 0, TYPE_BF16 = 1, TYPE_I32 = 2, TYPE_U32 = 3;
  /* verilator lint_on UNUSEDPARAM */
  localparam logic [31:0] NAN32 = 32'h7FC0_0000;

  // ------------------------------------------------------------------ binary32 helpers

  function automatic logic is_nan(input logic [31:0] x);
    return x[30:23] == 8'hFF && x[22:0] != 0;
  endfunction

  function automatic logic is_zero(input logic [31:0] x);
    return x[30:0] == 0;
  endfunction

  // a < b for two non-NaN values; -0 and +0 are equal.
  function automatic logic less(input logic [31:0] p, input logic [31:0] q);
    logic [31:0] ka, kb;
    if (is_zero(p) && is_zero(q)) return 1'b0;
    ka = p[31] ? ~p : (p | 32'h8000_0000);
    kb = q[31] ? ~q : (q | 32'h8000_0000);
    return ka < kb;
  endfunction

  // Leading zeros of a 48-bit value; narrower values are passed left-aligned.
  function automatic logic [5:0] leading_zeros(input logic [47:0] x);
    logic [5:0] n;
    n = 6'd48;
    for (int i = 0; i < 48; i++) if (x[i]) n = 6'(47 - i);
    return n;
  endfunction

  // Rounds a magnitude to 24 bits (nearest even) and packs it: `m` holds the hidden bit at 26
  // when normal, then guard, round and sticky; `e` >= 1 is its biased exponent.
  function automatic logic [31:0] round_pack(input logic sign, input int e_in,
                                             input logic [26:0] m);
    logic [24:0] r;
    int e;
    e = e_in;
    r = {1'b0, m[26:3]} + {24'd0, m[2] & (m[1] | m[0] | m[3])};
    if (r[24]) begin
      r = r >> 1;
      e = e + 1;
    end
    if (e >= 255) return {sign, 8'hFF, 23'b0};
    return {sign, r[23] ? 8'(e) : 8'd0, r[22:0]};
  endfunction

  function automatic logic [31:0] fp32_add(input logic [31:0] p, input logic [31:0] q);
    logic [31:0] x, z;
    logic [27:0] ax, az, aligned, sum;
    logic [23:0] mx, mz;
    int ex, ez, diff, shift, lz;
    if (is_nan(p) || is_nan(q)) return NAN32;
    if (p[30:23] == 8'hFF && q[30:23] == 8'hFF) return p[31] == q[31] ? p : NAN32;
    if (p[30:23] == 8'hFF) return p;
    if (q[30:23] == 8'hFF) return q;
    // x: the operand of larger magnitude.
    if (p[30:0] >= q[30:0]) begin
      x = p;
      z = q;
    end else begin
      x = q;
      z = p;
    end
    ex = x[30:23] == 0 ? 1 : int'(x[30:23]);
    ez = z[30:23] == 0 ? 1 : int'(z[30:23]);
    mx = {x[30:23] != 0, x[22:0]};
    mz = {z[30:23] != 0, z[22:0]};
    diff = ex - ez;
    ax = {1'b0, mx, 3'b000};
    aligned = {1'b0, mz, 3'b000};
    if (diff >= 28) begin
      az = {27'b0, mz != 0};
    end else begin
      az = aligned >> diff;
      az[0] = az[0] | ((aligned & ((28'd1 << diff) - 28'd1)) != 0);
    end
    sum = x[31] == z[31] ? ax + az : ax - az;
    if (sum == 0) return {x[31] & z[31], 31'b0};  // +0 unless both are -0
    if (sum[27]) begin
      sum = {1'b0, sum[27:2], sum[1] | sum[0]};
      ex = ex + 1;
    end else begin
      lz = int'(leading_zeros({sum[26:0], 21'b0}));
      shift = lz < ex - 1 ? lz : ex - 1;  // stop at the subnormal range
      sum = sum << shift;
      ex = ex - shift;
    end
    return round_pack(x[31], ex, sum[26:0]);
  endfunction

  function automatic logic [31:0] fp32_mul(input logic [31:0] p, input logic [31:0] q);
    logic sign, sticky;
    logic [23:0] mp, mq;
    logic [47:0] prod;
    int e, lz, sh;
    sign = p[31] ^ q[31];
    if (is_nan(p) || is_nan(q)) return NAN32;
    if ((p[30:23] == 8'hFF && is_zero(q)) || (q[30:23] == 8'hFF && is_zero(p))) return NAN32;
    if (p[30:23] == 8'hFF || q[30:23] == 8'hFF) return {sign, 8'hFF, 23'b0};
    if (is_zero(p) || is_zero(q)) return {sign, 31'b0};
    mp = {p[30:23] != 0, p[22:0]};
    mq = {q[30:23] != 0, q[22:0]};
    prod = 48'(mp) * 48'(mq);
    lz = int'(leading_zeros(prod));
    prod = prod << lz;  // the leading one at bit 47
    e = (p[30:23] == 0 ? 1 : int'(p[30:23])) + (q[30:23] == 0 ? 1 : int'(q[30:23])) - 126 - lz;
    sticky = 1'b0;
    if (e < 1) begin  // subnormal: shift right into the range, keeping what falls off
      sh = 1 - e;
      if (sh >= 48) begin
        sticky = prod != 0;
        prod = 48'd0;
      end else begin
        sticky = (prod & ((48'd1 << sh) - 48'd1)) != 0;
        prod = prod >> sh;
      end
      e = 1;
    end
    return round_pack(sign, e, {prod[47:22], (prod[21:0] != 0) | sticky});
  endfunction

  function automatic logic [31:0] fp32_min_max(input logic [31:0] p, input logic [31:0] q,
                                               input logic maximum);
    if (is_nan(p) || is_nan(q)) return NAN32;
    if (maximum) return less(q, p) ? p : less(p, q) ? q : (p & q);  // +0 wins
    return less(p, q) ? p : less(q, p) ? q : (p | q);  // -0 wins
  endfunction

  function automatic logic compare_f32(input logic [31:0] p, input logic [31:0] q,
                                       input logic [2:0] cc);
    logic eq;
    if (is_nan(p) || is_nan(q)) return cc == 3'd1;  // only ne holds
    eq = p == q || (is_zero(p) && is_zero(q));
    case (cc)
      3'd0: return eq;
      3'd1: return !eq;
      3'd2: return less(p, q);
      3'd3: return less(p, q) || eq;
      3'd4: return less(q, p);
      default: return less(q, p) || eq;
    endcase
  endfunction

  function automatic logic compare_int(input logic [31:0] p, input logic [31:0] q,
                                       input logic [2:0] cc, input logic signed_type);
    logic lt, gt;
    lt = signed_type ? $signed(p) < $signed(q) : p < q;
    gt = signed_type ? $signed(p) > $signed(q) : p > q;
    case (cc)
      3'd0: return p == q;
      3'd1: return p != q;
      3'd2: return lt;
      3'd3: return !gt;
      3'd4: return gt;
      default: return !lt;
    endcase
  endfunction

  function automatic logic [15:0] to_bf16(input logic [31:0] f);
    logic [31:0] r;
    if (is_nan(f)) return 16'h7FC0;
    r = f + 32'h7FFF + {31'b0, f[16]};  // carries into the exponent
    return r[31:16];
  endfunction

  // One float element (binary32 bits; bf16 widened) through a float operation.
  function automatic logic [31:0] float_op(input logic [4:0] o, input logic [31:0] x,
                                           input logic [31:0] z, input logic [31:0] acc,
                                           input logic pick);
    case (o)
      OP_ADD: return fp32_add(x, z);
      OP_SUB: return is_nan(z) ? NAN32 : fp32_add(x, {~z[31], z[30:0]});
      OP_MUL: return fp32_mul(x, z);
      OP_MAC: return fp32_add(acc, fp32_mul(x, z));
      OP_MIN: return fp32_min_max(x, z, 1'b0);
      OP_MAX: return fp32_min_max(x, z, 1'b1);
      OP_ABS: return {1'b0, x[30:0]};
      OP_NEG: return {~x[31], x[30:0]};
      OP_SEL: return pick ? x : z;
      default: return 32'd0;
    endcase
  endfunction

  function automatic logic [31:0] int_op(input logic [4:0] o, input logic [31:0] x,
                                         input logic [31:0] z, input logic [31:0] acc,
                                         input logic pick, input logic signed_type);
    case (o)
      OP_ADD: return x + z;
      OP_SUB: return x - z;
      OP_MUL: return x * z;
      OP_MAC: return acc + x * z;
      OP_MIN: return compare_int(z, x, 3'd2, signed_type) ? z : x;
      OP_MAX: return compare_int(x, z, 3'd2, signed_type) ? z : x;
      OP_ABS: return signed_type && x[31] ? 32'd0 - x : x;
      OP_NEG: return 32'd0 - x;
      OP_AND: return x & z;
      OP_OR: return x | z;
      OP_XOR: return x ^ z;
      OP_NOT: return ~x;
      OP_SHL: return x << z[4:0];
      OP_SHR: return signed_type ? 32'($signed(x) >>> z[4:0]) : x >> z[4:0];
      OP_SEL: return pick ? x : z;
      default: return 32'd0;
    endcase
  endfunction

  // ------------------------------------------------------------------ the lanes

  always_comb begin
    y_mask = '0;
    for (int l = 0; l < LANES; l++) begin
      logic [31:0] x, z, acc, lo, hi;
      x = a[32*l+:32];
      z = b[32*l+:32];
      acc = d[32*l+:32];
      case (dtype)
        TYPE_F32: begin
          y[32*l+:32] = float_op(op, x, z, acc, c[l]);
          y_mask[l] = compare_f32(x, z, cond);
        end
        TYPE_BF16: begin
          lo = float_op(op, {x[15:0], 16'b0}, {z[15:0], 16'b0}, {acc[15:0], 16'b0}, c[2*l]);
          hi = float_op(op, {x[31:16], 16'b0}, {z[31:16], 16'b0}, {acc[31:16], 16'b0},
                        c[2*l+1]);
          // abs, neg and sel move bits; the others round their binary32 result.
          if (op == OP_ABS || op == OP_NEG || op == OP_SEL)
            y[32*l+:32] = {hi[31:16], lo[31:16]};
          else
            y[32*l+:32] = {to_bf16(hi), to_bf16(lo)};
          y_mask[2*l] = compare_f32({x[15:0], 16'b0}, {z[15:0], 16'b0}, cond);
          y_mask[2*l+1] = compare_f32({x[31:16], 16'b0}, {z[31:16], 16'b0}, cond);
        end
        default: begin
          y[32*l+:32] = int_op(op, x, z, acc, c[l], dtype == TYPE_I32);
          y_mask[l] = compare_int(x, z, cond, dtype == TYPE_I32);
        end
      endcase
    end
    tag_out = tag;
  end
endmodule
