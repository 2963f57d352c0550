// libopapi.so: CANN's aclnn operator API, simulated, beside libascendcl.so
// (ascend.cpp) and sharing its engine instance (ascend_vendor.h: the same
// devices, memory, streams, init state and aclGetRecentErrMsg() text, which
// libascendcl.so alone exports; libopapi.so needs libascendcl.so, so a
// lookup through its handle finds it). Real CANN splits these symbols between
// libopapi.so (the operators) and libnnopbase.so (aclCreateTensor and the
// other objects, the executor calls), which libopapi.so depends on; the sim
// exports them all from libopapi.so. No CANN header or code is used: the
// signatures are those of CANN's public API reference, the code is our own.
//
// Operators: Add, Sub (alpha), Mul, Div, Neg, Abs, Exp, Mm; float32 for all,
// int64 for Add, Sub, Mul, Neg, Abs. Handles are never-reused tokens
// (aclnn_objects.h). The rules, each answered with an aclnnStatus (codes
// unverified on hardware: ascend_vendor.h) and reported as every simrt rule:
//   - aclInit first (acl.h, as libascendcl.so): GetWorkspaceSize and launches
//     answer ACLNN_ERR_RUNTIME_ERROR before it;
//   - GetWorkspaceSize validates (CANN docs, "aclnn API two-phase interface":
//     the first phase checks the arguments and returns the workspace size and
//     an executor, or an error and none): one dtype for every tensor, one the
//     operator supports, shapes that broadcast to out's (numpy rules), mm's
//     [n,k] x [k,m] -> [n,m] and cubeMathType 0..3: ACLNN_ERR_PARAM_INVALID;
//     NULL arguments: ACLNN_ERR_PARAM_NULLPTR;
//   - a launch (two-phase interface, second phase) needs workspaceSize at
//     least what GetWorkspaceSize returned, a workspace inside one live device
//     allocation of the stream's device (NULL only when none is needed), the
//     executor of its own operator, a stream of the executor's device, and
//     every tensor's data inside one live allocation of that device, checked
//     at the launch and again when the stream runs it (a use after free is
//     reported on stderr and computes nothing): ACLNN_ERR_PARAM_INVALID;
//   - an executor is single-use (CANN, aclSetAclOpExecutorRepeatable: without
//     it the executor is freed by its launch; with it, only
//     aclDestroyAclOpExecutor frees it): a second launch, and destroying a
//     non-repeatable executor, are ACLNN_ERR_PARAM_INVALID;
//   - aclSetInputTensorAddr / aclSetOutputTensorAddr (CANN, same section:
//     they refresh a repeatable executor's addresses) only on a repeatable
//     executor, by the operator's input (output) index, with the aclTensor
//     given for that position and a non-NULL address.
// GetWorkspaceSize and launches go through the engine's checks (fork,
// host-function re-entry, SIMRT_FAIL); the object and executor calls are
// host bookkeeping and do not (a host function may destroy objects).
#include <cstring>

#include "aclnn_ops.h"
#include "aclnn_status.h"
#include "exports.h"

using namespace simrt_aclnn;

namespace {

// aclCreateTensor's arguments: bounded, so every extent later fits in int64.
bool valid_tensor(const Tensor& t, const char** why) {
  __int128 n = 1;
  for (int64_t d : t.dims) {
    if (d < 0) return *why = "a view dimension is negative", false;
    n *= d;
    if (n > (static_cast<__int128>(1) << 59)) return *why = "the view has too many elements", false;
  }
  if (t.offset < 0) return *why = "offset is negative", false;
  int64_t lo = 0, hi = 0;
  bool overflow = false;
  extent(t.dims, t.strides, t.offset, &lo, &hi, &overflow);
  if (overflow) return *why = "the view's extent (offset and strides) overflows", false;
  return true;
}

int destroyed(const char* sym, const void* h, bool ok, const char* what) {
  if (h == nullptr || ok) return kAclnnSuccess;  // destroying NULL: nothing to do
  return fail(sym, kAclnnParamInvalid, "%p is not a live %s (destroyed twice, or never created)", h, what);
}

int set_addr(const char* sym, aclOpExecutor* executor, size_t index, aclTensor* tensor, void* addr, bool output) {
  if (executor == nullptr) return fail(sym, kAclnnParamNullptr, "executor is NULL");
  if (addr == nullptr) return fail(sym, kAclnnParamNullptr, "addr is NULL");
  std::unique_lock<std::mutex> lock = lock_executors();
  Executor* e = find_executor(executor);
  if (e == nullptr)
    return fail(sym, kAclnnParamInvalid, "executor %p is not live (a single-use executor is freed by its launch)",
                static_cast<void*>(executor));
  if (!e->repeatable)
    return fail(sym, kAclnnParamInvalid,
                "executor %p is not repeatable: only an executor marked by aclSetAclOpExecutorRepeatable is relaunched "
                "with new addresses", static_cast<void*>(executor));
  std::vector<Operand>& list = output ? e->out : e->in;
  if (index >= list.size())
    return fail(sym, kAclnnParamInvalid, "index %zu is not one of %s's %zu tensor %s", index,
                launch_symbol(e->op), list.size(), output ? "outputs" : "inputs");
  if (list[index].handle != tensor)
    return fail(sym, kAclnnParamInvalid, "tensor %p is not the aclTensor given as %s (%p) at %s",
                static_cast<void*>(tensor), list[index].name, static_cast<const void*>(list[index].handle),
                prepare_symbol(e->op));
  list[index].data = addr;  // the storage base from now on; offset and strides stay
  return kAclnnSuccess;
}

}  // namespace

