// One kernel invocation, validated against the parameters of its schema: the
// call and descriptor struct sizes, the device, the stream, the argument
// kinds, and every tensor's memory (inside a live allocation of the call's
// device). Malformed calls are INVALID_ARGUMENT (INVALID_HANDLE for the
// stream); tensors become Views at the plugin's own addresses, so kernels
// work in strict mode, and the blocks are kept alive until the work ran.
#pragma once

#include <functional>
#include <initializer_list>
#include <memory>
#include <vector>

#include "flagos/ext/kernels.h"
#include "kernel_dtype.h"
#include "memory.h"
#include "stream.h"
#include "strided.h"

namespace flagos_host {

// What a schema parameter accepts.
enum class Param {
  kTensor,      // Tensor / Tensor(a!) out
  kScalar,      // Scalar: INT, DOUBLE or BOOL
  kBool,        // bool
  kOptIntList,  // int[]?: NONE, INT_LIST (or one INT)
  kOptDtype,    // ScalarType?: NONE, DTYPE (or its INT code)
};

struct ParamSpec {
  Param kind;
  const char* name;
};

class KernelCall {
 public:
  // Validates `call` against `params` (schema order, out= included).
  flagos_status_t open(const char* fn, const flagos_kernel_call_t* call,
                       std::initializer_list<ParamSpec> params);

  const flagos_kernel_arg_t& arg(size_t i) const { return args_[i]; }
  const View& tensor(size_t i) const { return views_[i]; }

  // Enqueues `work` on the call's stream; the call returns at once.
  flagos_status_t enqueue(const char* fn, std::function<void()> work) const;

  // Scratch of `bytes` for work this call enqueues, from the core's
  // workspace service (stream-ordered on the call's stream, given back when
  // this KernelCall goes): *scratch is where the work reads and writes it.
  // *scratch is null when the core offers no workspace service (the kernel
  // then uses memory of its own). Out of memory declines the call
  // (FLAGOS_ERROR_UNSUPPORTED: the next route serves it); another failure of
  // the service is the call's error.
  flagos_status_t workspace(const char* fn, uint64_t bytes, uint8_t** scratch);

  KernelCall() = default;
  KernelCall(const KernelCall&) = delete;
  KernelCall& operator=(const KernelCall&) = delete;
  ~KernelCall();  // gives the workspaces back, in stream order

 private:
  flagos_status_t bind_tensor(const char* fn, const ParamSpec& p, size_t i);

  const flagos_kernel_call_t* call_ = nullptr;
  const flagos_kernel_arg_t* args_ = nullptr;
  std::shared_ptr<Stream> stream_;
  std::vector<View> views_;  // by argument position; empty for non-tensors
  std::vector<std::shared_ptr<Block>> blocks_;
  std::vector<void*> workspaces_;  // core-allocated, freed by the destructor
};

// FLAGOS_ERROR_UNSUPPORTED with a message: the core takes the next route.
flagos_status_t unsupported(const char* fn, const char* fmt, ...)
    __attribute__((format(printf, 2, 3)));

// The one Elem shared by every view in `views`, else UNSUPPORTED.
flagos_status_t common_elem(const char* fn, std::initializer_list<const View*> views, Elem* out);

// The value of Scalar argument `name` as T; UNSUPPORTED where ATen would not
// convert it silently (a floating Scalar for an integer tensor).
template <class T>
flagos_status_t scalar_arg(const char* fn, const flagos_kernel_arg_t& a, const char* name, T* out) {
  if (a.kind != FLAGOS_ARG_DOUBLE) {
    *out = static_cast<T>(a.v.i);  // INT, or BOOL as 0/1
    return FLAGOS_SUCCESS;
  }
  if constexpr (std::is_integral_v<T>) {
    return unsupported(fn, "a floating %s for an integer tensor", name);
  } else {
    *out = static_cast<T>(a.v.f);
    return FLAGOS_SUCCESS;
  }
}

}  // namespace flagos_host
