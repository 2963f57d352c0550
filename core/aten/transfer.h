// Moving tensor bytes between flagos and the host with plugin copies only:
// the core never dereferences device memory (the strict host plugin proves
// it). Everything below is stream-ordered on the device's current stream.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>

namespace flagos::aten {

// The bytes [begin, end) of its storage that `t`'s elements occupy.
struct Span {
  int64_t begin = 0;
  int64_t end = 0;
  int64_t size() const { return end - begin; }
};
Span span_of(const at::Tensor& t);

// Inline: every operand of every routed call is asked.
inline bool is_flagos(const at::Tensor& t) {
  return t.defined() && t.unsafeGetTensorImpl()->device_type() == c10::DeviceType::PrivateUse1;
}

// A host tensor with t's dtype, sizes and strides whose bytes equal t's
// (the span is downloaded). Returns once the bytes are on the host.
at::Tensor download(const at::Tensor& t);

// `t` with the conjugate and negative bits of `like` (lazy math views keep
// their meaning when their bytes move to another tensor).
at::Tensor copy_math_bits(at::Tensor t, const at::Tensor& like);
bool same_math_bits(const at::Tensor& a, const at::Tensor& b);

// t's values on the host: download() carrying t's conjugate/negative bits.
at::Tensor download_values(const at::Tensor& t);

// Raw byte transfers between a flagos storage region and host memory.
// device_to_host returns with the bytes written; host_to_device returns once
// the host bytes may be reused (the copy itself completes in stream order).
void device_to_host(void* host, const at::Tensor& device_tensor, int64_t byte_offset, int64_t bytes);
void host_to_device(const at::Tensor& device_tensor, int64_t byte_offset, const void* host, int64_t bytes);

// Writes `values` (any device, dtype, broadcastable shape, math bits) into
// the flagos tensor `dst`, honouring its strides and its conjugate/negative
// bits (what is stored is what makes dst read as `values`). `non_blocking`
// applies to pinned host sources only.
void write_into(const at::Tensor& dst, const at::Tensor& values, bool non_blocking = false);

// Same sizes, same strides, dense: one contiguous byte range each.
bool same_dense_layout(const at::Tensor& a, const at::Tensor& b);

}  // namespace flagos::aten