SIMRT_EXPORT aclTensor* aclCreateTensor(const int64_t* viewDims, uint64_t viewDimsNum, int dataType,
                                        const int64_t* stride, int64_t offset, int format,
                                        const int64_t* storageDims, uint64_t storageDimsNum, void* tensorData) {
  const char* sym = "aclCreateTensor";
  if (dtype_size(dataType) == 0) return fail(sym, kAclnnParamInvalid, "dataType %d is not an aclDataType", dataType), nullptr;
  if (viewDimsNum > kMaxDims || storageDimsNum > kMaxDims)
    return fail(sym, kAclnnParamInvalid, "more than %zu dimensions", kMaxDims), nullptr;
  if ((viewDims == nullptr && viewDimsNum > 0) || (storageDims == nullptr && storageDimsNum > 0))
    return fail(sym, kAclnnParamNullptr, "viewDims or storageDims is NULL"), nullptr;
  auto t = std::make_unique<Tensor>();
  t->dims.assign(viewDims, viewDims + viewDimsNum);
  t->storage.assign(storageDims, storageDims + storageDimsNum);
  if (stride != nullptr) {
    t->strides.assign(stride, stride + viewDimsNum);
  } else {  // the sim's choice for a NULL stride: contiguous, row-major
    t->strides.assign(viewDimsNum, 1);
    for (size_t i = viewDimsNum; i-- > 1;) t->strides[i - 1] = t->strides[i] * (t->dims[i] > 0 ? t->dims[i] : 1);
  }
  t->dtype = dataType;
  t->offset = offset;
  t->format = format;
  t->data = tensorData;
  const char* why = nullptr;
  if (!valid_tensor(*t, &why)) return fail(sym, kAclnnParamInvalid, "%s", why), nullptr;
  return add_tensor(std::move(t));
}

SIMRT_EXPORT int32_t aclDestroyTensor(const aclTensor* tensor) {
  return destroyed("aclDestroyTensor", tensor, remove_tensor(tensor), "aclTensor");
}

SIMRT_EXPORT aclScalar* aclCreateScalar(void* value, int dataType) {
  const size_t es = dtype_size(dataType);
  if (value == nullptr) return fail("aclCreateScalar", kAclnnParamNullptr, "value is NULL"), nullptr;
  if (es == 0) return fail("aclCreateScalar", kAclnnParamInvalid, "dataType %d is not an aclDataType", dataType), nullptr;
  auto s = std::make_unique<Scalar>();
  s->dtype = dataType;
  std::memcpy(s->bytes, value, es);  // one element, copied
  return add_scalar(std::move(s));
}

SIMRT_EXPORT int32_t aclDestroyScalar(const aclScalar* scalar) {
  return destroyed("aclDestroyScalar", scalar, remove_scalar(scalar), "aclScalar");
}

SIMRT_EXPORT aclIntArray* aclCreateIntArray(const int64_t* value, uint64_t size) {
  if (value == nullptr && size > 0) return fail("aclCreateIntArray", kAclnnParamNullptr, "value is NULL"), nullptr;
  auto a = std::make_unique<IntArray>();
  a->values.assign(value, value + size);
  return add_int_array(std::move(a));
}

SIMRT_EXPORT int32_t aclDestroyIntArray(const aclIntArray* array) {
  return destroyed("aclDestroyIntArray", array, remove_int_array(array), "aclIntArray");
}

SIMRT_EXPORT int32_t aclSetAclOpExecutorRepeatable(aclOpExecutor* executor) {
  const char* sym = "aclSetAclOpExecutorRepeatable";
  if (executor == nullptr) return fail(sym, kAclnnParamNullptr, "executor is NULL");
  std::unique_lock<std::mutex> lock = lock_executors();
  Executor* e = find_executor(executor);
  if (e == nullptr)
    return fail(sym, kAclnnParamInvalid, "executor %p is not live (a single-use executor is freed by its launch)",
                static_cast<void*>(executor));
  e->repeatable = true;
  return kAclnnSuccess;
}

