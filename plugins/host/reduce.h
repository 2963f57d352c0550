// The element types and reductions of the collectives extension: dtype
// decoding, half/bfloat16 conversions, and one n-way reduction entry point
// whose typed inner loops are simple enough for the compiler to vectorize.
#pragma once

#include <cstddef>
#include <cstdint>

#include "flagos/ext/collectives.h"

namespace flagos_host {

// What collectives move and reduce. Bool is one byte holding 0 or 1.
enum class CommType : uint8_t { kF32, kF64, kF16, kBF16, kI8, kI16, kI32, kI64, kU8, kBool };

// The CommType of `d`, or false for a dtype the collectives do not take.
bool comm_type_of(flagos_dtype_t d, CommType* out);
size_t comm_type_size(CommType t);
bool comm_type_is_float(CommType t);
const char* comm_type_name(CommType t);

// Bits (1u << FLAGOS_REDUCE_*) of the reductions implemented.
constexpr uint32_t kReduceOps = (1u << FLAGOS_REDUCE_SUM) | (1u << FLAGOS_REDUCE_PROD) |
                                (1u << FLAGOS_REDUCE_MIN) | (1u << FLAGOS_REDUCE_MAX) |
                                (1u << FLAGOS_REDUCE_AVG);

// dst[i] = srcs[0][i] op srcs[1][i] op ... op srcs[nsrc-1][i], in that order,
// for i < count. AVG is SUM divided by `nranks` (floats only; callers check).
// 16-bit floats are reduced in float and rounded back once (to nearest even);
// integers wrap; bool SUM/MAX are logical or, PROD/MIN logical and.
// dst may be srcs[k] (same element positions); other overlap is undefined.
void reduce_arrays(CommType t, int32_t op, void* dst, const void* const* srcs, int nsrc,
                   size_t count, int nranks);

// Round-to-nearest-even conversions, exact for every finite value; NaN stays NaN.
float half_to_float(uint16_t h);
uint16_t float_to_half(float f);
float bf16_to_float(uint16_t h);
uint16_t float_to_bf16(float f);

}  // namespace flagos_host
