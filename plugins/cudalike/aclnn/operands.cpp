#include "aclnn/operands.h"

#include <cstring>

#include "flagos/abi_sizes.h"
#include "flagos/kit/last_error.hpp"

namespace flagos_cudalike::aclnn {
namespace {

using flagos::kit::fail;

// aclDataType of a flagos dtype, or -1.
int data_type_of(flagos_dtype_t d) {
  if (d.lanes != 1) return -1;
  switch (d.code) {
    case FLAGOS_DTYPE_FLOAT: return d.bits == 32 ? kFloat : d.bits == 16 ? kFloat16 : d.bits == 64 ? kDouble : -1;
    case FLAGOS_DTYPE_BFLOAT: return d.bits == 16 ? kBfloat16 : -1;
    case FLAGOS_DTYPE_INT:
      return d.bits == 8 ? kInt8 : d.bits == 16 ? kInt16 : d.bits == 32 ? kInt32 : d.bits == 64 ? kInt64 : -1;
    case FLAGOS_DTYPE_UINT: return d.bits == 8 ? kUint8 : -1;
    case FLAGOS_DTYPE_BOOL: return kBool;
    default: return -1;
  }
}

template <class T>
void append(std::string* key, const T& value) {
  key->append(reinterpret_cast<const char*>(&value), sizeof value);
}

flagos_status_t read_tensor(const char* fn, const flagos_kernel_call_t* call, size_t index, TensorOperand* t,
                            std::string* key) {
  const flagos_kernel_arg_t& a = call->args[index];
  if (a.kind != FLAGOS_ARG_TENSOR || a.v.tensor == nullptr)
    return fail(FLAGOS_ERROR_INVALID_ARGUMENT, "%s: argument %zu is not a tensor", fn, index);
  const flagos_tensor_desc_t* d = a.v.tensor;
  if (d->struct_size < FLAGOS_TENSOR_DESC_SIZE_1_0 || d->ndim < 0 || (d->ndim > 0 && (!d->shape || !d->strides)))
    return fail(FLAGOS_ERROR_INVALID_ARGUMENT, "%s: argument %zu has a malformed tensor descriptor", fn, index);
  if (d->device != call->device)
    return fail(FLAGOS_ERROR_INVALID_ARGUMENT, "%s: argument %zu is on device %d, the call on device %d", fn,
                index, d->device, call->device);
  t->desc = d;
  t->data_type = data_type_of(d->dtype);
  if (t->data_type < 0)
    return fail(FLAGOS_ERROR_UNSUPPORTED, "%s: argument %zu has a dtype with no aclDataType", fn, index);
  int64_t last = 0;
  for (int32_t i = 0; i < d->ndim; ++i) {
    if (d->strides[i] < 0)
      return fail(FLAGOS_ERROR_UNSUPPORTED, "%s: argument %zu has a negative stride", fn, index);
    t->numel *= d->shape[i];
    last += (d->shape[i] - 1) * d->strides[i];
  }
  t->storage_elements = t->numel == 0 ? 0 : last + 1;
  t->storage = static_cast<char*>(d->data) + d->byte_offset;
  append(key, t->data_type);
  append(key, d->ndim);
  for (int32_t i = 0; i < d->ndim; ++i) {
    append(key, d->shape[i]);
    append(key, d->strides[i]);
  }
  return FLAGOS_SUCCESS;
}

flagos_status_t read_alpha(const char* fn, const flagos_kernel_arg_t& a, Operands* out) {
  switch (a.kind) {
    case FLAGOS_ARG_INT:
    case FLAGOS_ARG_BOOL:
      out->alpha_int = a.v.i;
      out->alpha_type = kInt64;
      append(&out->key, a.v.i);
      break;
    case FLAGOS_ARG_DOUBLE:
      out->alpha_double = a.v.f;
      out->alpha_type = kDouble;
      append(&out->key, a.v.f);
      break;
    default: return fail(FLAGOS_ERROR_INVALID_ARGUMENT, "%s: alpha is not a scalar", fn);
  }
  append(&out->key, out->alpha_type);
  return FLAGOS_SUCCESS;
}

}  // namespace

flagos_status_t read_operands(const char* fn, Shape shape, const flagos_kernel_call_t* call, Operands* out) {
  if (call == nullptr || call->struct_size < FLAGOS_KERNEL_CALL_SIZE_1_0 || call->args == nullptr ||
      call->num_args != num_args(shape))
    return fail(FLAGOS_ERROR_INVALID_ARGUMENT, "%s: the call does not carry %zu arguments", fn, num_args(shape));
  out->inputs.resize(num_inputs(shape));
  for (size_t i = 0; i < out->inputs.size(); ++i)
    if (flagos_status_t st = read_tensor(fn, call, i, &out->inputs[i], &out->key); st != FLAGOS_SUCCESS) return st;
  if (shape == Shape::kBinaryAlpha)
    if (flagos_status_t st = read_alpha(fn, call->args[2], out); st != FLAGOS_SUCCESS) return st;
  return read_tensor(fn, call, call->num_args - 1, &out->out, &out->key);
}

namespace {

// The bytes [lo, hi) a tensor's elements span.
void byte_span(const TensorOperand& t, uintptr_t* lo, uintptr_t* hi) {
  *lo = reinterpret_cast<uintptr_t>(t.storage);
  *hi = *lo + static_cast<uintptr_t>(t.storage_elements) * (t.desc->dtype.bits / 8);
}

bool same_layout(const TensorOperand& a, const TensorOperand& b) {
  if (a.storage != b.storage || a.data_type != b.data_type || a.desc->ndim != b.desc->ndim) return false;
  for (int32_t i = 0; i < a.desc->ndim; ++i)
    if (a.desc->shape[i] != b.desc->shape[i] || a.desc->strides[i] != b.desc->strides[i]) return false;
  return true;
}

}  // namespace

bool out_overlaps_input(Shape shape, const Operands& o) {
  uintptr_t out_lo = 0, out_hi = 0;
  byte_span(o.out, &out_lo, &out_hi);
  for (const TensorOperand& in : o.inputs) {
    uintptr_t lo = 0, hi = 0;
    byte_span(in, &lo, &hi);
    if (lo >= out_hi || out_lo >= hi) continue;
    if (shape == Shape::kMatmul || !same_layout(in, o.out)) return true;
  }
  return false;
}

aclTensor* create_tensor(const Library& lib, const TensorOperand& t) {
  const flagos_tensor_desc_t& d = *t.desc;
  const int64_t storage_dims[1] = {t.storage_elements};
  return lib.create_tensor(d.shape, static_cast<uint64_t>(d.ndim), t.data_type, d.strides, 0, kFormatNd,
                           storage_dims, 1, t.storage);
}

}  // namespace flagos_cudalike::aclnn
