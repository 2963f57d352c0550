// FLAGOS_EXTENSION_KERNELS: the reference kernel table. Each schema is the
// installed torch's str(schema) of the out= overload, character for
// character: the core registers a kernel only on an exact match.
#include "api.h"
#include "graphs.h"
#include "kernels.h"

namespace flagos_host {
namespace {

constexpr flagos_kernel_t kernel(const char* schema,
                                 flagos_status_t (*run)(const flagos_kernel_call_t*)) {
  return {sizeof(flagos_kernel_t), schema, run};
}

constexpr flagos_kernel_t kKernels[] = {
    kernel("aten::add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> "
           "Tensor(a!)",
           run_add_out),
    kernel("aten::mul.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)",
           run_mul_out),
    kernel("aten::relu.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)", run_relu_out),
    kernel("aten::neg.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)", run_neg_out),
    kernel("aten::abs.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)", run_abs_out),
    kernel("aten::fill.Scalar_out(Tensor self, Scalar value, *, Tensor(a!) out) -> Tensor(a!)",
           run_fill_scalar_out),
    kernel("aten::copy.out(Tensor self, Tensor src, bool non_blocking=False, *, Tensor(a!) out) "
           "-> Tensor(a!)",
           run_copy_out),
    kernel("aten::sum.IntList_out(Tensor self, int[1]? dim, bool keepdim=False, *, "
           "ScalarType? dtype=None, Tensor(a!) out) -> Tensor(a!)",
           run_sum_intlist_out),
    kernel("aten::mm.out(Tensor self, Tensor mat2, *, Tensor(a!) out) -> Tensor(a!)", run_mm_out),
};

constexpr size_t kNumKernels = sizeof(kKernels) / sizeof(kKernels[0]);

// Not const: the options of the first handshake may drop the graphs and
// collectives extensions from the chain (set_kernels_next).
flagos_kernels_ext_t& kernels_ext() {
  static flagos_kernels_ext_t ext = [] {
    static const flagos_kernel_t* pointers[kNumKernels];
    for (size_t i = 0; i < kNumKernels; ++i) pointers[i] = &kKernels[i];
    flagos_kernels_ext_t e{};
    e.base.struct_size = sizeof(flagos_kernels_ext_t);
    e.base.type = FLAGOS_EXTENSION_KERNELS;
    e.base.version = FLAGOS_KERNELS_EXT_VERSION;
    e.base.next = graphs_extension();
    e.num_kernels = kNumKernels;
    e.kernels = pointers;
    return e;
  }();
  return ext;
}

}  // namespace

const flagos_extension_t* kernels_extension() { return &kernels_ext().base; }

void set_kernels_next(const flagos_extension_t* next) { kernels_ext().base.next = next; }

}  // namespace flagos_host
