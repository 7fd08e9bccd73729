// Element formats and the element-wise reductions the chips' engines apply to them: fp32, bf16,
// fp16 and int32, with sum, min and max. Conversions to the 16-bit formats round to nearest,
// ties to even, as the hardware's converters do; a reduction of 16-bit elements is computed in
// fp32 and rounded once per element, so a result depends only on the order its inputs are
// combined in.
// Captures: exact IEEE-754 behaviour of each step (NaN propagates through sum; min and max of a
// NaN give the other operand, as fminf/fmaxf, and of +0 and -0 the first), NaNs quieted with
// their payload's top bits kept (as x86's converters do), int32 sums that wrap. Ignores: denormal
// flushing and saturation modes that some engines offer, and fp8.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace podsim::core {

enum class DataType : std::uint8_t { kFp32, kBf16, kFp16, kInt32 };
enum class ReduceOp : std::uint8_t { kSum, kMin, kMax };

std::size_t size_of(DataType type);
const char* to_string(DataType type);
const char* to_string(ReduceOp op);
// The type or operation a user names ("float"/"fp32", "bf16", "half"/"fp16", "int"/"int32";
// "sum", "min", "max"), if any.
std::optional<DataType> parse_data_type(std::string_view name);
std::optional<ReduceOp> parse_reduce_op(std::string_view name);

float bf16_to_float(std::uint16_t bits);
std::uint16_t float_to_bf16(float value);  // round to nearest even; NaN stays NaN
float fp16_to_float(std::uint16_t bits);
std::uint16_t float_to_fp16(float value);  // round to nearest even; overflow to infinity

// The value of element `index` of `data` as a double (int32 exactly), for tests and checks.
double element_value(DataType type, const std::uint8_t* data, std::size_t index);
// Writes `value` as element `index`, converted to the type (rounded to nearest even).
void set_element(DataType type, std::uint8_t* data, std::size_t index, double value);

// dst[i] = dst[i] op src[i] for `count` elements of `type`; dst and src may be the same. Eight
// elements at a time where the CPU has AVX2 and F16C, with the same results bit for bit.
void reduce_into(DataType type, ReduceOp op, std::uint8_t* dst, const std::uint8_t* src,
                 std::size_t count);
// out[i] = values[i] converted to `type` (as set_element), for `count` elements.
void store_floats(DataType type, const float* values, std::size_t count, std::uint8_t* out);
// Lets reduce_into and store_floats use vector instructions (the default) or not: tests compare the
// two.
void allow_vector_reduce(bool allowed);

}  // namespace podsim::core
