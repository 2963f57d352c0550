#include "aten/host_mirror.h"

#include <ATen/ATen.h>

#include <algorithm>

#include "aten/transfer.h"

namespace flagos::aten {

HostMirrors::Entry* HostMirrors::find(const at::Tensor& t) {
  for (auto& e : entries_)
    if (e.device_ref.storage().is_alias_of(t.storage())) return &e;
  return nullptr;
}

void HostMirrors::note(const at::Tensor& t) {
  const Span span = span_of(t);
  if (Entry* e = find(t)) {
    e->begin = std::min(e->begin, span.begin);
    e->end = std::max(e->end, span.end);
    return;
  }
  entries_.push_back(Entry{t, span.begin, span.end, {}, false});
}

void HostMirrors::download() {
  for (auto& e : entries_) {
    e.buffer = at::empty({e.end - e.begin}, at::TensorOptions().dtype(at::kByte));
    device_to_host(e.buffer.data_ptr(), e.device_ref, e.begin, e.end - e.begin);
  }
}

namespace {

// Conjugate / negative views keep their lazy bit on the other side, so a
// kernel that handles the bit itself (mm, copy_, ...) reads the same values.
at::Tensor with_math_bits(at::Tensor view, const at::Tensor& like) {
  if (like.is_conj()) view._set_conj(true);
  if (like.is_neg()) view._set_neg(true);
  return view;
}

bool same_geometry(const at::Tensor& a, const at::Tensor& b) {
  return a.sizes() == b.sizes() && a.strides() == b.strides() && a.storage_offset() == b.storage_offset();
}


// What a CPU kernel may look at besides the bytes: the lazy math bits, and
// requires_grad (backend choices such as _fused_sdp_choice read it).
at::Tensor as_operand(at::Tensor view, const at::Tensor& like) {
  view = with_math_bits(std::move(view), like);
  if (like.requires_grad()) view.unsafeGetTensorImpl()->set_requires_grad(true);
  return view;
}

}  // namespace

at::Tensor HostMirrors::host_view(const at::Tensor& t) {
  Entry* e = find(t);
  TORCH_INTERNAL_ASSERT(e && e->buffer.defined(), "[flagos] host_view of a tensor not noted");
  const int64_t item = static_cast<int64_t>(t.element_size());
  const int64_t offset = t.storage_offset() * item - e->begin;
  // Mixed dtypes, misaligned: a private copy.
  if (offset % item != 0) return as_operand(aten::download(t), t);
  return as_operand(at::empty({0}, t.options().device(at::kCPU))
                        .set_(e->buffer.storage(), offset / item, t.sizes(), t.strides()),
                    t);
}

void HostMirrors::mark_written(const at::Tensor& device_tensor, const at::Tensor& host) {
  Entry* e = find(device_tensor);
  // Still inside the mirror (the kernel neither grew nor replaced the
  // storage): the device tensor takes the host view's geometry, which covers
  // an in-place re-view (transpose_, as_strided_, a shrinking resize_).
  const bool in_mirror = e && host.storage().is_alias_of(e->buffer.storage()) &&
                         host.storage().nbytes() == static_cast<size_t>(e->end - e->begin);
  at::Tensor view = in_mirror ? device_view_of(host) : at::Tensor();
  if (!view.defined()) {
    resized_.emplace_back(device_tensor, host);
    return;
  }
  e->written = true;
  if (!same_geometry(view, device_tensor))
    device_tensor.unsafeGetTensorImpl()->set_sizes_and_strides(view.sizes(), view.strides(),
                                                               view.storage_offset());
}

void HostMirrors::upload() {
  for (auto& e : entries_)
    if (e.written) host_to_device(e.device_ref, e.begin, e.buffer.data_ptr(), e.end - e.begin);
  for (auto& [device_tensor, host] : resized_) {
    if (device_tensor.sizes() != host.sizes()) device_tensor.resize_(host.sizes());
    write_into(device_tensor, host);
  }
}

at::Tensor HostMirrors::device_view_of(const at::Tensor& host) const {
  for (const auto& e : entries_) {
    if (!e.buffer.defined() || !host.storage().is_alias_of(e.buffer.storage())) continue;
    const int64_t item = static_cast<int64_t>(host.element_size());
    const int64_t byte_offset = host.storage_offset() * item + e.begin;
    if (byte_offset % item != 0) return {};
    return with_math_bits(at::empty({0}, e.device_ref.options().dtype(host.dtype()))
                              .set_(e.device_ref.storage(), byte_offset / item, host.sizes(), host.strides()),
                          host);
  }
  return {};
}

}  // namespace flagos::aten
