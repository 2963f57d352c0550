// sum.IntList_out: sums over the listed dims (all of them for None or []),
// accumulating in double for floating types, in wrapping int64 otherwise.
// The whole input is read before out is written, so out may alias it.
#include "kernel_call.h"
#include "kernels.h"
#include "kit.h"

namespace flagos_host {
namespace {

// reduced[d] for each dim of a `ndim`-dim input, from sum's `dim` argument.
flagos_status_t reduced_dims(const char* fn, size_t ndim, const flagos_kernel_arg_t& dim,
                             std::vector<bool>* reduced) {
  std::vector<int64_t> dims;
  if (dim.kind == FLAGOS_ARG_INT) dims.push_back(dim.v.i);
  if (dim.kind == FLAGOS_ARG_INT_LIST) dims.assign(dim.v.ints.data, dim.v.ints.data + dim.v.ints.size);
  reduced->assign(ndim, dims.empty());  // None and [] reduce every dim
  const int64_t range = std::max<int64_t>(int64_t(ndim), 1);  // a 0-dim input takes 0 and -1
  std::vector<bool> seen(size_t(range), false);
  for (int64_t d : dims) {
    if (d < -range || d >= range) return unsupported(fn, "dim %lld out of range", (long long)d);
    const size_t w = size_t(d < 0 ? d + range : d);
    if (seen[w]) return unsupported(fn, "dim %lld appears twice", (long long)d);
    seen[w] = true;
    if (w < ndim) (*reduced)[w] = true;
  }
  return FLAGOS_SUCCESS;
}

}  // namespace

flagos_status_t run_sum_intlist_out(const flagos_kernel_call_t* call) {
  static const char* fn = "aten::sum.IntList_out";
  return guarded(fn, [&] {
    KernelCall c;
    flagos_status_t st = c.open(fn, call, {{Param::kTensor, "self"}, {Param::kOptIntList, "dim"},
                                           {Param::kBool, "keepdim"}, {Param::kOptDtype, "dtype"},
                                           {Param::kTensor, "out"}});
    if (st != FLAGOS_SUCCESS) return st;
    if (c.arg(3).kind != FLAGOS_ARG_NONE) return unsupported(fn, "a dtype argument");
    const View& self = c.tensor(0);
    const View& out = c.tensor(4);
    Elem e{};
    std::vector<bool> reduced;
    st = common_elem(fn, {&self, &out}, &e);
    if (st == FLAGOS_SUCCESS) st = reduced_dims(fn, self.shape.size(), c.arg(1), &reduced);
    if (st != FLAGOS_SUCCESS) return st;
    const bool keepdim = c.arg(2).v.i != 0;
    Dims result_shape;
    for (size_t d = 0; d < self.shape.size(); ++d)
      if (!reduced[d] || keepdim) result_shape.push_back(reduced[d] ? 1 : self.shape[d]);
    if (out.shape != result_shape) return unsupported(fn, "out does not have the result's shape");
    if (has_internal_overlap(out)) return unsupported(fn, "out has overlapping elements");
    // Where each input element lands in a row-major accumulator of out's shape.
    const Dims row_major = contiguous_strides(result_shape);
    Dims acc_strides(self.shape.size(), 0);
    for (size_t d = 0, j = 0; d < self.shape.size(); ++d) {
      if (!reduced[d]) acc_strides[d] = row_major[j];
      if (!reduced[d] || keepdim) ++j;
    }
    return dispatch(e, [&](auto tag) {
      using T = decltype(tag);
      return c.enqueue(fn, [self, out, acc_strides] {
        std::vector<Acc<T>> acc(size_t(out.numel()), Acc<T>(0));
        for_each_offset<2>(self.shape, {&self.strides, &acc_strides}, [&](const auto& off) {
          Acc<T>& a = acc[size_t(off[1])];
          a = add_wrap(a, Acc<T>(*self.at<T>(off[0])));
        });
        store_row_major<T>(out, acc);
      });
    });
  });
}

}  // namespace flagos_host
