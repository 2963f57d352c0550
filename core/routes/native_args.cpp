#include "routes/native_args.h"

#include <ATen/core/Tensor.h>

#include "routes/boxed_args.h"

namespace flagos::routes {

bool to_flagos_dtype(c10::ScalarType type, flagos_dtype_t* out) {
  using c10::ScalarType;
  const uint16_t lanes = 1;
  switch (type) {
    case ScalarType::Float: *out = {FLAGOS_DTYPE_FLOAT, 32, lanes}; return true;
    case ScalarType::Double: *out = {FLAGOS_DTYPE_FLOAT, 64, lanes}; return true;
    case ScalarType::Half: *out = {FLAGOS_DTYPE_FLOAT, 16, lanes}; return true;
    case ScalarType::BFloat16: *out = {FLAGOS_DTYPE_BFLOAT, 16, lanes}; return true;
    case ScalarType::Long: *out = {FLAGOS_DTYPE_INT, 64, lanes}; return true;
    case ScalarType::Int: *out = {FLAGOS_DTYPE_INT, 32, lanes}; return true;
    case ScalarType::Short: *out = {FLAGOS_DTYPE_INT, 16, lanes}; return true;
    case ScalarType::Char: *out = {FLAGOS_DTYPE_INT, 8, lanes}; return true;
    case ScalarType::Byte: *out = {FLAGOS_DTYPE_UINT, 8, lanes}; return true;
    case ScalarType::Bool: *out = {FLAGOS_DTYPE_BOOL, 8, lanes}; return true;
    case ScalarType::ComplexFloat: *out = {FLAGOS_DTYPE_COMPLEX, 64, lanes}; return true;
    case ScalarType::ComplexDouble: *out = {FLAGOS_DTYPE_COMPLEX, 128, lanes}; return true;
    default: return false;
  }
}

namespace {

bool is_scalar_type(const c10::Argument& arg) {
  c10::TypePtr type = arg.type();
  if (auto opt = type->cast<c10::OptionalType>()) type = opt->getElementType();
  return type->kind() == c10::TypeKind::ScalarTypeType;
}

}  // namespace

const flagos_tensor_desc_t* KernelArgs::describe(const at::Tensor& t, int32_t device) {
  flagos_tensor_desc_t d{};
  d.struct_size = sizeof(flagos_tensor_desc_t);
  d.data = t.storage().mutable_data();
  d.byte_offset = static_cast<uint64_t>(t.storage_offset()) * t.element_size();
  to_flagos_dtype(t.scalar_type(), &d.dtype);
  d.device = device;
  d.ndim = static_cast<int32_t>(t.dim());
  ints_.emplace_back(t.sizes().begin(), t.sizes().end());
  d.shape = ints_.back().data();
  ints_.emplace_back(t.strides().begin(), t.strides().end());
  d.strides = ints_.back().data();
  descs_.push_back(d);
  return &descs_.back();
}

bool KernelArgs::add(const c10::IValue& v, const c10::Argument& arg, int32_t device) {
  flagos_kernel_arg_t a{};
  flagos_dtype_t unused;
  auto carryable = [&](const at::Tensor& t) {
    return is_flagos(t) && t.device().index() == device && !t.is_conj() && !t.is_neg() &&
           to_flagos_dtype(t.scalar_type(), &unused);
  };
  if (v.isNone()) {
    a.kind = FLAGOS_ARG_NONE;
  } else if (v.isTensor()) {
    if (!carryable(v.toTensor())) return false;
    a.kind = FLAGOS_ARG_TENSOR;
    a.v.tensor = describe(v.toTensor(), device);
  } else if (v.isInt() && is_scalar_type(arg)) {
    a.kind = FLAGOS_ARG_DTYPE;
    if (!to_flagos_dtype(static_cast<c10::ScalarType>(v.toInt()), &a.v.dtype)) return false;
  } else if (v.isBool()) {
    a.kind = FLAGOS_ARG_BOOL;
    a.v.i = v.toBool();
  } else if (v.isInt() || v.isSymInt()) {
    a.kind = FLAGOS_ARG_INT;
    a.v.i = v.isInt() ? v.toInt() : v.toSymInt().guard_int(__FILE__, __LINE__);
  } else if (v.isDouble()) {
    a.kind = FLAGOS_ARG_DOUBLE;
    a.v.f = v.toDouble();
  } else if (v.isIntList()) {
    ints_.emplace_back(v.toIntVector());
    a.kind = FLAGOS_ARG_INT_LIST;
    a.v.ints = {ints_.back().data(), ints_.back().size()};
  } else if (v.isTensorList()) {
    lists_.emplace_back();
    for (const at::Tensor& t : v.toTensorList()) {
      if (!carryable(t)) return false;
      lists_.back().push_back(describe(t, device));
    }
    a.kind = FLAGOS_ARG_TENSOR_LIST;
    a.v.tensors = {lists_.back().data(), lists_.back().size()};
  } else if (v.isString()) {
    strings_.emplace_back(v.toStringRef());
    a.kind = FLAGOS_ARG_STRING;
    a.v.str = strings_.back().c_str();
  } else {
    return false;  // Device, Layout, Generator, complex Scalar...: not in the ABI
  }
  args_.push_back(a);
  return true;
}

}  // namespace flagos::routes
