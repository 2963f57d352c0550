// Strided tensors as the kernels see them: a plugin-accessible address of the
// first element, a shape and strides in elements. Broadcasting, overlap tests
// and an odometer walk that hands out element offsets for several operands.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "flagos/ext/kernels.h"

namespace flagos_host {

using Dims = std::vector<int64_t>;

struct View {
  uint8_t* data = nullptr;  // first element, at the plugin's address (null when empty)
  flagos_dtype_t dtype{};
  size_t elem_size = 0;
  Dims shape;
  Dims strides;  // elements, may be 0 (broadcast)

  int64_t numel() const;
  template <class T>
  T* at(int64_t offset) const {
    return reinterpret_cast<T*>(data) + offset;
  }
};

int64_t numel(const Dims& shape);
Dims contiguous_strides(const Dims& shape);

// The broadcast of two shapes (numpy rules), or false when incompatible.
bool broadcast_shapes(const Dims& a, const Dims& b, Dims* out);
// `v` seen at `shape` (stride 0 along broadcast dims), or false when `v`
// does not broadcast to exactly `shape`.
bool broadcast_view(const View& v, const Dims& shape, View* out);

// Whether the memory of `a` and `b` intersects.
bool overlaps(const View& a, const View& b);
// Whether `a` and `b` address exactly the same element for every index.
bool same_layout(const View& a, const View& b);
// Whether two indices of `v` address the same element (a written-to tensor
// must not).
bool has_internal_overlap(const View& v);

// Calls f(offsets) once per index of `shape`, in row-major order, where
// offsets[i] is the element offset of that index in operand i (strides[i]
// has shape.size() entries). A 0-dim shape has one index.
template <size_t N, class F>
void for_each_offset(const Dims& shape, const std::array<const Dims*, N>& strides, F&& f) {
  const int64_t n = numel(shape);
  const size_t nd = shape.size();
  Dims index(nd, 0);
  std::array<int64_t, N> off{};
  for (int64_t k = 0; k < n; ++k) {
    f(off);
    for (size_t d = nd; d-- > 0;) {  // advance the odometer, last dim fastest
      if (++index[d] < shape[d]) {
        for (size_t i = 0; i < N; ++i) off[i] += (*strides[i])[d];
        break;
      }
      for (size_t i = 0; i < N; ++i) off[i] -= (*strides[i])[d] * (shape[d] - 1);
      index[d] = 0;
    }
  }
}

// Element-wise copy between two views of one shape and dtype.
void copy_elements(const View& dst, const View& src);

// out[i] = T(values[i]) for `values` in out's row-major order: how results
// computed in a wider accumulator reach a strided out.
template <class T, class A>
void store_row_major(const View& out, const A* values) {
  const Dims row_major = contiguous_strides(out.shape);
  for_each_offset<2>(out.shape, {&out.strides, &row_major}, [&](const auto& off) {
    *out.at<T>(off[0]) = static_cast<T>(values[size_t(off[1])]);
  });
}
template <class T, class A>
void store_row_major(const View& out, const std::vector<A>& values) {
  store_row_major<T>(out, values.data());
}

// Runs compute(dst) with dst = out, or, with `stage`, with a contiguous
// scratch copy that is then copied into out: for when out shares memory with
// an input in another layout, so no input element is overwritten before use.
template <class F>
void with_output(const View& out, bool stage, F&& compute) {
  if (!stage) {
    compute(out);
    return;
  }
  std::vector<uint8_t> scratch(size_t(out.numel()) * out.elem_size);
  View tmp = out;
  tmp.data = scratch.data();
  tmp.strides = contiguous_strides(out.shape);
  compute(tmp);
  copy_elements(out, tmp);
}

}  // namespace flagos_host
