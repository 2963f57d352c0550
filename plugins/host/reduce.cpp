#include "reduce.h"

#include <cstring>
#include <type_traits>

namespace flagos_host {
namespace {

template <class To, class From>
To bits(From v) {
  static_assert(sizeof(To) == sizeof(From), "same size");
  To out;
  std::memcpy(&out, &v, sizeof out);
  return out;
}

// Elements per block: the accumulator stays in L1 (8 KiB for doubles), and
// any dst that is also one of the sources is read before it is written.
constexpr size_t kBlock = 1024;

// How one storage type is read into its accumulator and written back.
template <class S>
struct Plain {
  using A = S;
  static A load(S v) { return v; }
  static S store(A v) { return v; }
};
struct Half {
  using A = float;
  static A load(uint16_t v) { return half_to_float(v); }
  static uint16_t store(A v) { return float_to_half(v); }
};
struct BFloat {
  using A = float;
  static A load(uint16_t v) { return bf16_to_float(v); }
  static uint16_t store(A v) { return float_to_bf16(v); }
};

// Integer arithmetic wraps (signed overflow would be undefined in C++).
template <class T>
using Wide = std::conditional_t<(sizeof(T) < 4), uint32_t, std::make_unsigned_t<T>>;

template <class A>
struct Sum {
  static A apply(A a, A b) {
    if constexpr (std::is_integral_v<A>) return A(Wide<A>(a) + Wide<A>(b));
    else return a + b;
  }
};
template <class A>
struct Prod {
  static A apply(A a, A b) {
    if constexpr (std::is_integral_v<A>) return A(Wide<A>(a) * Wide<A>(b));
    else return a * b;
  }
};
template <class A>
struct Min {
  static A apply(A a, A b) { return b < a ? b : a; }
};
template <class A>
struct Max {
  static A apply(A a, A b) { return a < b ? b : a; }
};
struct Or {
  static uint8_t apply(uint8_t a, uint8_t b) { return uint8_t(a | b); }
};
struct And {
  static uint8_t apply(uint8_t a, uint8_t b) { return uint8_t(a & b); }
};

template <class S, class Conv, class Op>
void reduce_typed(void* dst_v, const void* const* srcs_v, int nsrc, size_t count, int avg_by) {
  using A = typename Conv::A;
  S* dst = static_cast<S*>(dst_v);
  A acc[kBlock];
  for (size_t base = 0; base < count; base += kBlock) {
    const size_t n = count - base < kBlock ? count - base : kBlock;
    const S* s0 = static_cast<const S*>(srcs_v[0]) + base;
    for (size_t i = 0; i < n; ++i) acc[i] = Conv::load(s0[i]);
    for (int k = 1; k < nsrc; ++k) {
      const S* sk = static_cast<const S*>(srcs_v[k]) + base;
      for (size_t i = 0; i < n; ++i) acc[i] = Op::apply(acc[i], Conv::load(sk[i]));
    }
    if constexpr (std::is_floating_point_v<A>) {
      if (avg_by > 1) {
        const A d = static_cast<A>(avg_by);
        for (size_t i = 0; i < n; ++i) acc[i] = acc[i] / d;
      }
    }
    S* out = dst + base;
    for (size_t i = 0; i < n; ++i) out[i] = Conv::store(acc[i]);
  }
}

template <class S, class Conv>
void reduce_numeric(int32_t op, void* dst, const void* const* srcs, int nsrc, size_t count,
                    int nranks) {
  using A = typename Conv::A;
  switch (op) {
    case FLAGOS_REDUCE_PROD: return reduce_typed<S, Conv, Prod<A>>(dst, srcs, nsrc, count, 0);
    case FLAGOS_REDUCE_MIN: return reduce_typed<S, Conv, Min<A>>(dst, srcs, nsrc, count, 0);
    case FLAGOS_REDUCE_MAX: return reduce_typed<S, Conv, Max<A>>(dst, srcs, nsrc, count, 0);
    case FLAGOS_REDUCE_AVG: return reduce_typed<S, Conv, Sum<A>>(dst, srcs, nsrc, count, nranks);
    default: return reduce_typed<S, Conv, Sum<A>>(dst, srcs, nsrc, count, 0);
  }
}

}  // namespace

bool comm_type_of(flagos_dtype_t d, CommType* out) {
  if (d.lanes != 1) return false;
  switch (d.code) {
    case FLAGOS_DTYPE_FLOAT:
      if (d.bits == 32) *out = CommType::kF32;
      else if (d.bits == 64) *out = CommType::kF64;
      else if (d.bits == 16) *out = CommType::kF16;
      else return false;
      return true;
    case FLAGOS_DTYPE_BFLOAT:
      if (d.bits != 16) return false;
      *out = CommType::kBF16;
      return true;
    case FLAGOS_DTYPE_INT:
      if (d.bits == 8) *out = CommType::kI8;
      else if (d.bits == 16) *out = CommType::kI16;
      else if (d.bits == 32) *out = CommType::kI32;
      else if (d.bits == 64) *out = CommType::kI64;
      else return false;
      return true;
    case FLAGOS_DTYPE_UINT:
      if (d.bits != 8) return false;
      *out = CommType::kU8;
      return true;
    case FLAGOS_DTYPE_BOOL:
      if (d.bits != 8) return false;
      *out = CommType::kBool;
      return true;
    default:
      return false;
  }
}

size_t comm_type_size(CommType t) {
  switch (t) {
    case CommType::kF64: case CommType::kI64: return 8;
    case CommType::kF32: case CommType::kI32: return 4;
    case CommType::kF16: case CommType::kBF16: case CommType::kI16: return 2;
    default: return 1;
  }
}

bool comm_type_is_float(CommType t) {
  return t == CommType::kF32 || t == CommType::kF64 || t == CommType::kF16 || t == CommType::kBF16;
}

const char* comm_type_name(CommType t) {
  static const char* const names[] = {"float32", "float64", "float16", "bfloat16", "int8",
                                      "int16",   "int32",   "int64",   "uint8",    "bool"};
  return names[static_cast<int>(t)];
}

void reduce_arrays(CommType t, int32_t op, void* dst, const void* const* srcs, int nsrc,
                   size_t count, int nranks) {
  if (nsrc == 1) {  // nothing to combine (AVG over one rank divides by 1)
    if (dst != srcs[0]) std::memmove(dst, srcs[0], count * comm_type_size(t));
    return;
  }
  switch (t) {
    case CommType::kF32: return reduce_numeric<float, Plain<float>>(op, dst, srcs, nsrc, count, nranks);
    case CommType::kF64: return reduce_numeric<double, Plain<double>>(op, dst, srcs, nsrc, count, nranks);
    case CommType::kF16: return reduce_numeric<uint16_t, Half>(op, dst, srcs, nsrc, count, nranks);
    case CommType::kBF16: return reduce_numeric<uint16_t, BFloat>(op, dst, srcs, nsrc, count, nranks);
    case CommType::kI8: return reduce_numeric<int8_t, Plain<int8_t>>(op, dst, srcs, nsrc, count, 0);
    case CommType::kI16: return reduce_numeric<int16_t, Plain<int16_t>>(op, dst, srcs, nsrc, count, 0);
    case CommType::kI32: return reduce_numeric<int32_t, Plain<int32_t>>(op, dst, srcs, nsrc, count, 0);
    case CommType::kI64: return reduce_numeric<int64_t, Plain<int64_t>>(op, dst, srcs, nsrc, count, 0);
    case CommType::kU8: return reduce_numeric<uint8_t, Plain<uint8_t>>(op, dst, srcs, nsrc, count, 0);
    case CommType::kBool:
      if (op == FLAGOS_REDUCE_PROD || op == FLAGOS_REDUCE_MIN)
        return reduce_typed<uint8_t, Plain<uint8_t>, And>(dst, srcs, nsrc, count, 0);
      return reduce_typed<uint8_t, Plain<uint8_t>, Or>(dst, srcs, nsrc, count, 0);
  }
}

// Branch-free forms (after F. Giesen's public-domain conversions), so the
// block loops above can still vectorize.
float half_to_float(uint16_t h) {
  uint32_t o = uint32_t(h & 0x7fffu) << 13;          // exponent and mantissa in place
  float f = bits<float>(o) * bits<float>(0x77800000u);  // * 2^112 rebiases, denormals too
  uint32_t r = bits<uint32_t>(f);
  r = f >= 65536.0f ? (r | 0x7f800000u) : r;          // Inf/NaN keep an all-ones exponent
  return bits<float>(r | (uint32_t(h & 0x8000u) << 16));
}

uint16_t float_to_half(float f) {
  uint32_t u = bits<uint32_t>(f);
  const uint32_t sign = u & 0x80000000u;
  u ^= sign;
  uint16_t o;
  if (u >= 0x47800000u) {  // >= 65536, Inf or NaN
    o = u > 0x7f800000u ? 0x7e00 : 0x7c00;
  } else if (u < 0x38800000u) {  // below the smallest normal half: let the FPU round
    float t = bits<float>(u) + bits<float>(0x3f000000u);
    o = uint16_t(bits<uint32_t>(t) - 0x3f000000u);
  } else {
    const uint32_t mant_odd = (u >> 13) & 1u;
    u += 0xc8000fffu;  // rebias (15 - 127) << 23, plus half an ulp less one
    u += mant_odd;     // ties to even
    o = uint16_t(u >> 13);
  }
  return uint16_t(o | (sign >> 16));
}

float bf16_to_float(uint16_t h) { return bits<float>(uint32_t(h) << 16); }

uint16_t float_to_bf16(float f) {
  uint32_t u = bits<uint32_t>(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return uint16_t((u >> 16) | 0x40u);  // quiet NaN
  u += 0x7fffu + ((u >> 16) & 1u);
  return uint16_t(u >> 16);
}

}  // namespace flagos_host
