// mm.out: out[n, m] = self[n, k] @ mat2[k, m] with any strides, accumulating
// in double for floating types. The product is complete before out is
// written, so out may alias an input.
#include <algorithm>

#include "kernel_call.h"
#include "kernels.h"
#include "kit.h"

namespace flagos_host {

flagos_status_t run_mm_out(const flagos_kernel_call_t* call) {
  static const char* fn = "aten::mm.out";
  return guarded(fn, [&] {
    KernelCall c;
    flagos_status_t st = c.open(
        fn, call, {{Param::kTensor, "self"}, {Param::kTensor, "mat2"}, {Param::kTensor, "out"}});
    if (st != FLAGOS_SUCCESS) return st;
    const View& a = c.tensor(0);
    const View& b = c.tensor(1);
    const View& out = c.tensor(2);
    Elem e{};
    st = common_elem(fn, {&a, &b, &out}, &e);
    if (st != FLAGOS_SUCCESS) return st;
    if (a.shape.size() != 2 || b.shape.size() != 2 || a.shape[1] != b.shape[0])
      return unsupported(fn, "self and mat2 are not [n, k] and [k, m] matrices");
    if (out.shape != Dims{a.shape[0], b.shape[1]})
      return unsupported(fn, "out does not have the result's shape");
    if (has_internal_overlap(out)) return unsupported(fn, "out has overlapping elements");
    return dispatch(e, [&](auto tag) {
      using T = decltype(tag);
      const size_t cells = size_t(a.shape[0] * b.shape[1]);
      // The accumulator is the kernel's workspace: the core's when it lends
      // one (as an aclnn kernel's would be), else the heap's.
      uint8_t* scratch = nullptr;
      if (flagos_status_t ws = c.workspace(fn, cells * sizeof(Acc<T>), &scratch); ws != FLAGOS_SUCCESS)
        return ws;
      return c.enqueue(fn, [a, b, out, cells, scratch] {
        const int64_t n = a.shape[0], k = a.shape[1], m = b.shape[1];
        std::vector<Acc<T>> heap(scratch ? 0 : cells);
        Acc<T>* acc = scratch ? reinterpret_cast<Acc<T>*>(scratch) : heap.data();
        std::fill(acc, acc + cells, Acc<T>(0));
        for (int64_t i = 0; i < n; ++i)
          for (int64_t p = 0; p < k; ++p) {
            const Acc<T> x = *a.at<T>(i * a.strides[0] + p * a.strides[1]);
            for (int64_t j = 0; j < m; ++j) {
              Acc<T>& r = acc[size_t(i * m + j)];
              r = add_wrap(r, mul_wrap(x, Acc<T>(*b.at<T>(p * b.strides[0] + j * b.strides[1]))));
            }
          }
        store_row_major<T>(out, acc);
      });
    });
  });
}

}  // namespace flagos_host
