// The ATen kernels every PrivateUse1 backend must provide itself: tensor
// creation over the flagos allocator, the metadata-only operations (views,
// resize_, set_) that must share storage rather than copy it, and
// record_stream (allocator bookkeeping the CPU fallback cannot express).
// None of them reads or writes device bytes from the host.
#include <ATen/EmptyTensor.h>
#include <ATen/TensorUtils.h>
#include <ATen/ops/as_strided_native.h>
#include <ATen/ops/_reshape_alias_native.h>
#include <ATen/ops/unfold_native.h>
#include <ATen/ops/view_as_complex_native.h>
#include <ATen/ops/view_as_real_native.h>
#include <ATen/ops/view_native.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include "device/device_allocator.h"
#include "device/storage_resize.h"

namespace flagos::aten {
namespace {

const c10::DispatchKeySet kFlagosKeys(c10::DispatchKey::PrivateUse1);

c10::Device target_device(std::optional<c10::Device> device) {
  if (device && device->has_index()) return *device;
  return c10::Device(c10::DeviceType::PrivateUse1,
                     c10::impl::getDeviceGuardImpl(c10::DeviceType::PrivateUse1)->getDevice().index());
}

at::Tensor empty_memory_format(at::IntArrayRef size, std::optional<at::ScalarType> dtype,
                               std::optional<at::Layout> layout, std::optional<at::Device> device,
                               std::optional<bool> pin_memory,
                               std::optional<at::MemoryFormat> memory_format) {
  TORCH_CHECK(!layout || *layout == at::kStrided, "[flagos] only strided tensors are supported, got layout ",
              *layout);
  TORCH_CHECK(!pin_memory || !*pin_memory, "Only dense CPU tensors can be pinned");
  c10::DeviceGuard guard(target_device(device));
  return at::detail::empty_generic(size, device::allocator(), kFlagosKeys,
                                   c10::dtype_or_default(dtype), memory_format);
}

at::Tensor empty_strided(at::IntArrayRef size, at::IntArrayRef stride,
                         std::optional<at::ScalarType> dtype, std::optional<at::Layout> layout,
                         std::optional<at::Device> device, std::optional<bool> pin_memory) {
  TORCH_CHECK(!layout || *layout == at::kStrided, "[flagos] only strided tensors are supported, got layout ",
              *layout);
  TORCH_CHECK(!pin_memory || !*pin_memory, "Only dense CPU tensors can be pinned");
  c10::DeviceGuard guard(target_device(device));
  return at::detail::empty_strided_generic(size, stride, device::allocator(), kFlagosKeys,
                                           c10::dtype_or_default(dtype));
}

// Makes `self` address `size`/`stride` at `offset` of its storage, growing
// the storage (by plugin copy) when it is too small.
void restride(at::Tensor& self, at::IntArrayRef size, std::optional<at::IntArrayRef> stride,
              int64_t offset) {
  auto* impl = self.unsafeGetTensorImpl();
  impl->set_storage_offset(offset);
  if (stride) {
    impl->set_sizes_and_strides(size, *stride);
  } else {
    impl->set_sizes_contiguous(size);
  }
  const size_t item = self.dtype().itemsize();
  const size_t needed = stride ? at::detail::computeStorageNbytes(size, *stride, item, offset)
                               : at::detail::computeStorageNbytesContiguous(size, item, offset);
  if (needed > self.storage().nbytes()) device::resize_storage_bytes(self.storage(), needed);
}

const at::Tensor& resize_(const at::Tensor& self, at::IntArrayRef size,
                          std::optional<at::MemoryFormat> memory_format) {
  at::Tensor t = self;
  c10::DeviceGuard guard(self.device());
  restride(t, size, std::nullopt, self.storage_offset());
  const auto format = memory_format.value_or(at::MemoryFormat::Contiguous);
  if (format != at::MemoryFormat::Preserve) {
    t.unsafeGetTensorImpl()->empty_tensor_restride(format);
    const size_t needed = at::detail::computeStorageNbytes(
        t.sizes(), t.strides(), t.dtype().itemsize(), t.storage_offset());
    if (needed > t.storage().nbytes()) device::resize_storage_bytes(t.storage(), needed);
  }
  return self;
}

at::Tensor& set_storage(at::Tensor& self, at::Storage source, int64_t offset, at::IntArrayRef size,
                        at::IntArrayRef stride) {
  TORCH_CHECK(source.device() == self.device() || !source.data(),
              "[flagos] set_: storage on ", source.device(), " cannot back a tensor on ", self.device());
  TORCH_CHECK(offset >= 0, "Tensor: invalid storage offset ", offset);
  if (!self.storage().is_alias_of(source))
    self.unsafeGetTensorImpl()->set_storage_keep_dtype(std::move(source));
  c10::DeviceGuard guard(self.device());
  if (stride.empty() && !size.empty()) {
    restride(self, size, std::nullopt, offset);
  } else {
    restride(self, size, stride, offset);
  }
  return self;
}

at::Tensor& set_source_storage(at::Tensor& self, at::Storage source) {
  const int64_t n = static_cast<int64_t>(source.nbytes() / self.dtype().itemsize());
  return set_storage(self, std::move(source), 0, {n}, {});
}

at::Tensor& set_source_tensor(at::Tensor& self, const at::Tensor& source) {
  if (self.is_same(source)) return self;
  return set_storage(self, source.storage(), source.storage_offset(), source.sizes(), source.strides());
}

at::Tensor& set_empty(at::Tensor& self) {
  c10::DeviceGuard guard(self.device());
  c10::Storage empty(c10::Storage::use_byte_size_t(), 0, device::allocator(), /*resizable=*/true);
  return set_storage(self, std::move(empty), 0, {0}, {});
}

// Tensor.record_stream(s): the block is not reused before `s`'s work queued
// so far is done.
void record_stream(at::Tensor& self, c10::Stream stream) {
  TORCH_CHECK(stream.device_type() == c10::DeviceType::PrivateUse1 &&
                  stream.device_index() == self.device().index(),
              "[flagos] record_stream: stream on ", stream.device(), " cannot use a tensor on ",
              self.device());
  device::record_stream(self.storage().data_ptr(), stream);
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("empty.memory_format", TORCH_FN(empty_memory_format));
  m.impl("empty_strided", TORCH_FN(empty_strided));
  m.impl("as_strided", TORCH_FN(at::native::as_strided_tensorimpl));
  m.impl("view", TORCH_FN(at::native::view));
  m.impl("_reshape_alias", TORCH_FN(at::native::_reshape_alias));
  m.impl("unfold", TORCH_FN(at::native::unfold));
  m.impl("view_as_real", TORCH_FN(at::native::view_as_real));
  m.impl("view_as_complex", TORCH_FN(at::native::view_as_complex));
  m.impl("resize_", TORCH_FN(resize_));
  m.impl("set_.source_Storage", TORCH_FN(set_source_storage));
  m.impl("set_.source_Storage_storage_offset", TORCH_FN(set_storage));
  m.impl("set_.source_Tensor", TORCH_FN(set_source_tensor));
  m.impl("set_", TORCH_FN(set_empty));
  m.impl("record_stream", TORCH_FN(record_stream));
}

}  // namespace
}  // namespace flagos::aten
