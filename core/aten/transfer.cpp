#include "aten/transfer.h"

#include <ATen/ATen.h>
#include <c10/util/Exception.h>

#include "device/host_allocator.h"
#include "device/runtime.h"
#include "device/streams.h"

namespace flagos::aten {

Span span_of(const at::Tensor& t) {
  const int64_t item = static_cast<int64_t>(t.element_size());
  if (t.numel() == 0) return {t.storage_offset() * item, t.storage_offset() * item};
  int64_t last = t.storage_offset();
  for (int64_t d = 0; d < t.dim(); ++d) last += (t.size(d) - 1) * t.stride(d);
  return {t.storage_offset() * item, (last + 1) * item};
}

bool same_dense_layout(const at::Tensor& a, const at::Tensor& b) {
  return a.sizes() == b.sizes() && a.strides() == b.strides() &&
         a.is_non_overlapping_and_dense() && b.is_non_overlapping_and_dense();
}

namespace {

char* base_of(const at::Tensor& device_tensor) {
  return static_cast<char*>(device_tensor.storage().mutable_data());
}

}  // namespace

void device_to_host(void* host, const at::Tensor& t, int64_t byte_offset, int64_t bytes) {
  if (bytes <= 0) return;
  const auto& plugin = device::active_plugin();
  const auto device = t.device().index();
  plugin.check(plugin.api().memcpy_async(host, base_of(t) + byte_offset, bytes,
                                         FLAGOS_MEMCPY_DEVICE_TO_HOST, device::current_native(device)),
               "memcpy_async (device to host)");
  if (device::is_pinned(host)) {
    // Pinned destinations are asynchronous by contract: wait here.
    plugin.check(plugin.api().stream_synchronize(device::current_native(device)), "stream_synchronize");
  }
}

void host_to_device(const at::Tensor& t, int64_t byte_offset, const void* host, int64_t bytes) {
  if (bytes <= 0) return;
  const auto& plugin = device::active_plugin();
  const auto device = t.device().index();
  auto stream = device::current_stream(device);
  plugin.check(plugin.api().memcpy_async(base_of(t) + byte_offset, host, bytes,
                                         FLAGOS_MEMCPY_HOST_TO_DEVICE, device::native(stream)),
               "memcpy_async (host to device)");
  // Pageable sources are consumed when memcpy_async returns (ABI); pinned
  // ones must stay untouched until the copy ran.
  if (!device::record_host_use(host, stream) && device::is_pinned(host))
    plugin.check(plugin.api().stream_synchronize(device::native(stream)), "stream_synchronize");
}

at::Tensor download(const at::Tensor& t) {
  TORCH_INTERNAL_ASSERT(is_flagos(t));
  const Span span = span_of(t);
  const int64_t item = static_cast<int64_t>(t.element_size());
  auto buffer = at::empty({span.size() / item}, t.options().device(at::kCPU).pinned_memory(false));
  device_to_host(buffer.data_ptr(), t, span.begin, span.size());
  return buffer.as_strided(t.sizes(), t.strides(), 0);
}

at::Tensor copy_math_bits(at::Tensor t, const at::Tensor& like) {
  if (like.is_conj()) t._set_conj(true);
  if (like.is_neg()) t._set_neg(true);
  return t;
}

bool same_math_bits(const at::Tensor& a, const at::Tensor& b) {
  return a.is_conj() == b.is_conj() && a.is_neg() == b.is_neg();
}

at::Tensor download_values(const at::Tensor& t) { return copy_math_bits(download(t), t); }

void write_into(const at::Tensor& dst, const at::Tensor& values, bool non_blocking) {
  TORCH_INTERNAL_ASSERT(is_flagos(dst));
  const int64_t item = static_cast<int64_t>(dst.element_size());
  const Span span = span_of(dst);
  if (!is_flagos(values) && values.dtype() == dst.dtype() && same_math_bits(values, dst) &&
      same_dense_layout(values, dst)) {
    host_to_device(dst, span.begin, values.data_ptr(), span.size());
    (void)non_blocking;  // pinned sources were recorded on the stream above
    return;
  }
  // General case: stage dst's span on the host (keeps bytes between strided
  // elements), let the CPU copy_ do dtype/broadcast/strides/math bits,
  // upload the span.
  at::Tensor staged;
  if (dst.is_non_overlapping_and_dense()) {
    staged = at::empty({span.size() / item}, dst.options().device(at::kCPU))
                 .as_strided(dst.sizes(), dst.strides(), 0);
  } else {
    staged = download(dst);
  }
  copy_math_bits(staged, dst).copy_(is_flagos(values) ? download_values(values) : values);
  host_to_device(dst, span.begin, staged.storage().data(), span.size());
}

}  // namespace flagos::aten
