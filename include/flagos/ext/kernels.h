/*
 * flagos/ext/kernels.h — FLAGOS_EXTENSION_KERNELS: native operator kernels.
 *
 * A plugin lists kernels keyed by the FULL ATen schema string of an out=
 * overload, e.g.
 *   "aten::add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)"
 * The core parses the string and registers the kernel only when it declares
 * the installed torch's operator exactly (same name, overload, arguments,
 * defaults, alias annotations and returns); a string that does not parse, or
 * names an operator this torch lacks or declares differently, is skipped
 * with one "[flagos] plugin <name>: native kernel '<schema>' skipped: <why>"
 * warning at the first native-route lookup. Only out=
 * variants exist here: the core infers shapes, allocates every output and
 * derives the functional and in-place forms from the out= kernel.
 *
 * Tensors are described DLPack-style. The core owns every descriptor, shape
 * and stride array; they are valid only during the run() call.
 */
#ifndef FLAGOS_EXT_KERNELS_H_
#define FLAGOS_EXT_KERNELS_H_

#include "flagos/plugin_api.h"

#ifdef __cplusplus
extern "C" {
#endif

#define FLAGOS_KERNELS_EXT_VERSION 0u

/* Element type, same encoding as DLPack's DLDataType. */
typedef struct flagos_dtype {
  uint8_t code;   /* FLAGOS_DTYPE_* */
  uint8_t bits;   /* 8, 16, 32, 64 */
  uint16_t lanes; /* 1 */
} flagos_dtype_t;

#define FLAGOS_DTYPE_INT 0
#define FLAGOS_DTYPE_UINT 1
#define FLAGOS_DTYPE_FLOAT 2
#define FLAGOS_DTYPE_BFLOAT 4
#define FLAGOS_DTYPE_COMPLEX 5
#define FLAGOS_DTYPE_BOOL 6

/* One strided tensor on a flagos device. Size-prefixed, frozen per minor. */
typedef struct flagos_tensor_desc {
  size_t struct_size;
  void* data;             /* device pointer to the storage; never dereferenced by the core */
  uint64_t byte_offset;   /* first element is at (char*)data + byte_offset */
  flagos_dtype_t dtype;
  flagos_device_t device;
  int32_t ndim;           /* 0 for a scalar tensor */
  int32_t reserved0;
  const int64_t* shape;   /* ndim entries */
  const int64_t* strides; /* ndim entries, in elements (not bytes), never NULL */
} flagos_tensor_desc_t;

/* Argument kinds, in schema order. */
#define FLAGOS_ARG_NONE 0        /* an absent optional */
#define FLAGOS_ARG_TENSOR 1      /* v.tensor */
#define FLAGOS_ARG_INT 2         /* v.i: int, SymInt, integral Scalar */
#define FLAGOS_ARG_DOUBLE 3      /* v.f: float, floating Scalar */
#define FLAGOS_ARG_BOOL 4        /* v.i is 0 or 1: bool, boolean Scalar */
#define FLAGOS_ARG_INT_LIST 5    /* v.ints */
#define FLAGOS_ARG_TENSOR_LIST 6 /* v.tensors */
#define FLAGOS_ARG_STRING 7      /* v.str */
#define FLAGOS_ARG_DTYPE 8       /* v.dtype: a ScalarType argument */

typedef struct flagos_kernel_arg {
  int32_t kind; /* FLAGOS_ARG_* */
  int32_t reserved0;
  union {
    const flagos_tensor_desc_t* tensor;
    int64_t i;
    double f;
    struct { const int64_t* data; size_t size; } ints;
    struct { const flagos_tensor_desc_t* const* data; size_t size; } tensors;
    const char* str;
    flagos_dtype_t dtype;
  } v;
} flagos_kernel_arg_t;

/* One invocation. Core-owned, valid during run() only. */
typedef struct flagos_kernel_call {
  size_t struct_size;
  flagos_device_t device;          /* all tensors live on this device */
  int32_t reserved0;
  flagos_stream_t stream;          /* enqueue the work here; do not synchronize */
  size_t num_args;
  const flagos_kernel_arg_t* args; /* every schema argument, out= tensors included */
} flagos_kernel_call_t;

typedef struct flagos_kernel {
  size_t struct_size;
  const char* schema; /* full ATen schema of an out= overload; process lifetime */
  /* Enqueues the kernel on call->stream. Thread-safe. Returns
   * FLAGOS_ERROR_UNSUPPORTED, before writing any output, for inputs it does
   * not handle (a dtype, a layout): the core then takes the op's next route. */
  flagos_status_t (*run)(const flagos_kernel_call_t* call);
  /* [optional, ABI 1.7] How often run() found its prepared work in the
   * kernel's own cache (hits) and how often it prepared anew (misses), since
   * the process started: e.g. an aclnn executor cache keyed by dtypes,
   * shapes, strides and scalar arguments. The core reports them for
   * FLAGOS_LOG=op_cache and torch_fl.op_cache_stats(). Thread-safe; the
   * counts may lag run() calls on other threads. NULL: nothing cached. */
  void (*cache_stats)(uint64_t* hits, uint64_t* misses);
} flagos_kernel_t;

typedef struct flagos_kernels_ext {
  flagos_extension_t base; /* type FLAGOS_EXTENSION_KERNELS */
  size_t num_kernels;
  const flagos_kernel_t* const* kernels; /* process lifetime */
} flagos_kernels_ext_t;

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* FLAGOS_EXT_KERNELS_H_ */