SIMRT_EXPORT int32_t aclDestroyAclOpExecutor(aclOpExecutor* executor) {
  const char* sym = "aclDestroyAclOpExecutor";
  if (executor == nullptr) return kAclnnSuccess;
  std::unique_lock<std::mutex> lock = lock_executors();
  Executor* e = find_executor(executor);
  if (e == nullptr)
    return fail(sym, kAclnnParamInvalid,
                "executor %p is not live (a single-use executor is freed by its launch; destroyed twice?)",
                static_cast<void*>(executor));
  if (!e->repeatable)  // it stays live: its launch frees it
    return fail(sym, kAclnnParamInvalid,
                "executor %p is not repeatable: a single-use executor is freed by its launch, and only one marked by "
                "aclSetAclOpExecutorRepeatable is destroyed by aclDestroyAclOpExecutor", static_cast<void*>(executor));
  take_executor(executor);  // work already enqueued holds its own copy
  return kAclnnSuccess;
}

SIMRT_EXPORT int32_t aclSetInputTensorAddr(aclOpExecutor* executor, size_t index, aclTensor* tensor, void* addr) {
  return set_addr("aclSetInputTensorAddr", executor, index, tensor, addr, false);
}

SIMRT_EXPORT int32_t aclSetOutputTensorAddr(aclOpExecutor* executor, size_t index, aclTensor* tensor, void* addr) {
  return set_addr("aclSetOutputTensorAddr", executor, index, tensor, addr, true);
}

// The operators: GetWorkspaceSize (aclnn_prepare.cpp) and the launch (aclnn_launch.cpp).
#define SIMRT_ACLNN_LAUNCH(N)                                                                        \
  SIMRT_EXPORT int32_t aclnn##N(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,   \
                                void* stream) {                                                     \
    return launch(Op::N, workspace, workspaceSize, executor, stream);                               \
  }
#define SIMRT_ACLNN_UNARY(N)                                                                         \
  SIMRT_EXPORT int32_t aclnn##N##GetWorkspaceSize(const aclTensor* self, aclTensor* out,             \
                                                  uint64_t* workspaceSize, aclOpExecutor** executor) { \
    return prepare_elementwise(Op::N, self, nullptr, nullptr, out, workspaceSize, executor);        \
  }                                                                                                 \
  SIMRT_ACLNN_LAUNCH(N)

SIMRT_EXPORT int32_t aclnnAddGetWorkspaceSize(const aclTensor* self, const aclTensor* other, const aclScalar* alpha,
                                              aclTensor* out, uint64_t* workspaceSize, aclOpExecutor** executor) {
  return prepare_elementwise(Op::Add, self, other, alpha, out, workspaceSize, executor);
}
SIMRT_ACLNN_LAUNCH(Add)

SIMRT_EXPORT int32_t aclnnSubGetWorkspaceSize(const aclTensor* self, const aclTensor* other, const aclScalar* alpha,
                                              aclTensor* out, uint64_t* workspaceSize, aclOpExecutor** executor) {
  return prepare_elementwise(Op::Sub, self, other, alpha, out, workspaceSize, executor);
}
SIMRT_ACLNN_LAUNCH(Sub)

SIMRT_EXPORT int32_t aclnnMulGetWorkspaceSize(const aclTensor* self, const aclTensor* other, aclTensor* out,
                                              uint64_t* workspaceSize, aclOpExecutor** executor) {
  return prepare_elementwise(Op::Mul, self, other, nullptr, out, workspaceSize, executor);
}
SIMRT_ACLNN_LAUNCH(Mul)

SIMRT_EXPORT int32_t aclnnDivGetWorkspaceSize(const aclTensor* self, const aclTensor* other, aclTensor* out,
                                              uint64_t* workspaceSize, aclOpExecutor** executor) {
  return prepare_elementwise(Op::Div, self, other, nullptr, out, workspaceSize, executor);
}
SIMRT_ACLNN_LAUNCH(Div)

SIMRT_ACLNN_UNARY(Neg)
SIMRT_ACLNN_UNARY(Abs)
SIMRT_ACLNN_UNARY(Exp)

SIMRT_EXPORT int32_t aclnnMmGetWorkspaceSize(const aclTensor* self, const aclTensor* mat2, aclTensor* out,
                                             int8_t cubeMathType, uint64_t* workspaceSize, aclOpExecutor** executor) {
  return prepare_mm(self, mat2, out, cubeMathType, workspaceSize, executor);
}
SIMRT_ACLNN_LAUNCH(Mm)
