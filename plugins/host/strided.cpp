#include "strided.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace flagos_host {
namespace {

// [first, last] element offsets a non-empty view reaches.
void offset_range(const View& v, int64_t* first, int64_t* last) {
  *first = *last = 0;
  for (size_t d = 0; d < v.shape.size(); ++d) {
    int64_t reach = (v.shape[d] - 1) * v.strides[d];
    (reach < 0 ? *first : *last) += reach;
  }
}

}  // namespace

int64_t numel(const Dims& shape) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return n;
}

int64_t View::numel() const { return flagos_host::numel(shape); }

Dims contiguous_strides(const Dims& shape) {
  Dims strides(shape.size());
  int64_t step = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    strides[d] = step;
    step *= std::max<int64_t>(shape[d], 1);
  }
  return strides;
}

bool broadcast_shapes(const Dims& a, const Dims& b, Dims* out) {
  const size_t nd = std::max(a.size(), b.size());
  Dims shape(nd);
  for (size_t i = 0; i < nd; ++i) {  // aligned from the last dim
    int64_t x = i < a.size() ? a[a.size() - 1 - i] : 1;
    int64_t y = i < b.size() ? b[b.size() - 1 - i] : 1;
    if (x != y && x != 1 && y != 1) return false;
    shape[nd - 1 - i] = x == 1 ? y : x;
  }
  *out = std::move(shape);
  return true;
}

bool broadcast_view(const View& v, const Dims& shape, View* out) {
  if (v.shape.size() > shape.size()) return false;
  const size_t lead = shape.size() - v.shape.size();
  View b = v;
  b.shape = shape;
  b.strides.assign(shape.size(), 0);
  for (size_t d = 0; d < v.shape.size(); ++d) {
    if (v.shape[d] == shape[lead + d]) b.strides[lead + d] = v.strides[d];
    else if (v.shape[d] != 1) return false;
  }
  *out = std::move(b);
  return true;
}

bool overlaps(const View& a, const View& b) {
  if (a.numel() == 0 || b.numel() == 0) return false;
  int64_t a0, a1, b0, b1;
  offset_range(a, &a0, &a1);
  offset_range(b, &b0, &b1);
  const uint8_t* a_lo = a.data + a0 * int64_t(a.elem_size);
  const uint8_t* a_hi = a.data + (a1 + 1) * int64_t(a.elem_size);
  const uint8_t* b_lo = b.data + b0 * int64_t(b.elem_size);
  const uint8_t* b_hi = b.data + (b1 + 1) * int64_t(b.elem_size);
  return a_lo < b_hi && b_lo < a_hi;
}

bool same_layout(const View& a, const View& b) {
  return a.data == b.data && a.elem_size == b.elem_size && a.shape == b.shape &&
         a.strides == b.strides;
}

bool has_internal_overlap(const View& v) {
  // Non-overlapping if, taken by increasing |stride|, each step jumps past
  // everything the smaller dims reach. Anything else counts as overlapping.
  std::vector<std::pair<int64_t, int64_t>> dims;  // (|stride|, size)
  for (size_t d = 0; d < v.shape.size(); ++d)
    if (v.shape[d] > 1) dims.emplace_back(std::llabs(v.strides[d]), v.shape[d]);
  std::sort(dims.begin(), dims.end());
  int64_t reach = 0;
  for (auto [stride, size] : dims) {
    if (stride <= reach) return true;
    reach += stride * (size - 1);
  }
  return false;
}

void copy_elements(const View& dst, const View& src) {
  const size_t es = dst.elem_size;
  for_each_offset<2>(dst.shape, {&dst.strides, &src.strides}, [&](const auto& off) {
    std::memcpy(dst.data + off[0] * int64_t(es), src.data + off[1] * int64_t(es), es);
  });
}

}  // namespace flagos_host
