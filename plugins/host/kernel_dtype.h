// The element types the reference kernels compute in, dispatch from a
// descriptor's dtype to a C++ type, and arithmetic that wraps on int64 like
// ATen does (signed overflow is undefined behaviour in C++).
#pragma once

#include <cstdint>
#include <type_traits>

#include "flagos/ext/kernels.h"

namespace flagos_host {

enum class Elem { kFloat32, kFloat64, kInt64 };

// The Elem of `d`, or false for a type the reference kernels do not handle.
inline bool elem_of(flagos_dtype_t d, Elem* out) {
  if (d.lanes != 1) return false;
  if (d.code == FLAGOS_DTYPE_FLOAT && d.bits == 32) *out = Elem::kFloat32;
  else if (d.code == FLAGOS_DTYPE_FLOAT && d.bits == 64) *out = Elem::kFloat64;
  else if (d.code == FLAGOS_DTYPE_INT && d.bits == 64) *out = Elem::kInt64;
  else return false;
  return true;
}

// Returns f(T{}) with the C++ type T of `e`.
template <class F>
auto dispatch(Elem e, F&& f) {
  switch (e) {
    case Elem::kFloat64: return f(double{});
    case Elem::kInt64: return f(int64_t{});
    case Elem::kFloat32: break;
  }
  return f(float{});
}

// Where sums and dot products accumulate: double for floating types.
template <class T>
using Acc = std::conditional_t<std::is_floating_point_v<T>, double, T>;

template <class T>
T add_wrap(T a, T b) {
  if constexpr (std::is_integral_v<T>) return T(uint64_t(a) + uint64_t(b));
  else return a + b;
}

template <class T>
T mul_wrap(T a, T b) {
  if constexpr (std::is_integral_v<T>) return T(uint64_t(a) * uint64_t(b));
  else return a * b;
}

template <class T>
T neg_wrap(T a) {
  if constexpr (std::is_integral_v<T>) return T(uint64_t(0) - uint64_t(a));
  else return -a;
}

}  // namespace flagos_host
